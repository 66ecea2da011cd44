package codec

import (
	"encoding/binary"
	"unsafe"

	"github.com/lancekeeper/lancekeeper/datafile/internal/pb21"
)

// FastLanes (§7.3): a block of 1024 values of T bits is packed to W·L
// words of T bits, L = 1024/T lanes. Value `row` of lane `lane` is element
// order[row/8]*16 + (row%8)*128 + lane of the block, so for a fixed row the
// lanes are contiguous in the output: the loops below run over lanes.

type word interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

var fastlanesOrder = [8]uint{0, 4, 2, 6, 1, 5, 3, 7}

func bitsOf[T word]() uint { var z T; return uint(unsafe.Sizeof(z)) * 8 }

// unpackBlock unpacks W·L words of in into the 1024 values of out.
func unpackBlock[T word](in []T, out []T, w uint) {
	tb := bitsOf[T]()
	l := 1024 / tb
	out = out[:1024]
	if w == 0 {
		clear(out)
		return
	}
	in = in[:w*l]
	mask := ^T(0)
	if w < tb {
		mask = T(1)<<w - 1
	}
	for row := uint(0); row < tb; row++ {
		bit := row * w
		k, s := bit/tb, bit%tb
		base := fastlanesOrder[row/8]*16 + (row%8)*128
		o := out[base : base+l : base+l]
		lo := in[k*l : k*l+l : k*l+l]
		if s+w > tb {
			hi := in[(k+1)*l : (k+1)*l+l : (k+1)*l+l]
			hi = hi[:len(o)]
			lo = lo[:len(o)]
			for lane := range o {
				o[lane] = (lo[lane]>>s | hi[lane]<<(tb-s)) & mask
			}
		} else {
			lo = lo[:len(o)]
			for lane := range o {
				o[lane] = (lo[lane] >> s) & mask
			}
		}
	}
}

// packBlock packs the 1024 values of in (each < 2^w) into W·L words of out.
func packBlock[T word](in []T, out []T, w uint) {
	tb := bitsOf[T]()
	l := 1024 / tb
	in = in[:1024]
	out = out[:w*l]
	clear(out)
	if w == 0 {
		return
	}
	mask := ^T(0)
	if w < tb {
		mask = T(1)<<w - 1
	}
	for row := uint(0); row < tb; row++ {
		bit := row * w
		k, s := bit/tb, bit%tb
		base := fastlanesOrder[row/8]*16 + (row%8)*128
		src := in[base : base+l : base+l]
		lo := out[k*l : k*l+l : k*l+l]
		lo = lo[:len(src)]
		for lane := range src {
			lo[lane] |= (src[lane] & mask) << s
		}
		if s+w > tb {
			hi := out[(k+1)*l : (k+1)*l+l : (k+1)*l+l]
			hi = hi[:len(src)]
			for lane := range src {
				hi[lane] |= (src[lane] & mask) >> (tb - s)
			}
		}
	}
}

// loadWords reads len(dst) little-endian words of T from src.
func loadWords[T word](dst []T, src []byte) {
	switch tb := bitsOf[T](); tb {
	case 8:
		for i := range dst {
			dst[i] = T(src[i])
		}
	case 16:
		src = src[:2*len(dst)]
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint16(src[2*i:]))
		}
	case 32:
		src = src[:4*len(dst)]
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint32(src[4*i:]))
		}
	default:
		src = src[:8*len(dst)]
		for i := range dst {
			dst[i] = T(binary.LittleEndian.Uint64(src[8*i:]))
		}
	}
}

// storeWords appends the little-endian bytes of src to dst.
func storeWords[T word](dst []byte, src []T) []byte {
	switch tb := bitsOf[T](); tb {
	case 8:
		for _, v := range src {
			dst = append(dst, byte(v))
		}
	case 16:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		}
	case 32:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		}
	default:
		for _, v := range src {
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

// asBytes views a word slice as its bytes in host order; littleEndianHost
// says whether that is the file's order.
func asBytes[T word](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	tb := bitsOf[T]() / 8
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), uint(len(s))*tb)
	if !littleEndianHost() {
		for i := 0; i+int(tb) <= len(b); i += int(tb) {
			for x, y := i, i+int(tb)-1; x < y; x, y = x+1, y-1 {
				b[x], b[y] = b[y], b[x]
			}
		}
	}
	return b
}

func littleEndianHost() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// fromBytes copies n little-endian words of T out of src into a new slice
// padded with zeros to a multiple of 1024.
func fromBytes[T word](src []byte, n int) []T {
	out := make([]T, (n+1023)/1024*1024)
	loadWords(out[:n], src)
	return out
}

