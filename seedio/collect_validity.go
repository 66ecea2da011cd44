package seedio

// Validity-bitmap scanning and null-offset recording shared by the
// per-type accumulators.

import (
	"encoding/binary"
	"math/bits"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
)

// nullRecorder collects the local row offsets of null rows (R41, R45) into a
// 32-bit Roaring bitmap. Offsets arrive in ascending order. The nulls of the
// current 2^16-row chunk are kept as dense bits (8 KiB, constant memory) so
// that a validity word costs two ORs however many nulls it holds; a finished
// chunk is converted to a Roaring container in bulk. Whole null chunks go
// straight to AddRange.
type nullRecorder struct {
	bm    *roaring.Bitmap
	words [chunkWords]uint64 // null bits of chunk key
	key   uint64
	dirty bool
}

const (
	chunkBits  = 16
	chunkRows  = 1 << chunkBits
	chunkWords = chunkRows / 64
)

func newNullRecorder() *nullRecorder { return &nullRecorder{bm: roaring.New()} }

// switchChunk makes key the current chunk, flushing the previous one.
func (n *nullRecorder) switchChunk(key uint64) {
	if key != n.key {
		n.flush()
		n.key = key
	}
}

// orBits marks row pos+i null for every set bit i of w.
func (n *nullRecorder) orBits(pos, w uint64) {
	if w == 0 {
		return
	}
	n.switchChunk(pos >> chunkBits)
	bit := pos & (chunkRows - 1)
	wi, sh := bit>>6, bit&63
	n.words[wi] |= w << sh
	n.dirty = true
	if sh == 0 {
		return
	}
	if hi := w >> (64 - sh); hi != 0 {
		if wi+1 < chunkWords {
			n.words[wi+1] |= hi
		} else {
			n.switchChunk(n.key + 1)
			n.words[0] |= hi
			n.dirty = true
		}
	}
}

// addRun records null rows [start, end) (global row offsets <= 2^32).
func (n *nullRecorder) addRun(start, end uint64) {
	for start < end {
		key := start >> chunkBits
		chunkEnd := (key + 1) << chunkBits
		e := min(end, chunkEnd)
		if start&(chunkRows-1) == 0 && e == chunkEnd {
			n.flush() // keep chunks in ascending order
			n.bm.AddRange(start, e)
			start = e
			continue
		}
		for start < e {
			k := min(e-start, 64)
			n.orBits(start, lowMask(int(k)))
			start += k
		}
	}
}

// flush converts the dense chunk into Roaring containers.
func (n *nullRecorder) flush() {
	if !n.dirty {
		return
	}
	c := roaring.FromDense(n.words[:], true)
	if n.key != 0 {
		c = roaring.AddOffset64(c, int64(n.key<<chunkBits))
	}
	n.bm.Or(c)
	clear(n.words[:])
	n.dirty = false
}

// bitmap flushes everything pending and returns the bitmap.
func (n *nullRecorder) bitmap() *roaring.Bitmap {
	n.flush()
	return n.bm
}

func (n *nullRecorder) reset() {
	n.bm = roaring.New()
	clear(n.words[:])
	n.key, n.dirty = 0, false
}

// validity returns the validity bitmap bytes and the bit offset of row 0 of
// arr, or nil when arr has no validity bitmap.
func validity(arr arrow.Array) ([]byte, int) {
	bufs := arr.Data().Buffers()
	if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() == 0 {
		return nil, 0
	}
	return bufs[0].Bytes(), arr.Data().Offset()
}

// loadBits returns 64 validity bits starting at bit position pos of b. Bits
// past the end of b read as 1 (valid); callers mask what is beyond their range.
func loadBits(b []byte, pos int) uint64 {
	i := pos >> 3
	shift := uint(pos & 7)
	if i+9 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		if shift != 0 {
			w = w>>shift | uint64(b[i+8])<<(64-shift)
		}
		return w
	}
	var tmp [9]byte
	for k := range tmp {
		tmp[k] = 0xFF
		if i+k < len(b) {
			tmp[k] = b[i+k]
		}
	}
	w := binary.LittleEndian.Uint64(tmp[:])
	if shift != 0 {
		w = w>>shift | uint64(tmp[8])<<(64-shift)
	}
	return w
}

// lowMask returns a word with the low n bits set (0 <= n <= 64).
func lowMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<uint(n) - 1
}

// recordValidityNulls records the null rows among rows [lo, hi) of an array
// with validity bitmap vb (bit offset off), as global offsets base+row, and
// returns how many there are.
func recordValidityNulls(vb []byte, off, lo, hi int, base uint64, nr *nullRecorder) uint64 {
	var count uint64
	for r := lo; r < hi; r += 64 {
		nw := ^loadBits(vb, off+r) & lowMask(hi-r)
		if nw != 0 {
			count += uint64(bits.OnesCount64(nw))
			nr.orBits(base+uint64(r), nw)
		}
	}
	return count
}

// nullsAndStretches scans the validity bitmap vb (bit offset off) over rows
// [lo, hi) once: it records the null rows as global offsets base+row, calls
// fn(s, e) for every maximal run [s, e) of valid rows, and returns the number
// of null rows.
func nullsAndStretches(vb []byte, off, lo, hi int, base uint64, nr *nullRecorder, fn func(s, e int)) uint64 {
	var count uint64
	start := lo // start of the current valid stretch
	for r := lo; r < hi; r += 64 {
		n := min(hi-r, 64)
		nw := ^loadBits(vb, off+r) & lowMask(n)
		if nw == 0 {
			continue
		}
		count += uint64(bits.OnesCount64(nw))
		nr.orBits(base+uint64(r), nw)
		for nw != 0 {
			tz := bits.TrailingZeros64(nw)
			if r+tz > start {
				fn(start, r+tz)
			}
			run := bits.TrailingZeros64(^(nw >> uint(tz))) // nulls at [tz, tz+run)
			start = r + tz + run
			if tz+run >= 64 {
				break
			}
			nw &^= lowMask(tz + run)
		}
	}
	if hi > start {
		fn(start, hi)
	}
	return count
}
