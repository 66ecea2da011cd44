package codec

import "unsafe"

// arena hands out the output buffers of one decode call. With reuse off it
// simply allocates; with reuse on (Decoder.Reuse) it bumps through one
// buffer that the next call on the same Decoder overwrites. Buffers are
// 8-byte aligned and not necessarily zeroed.
type arena struct {
	buf []byte
	off int
}

func (d *decoder) alloc(n uint64) []byte {
	if d.arena == nil {
		return make([]byte, n)
	}
	a := d.arena
	off := (a.off + 7) &^ 7
	if uint64(len(a.buf)-off) < n || off > len(a.buf) {
		size := max(2*len(a.buf), int(n)+7, 1<<16)
		a.buf = make([]byte, size) // earlier slices of this call stay valid
		off = 0
	}
	a.off = off + int(n)
	return a.buf[off : off+int(n) : off+int(n)]
}

// allocWords is alloc viewed as n words of T (8-byte aligned).
func allocWords[T word](d *decoder, n uint64) []T {
	if n == 0 {
		return nil
	}
	b := d.alloc(n * uint64(bitsOf[T]()/8))
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