// inlineChunks decodes consecutive inline-bitpacked chunks ([W word][W·L
// words]) holding n values of T bits (§7.3).
func inlineChunks[T word](d *decoder, enc *pb21.CompressiveEncoding, buf []byte, n uint64) (Block, error) {
	tb := uint64(bitsOf[T]())
	blocks := (n + 1023) / 1024
	size, ok := mulOK(blocks, 1024*tb/8)
	if !ok {
		return Block{}, d.errf(ErrLimit, enc, "%d values", n)
	}
	if err := d.take(size, "inline_bitpacking"); err != nil {
		return Block{}, err
	}
	out := make([]T, blocks*1024)
	in := make([]T, 1024)
	for b := uint64(0); b < blocks; b++ {
		if uint64(len(buf)) < tb/8 {
			return Block{}, d.errf(ErrCorrupt, enc, "chunk %d has no width word", b)
		}
		var w uint64
		switch tb {
		case 8:
			w = uint64(buf[0])
		case 16:
			w = uint64(binary.LittleEndian.Uint16(buf))
		case 32:
			w = uint64(binary.LittleEndian.Uint32(buf))
		default:
			w = binary.LittleEndian.Uint64(buf)
		}
		buf = buf[tb/8:]
		if w > tb {
			return Block{}, d.errf(ErrCorrupt, enc, "chunk %d: bit width %d over %d", b, w, tb)
		}
		words := w * (1024 / tb)
		if uint64(len(buf)) < words*tb/8 {
			return Block{}, d.errf(ErrCorrupt, enc, "chunk %d: %d packed bytes needed, %d present", b, words*tb/8, len(buf))
		}
		loadWords(in[:words], buf)
		buf = buf[words*tb/8:]
		unpackBlock(in, out[b*1024:], uint(w))
	}
	data := asBytes(out)[:n*tb/8]
	return Block{Kind: Fixed, Num: n, Bits: tb, Data: data}, nil
}

func (d *decoder) inlineBitpacking(enc *pb21.CompressiveEncoding, ib *pb21.InlineBitpacking, buf []byte, n uint64) (Block, error) {
	if ib.Values != nil {
		return Block{}, d.errf(ErrUnsupported, enc, "compressed bit-packed buffer (never written by Lance 12)")
	}
	switch ib.UncompressedBitsPerValue {
	case 8:
		return inlineChunks[uint8](d, enc, buf, n)
	case 16:
		return inlineChunks[uint16](d, enc, buf, n)
	case 32:
		return inlineChunks[uint32](d, enc, buf, n)
	case 64:
		return inlineChunks[uint64](d, enc, buf, n)
	}
	return Block{}, d.errf(ErrUnsupported, enc, "uncompressed width %d (only 8, 16, 32, 64)", ib.UncompressedBitsPerValue)
}

// outOfLine decodes ⌊n/1024⌋ FastLanes blocks without width words, then the
// tail: a packed block or r raw words, decided by the length (§7.4, T14).
func outOfLineT[T word](d *decoder, enc *pb21.CompressiveEncoding, w uint64, buf []byte, n uint64) (Block, error) {
	tb := uint64(bitsOf[T]())
	if w > tb {
		return Block{}, d.errf(ErrCorrupt, enc, "bit width %d over %d", w, tb)
	}
	l := 1024 / tb
	full, r := n/1024, n%1024
	blockBytes := w * l * tb / 8
	fullBytes, ok := mulOK(full, blockBytes)
	if !ok || fullBytes > uint64(len(buf)) {
		return Block{}, d.errf(ErrCorrupt, enc, "%d blocks of %d bytes in %d bytes", full, blockBytes, len(buf))
	}
	rest := uint64(len(buf)) - fullBytes
	// Raw tail iff exactly r words are left; otherwise one packed block.
	raw := r > 0 && rest == r*tb/8
	if r > 0 && !raw && rest < blockBytes {
		return Block{}, d.errf(ErrCorrupt, enc, "tail of %d values in %d bytes (neither %d raw nor %d packed)", r, rest, r*tb/8, blockBytes)
	}
	blocks := (n + 1023) / 1024
	size, ok := mulOK(blocks, 1024*tb/8)
	if !ok {
		return Block{}, d.errf(ErrLimit, enc, "%d values", n)
	}
	if err := d.take(size, "out_of_line_bitpacking"); err != nil {
		return Block{}, err
	}
	out := make([]T, blocks*1024)
	in := make([]T, w*l)
	for b := uint64(0); b < full; b++ {
		loadWords(in, buf[b*blockBytes:])
		unpackBlock(in, out[b*1024:], uint(w))
	}
	if r > 0 {
		tail := buf[fullBytes:]
		if raw {
			loadWords(out[full*1024:full*1024+r], tail)
		} else {
			loadWords(in, tail)
			unpackBlock(in, out[full*1024:], uint(w))
		}
	}
	return Block{Kind: Fixed, Num: n, Bits: tb, Data: asBytes(out)[:n*tb/8]}, nil
}

func (d *decoder) outOfLine(enc *pb21.CompressiveEncoding, o *pb21.OutOfLineBitpacking, buf []byte, n uint64) (Block, error) {
	f := o.GetValues().GetFlat()
	if f == nil || f.Data != nil {
		return Block{}, d.errf(ErrUnsupported, enc, "packed values must be flat")
	}
	w := f.BitsPerValue
	switch o.UncompressedBitsPerValue {
	case 8:
		return outOfLineT[uint8](d, enc, w, buf, n)
	case 16:
		return outOfLineT[uint16](d, enc, w, buf, n)
	case 32:
		return outOfLineT[uint32](d, enc, w, buf, n)
	case 64:
		return outOfLineT[uint64](d, enc, w, buf, n)
	}
	return Block{}, d.errf(ErrUnsupported, enc, "uncompressed width %d (only 8, 16, 32, 64)", o.UncompressedBitsPerValue)
}
