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
// 32-bit Roaring bitmap. Offsets arrive in ascending order; runs are added
// with AddRange, isolated nulls are batched through AddMany.
type nullRecorder struct {
	bm       *roaring.Bitmap
	pend     []uint32
	runStart uint64
	runEnd   uint64 // runStart == runEnd: no pending run
}

const (
	nullRunMin  = 8    // runs at least this long go straight to AddRange
	nullPendMax = 4096 // flush pending single offsets at this size
)

func newNullRecorder() *nullRecorder { return &nullRecorder{bm: roaring.New()} }

// addRun records null rows [start, end) (global row offsets < 2^32).
func (n *nullRecorder) addRun(start, end uint64) {
	if start >= end {
		return
	}
	if start == n.runEnd && n.runStart != n.runEnd {
		n.runEnd = end
		return
	}
	n.flushRun()
	n.runStart, n.runEnd = start, end
}

func (n *nullRecorder) flushRun() {
	if n.runStart == n.runEnd {
		return
	}
	if n.runEnd-n.runStart >= nullRunMin {
		n.flushPend()
		n.bm.AddRange(n.runStart, n.runEnd)
	} else {
		for r := n.runStart; r < n.runEnd; r++ {
			n.pend = append(n.pend, uint32(r))
		}
		if len(n.pend) >= nullPendMax {
			n.flushPend()
		}
	}
	n.runStart, n.runEnd = 0, 0
}

func (n *nullRecorder) flushPend() {
	if len(n.pend) > 0 {
		n.bm.AddMany(n.pend)
		n.pend = n.pend[:0]
	}
}

// bitmap flushes everything pending and returns the bitmap.
func (n *nullRecorder) bitmap() *roaring.Bitmap {
	n.flushRun()
	n.flushPend()
	return n.bm
}

func (n *nullRecorder) reset() {
	n.bm = roaring.New()
	n.pend = n.pend[:0]
	n.runStart, n.runEnd = 0, 0
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
		n := hi - r
		if n > 64 {
			n = 64
		}
		nw := ^loadBits(vb, off+r) & lowMask(n)
		if nw == 0 {
			continue
		}
		count += uint64(bits.OnesCount64(nw))
		for nw != 0 {
			tz := bits.TrailingZeros64(nw)
			run := bits.TrailingZeros64(^(nw >> uint(tz)))
			start := base + uint64(r+tz)
			nr.addRun(start, start+uint64(run))
			if tz+run >= 64 {
				break
			}
			nw &^= lowMask(tz + run) // clear bits [0, tz+run)
		}
	}
	return count
}
