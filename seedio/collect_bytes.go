package seedio

// Bounds of string and binary columns: unsigned bytewise order (§4.1),
// truncated per §6.2 when longer than the configured length.

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/lancekeeper/lancekeeper/internal/truncate"
)

// bytesAcc accumulates bounds of Utf8/LargeUtf8/Utf8View (isString),
// Binary/LargeBinary/BinaryView and FixedSizeBinary (truncate = false).
//
// During a zone it keeps owned copies of the exact extrema; inside one batch
// segment the running candidates point into the batch and are copied once at
// the end of the segment, so the cost per value is one or two comparisons of
// 8-byte big-endian prefix keys.
type bytesAcc struct {
	isString bool
	truncate bool
	maxBound int

	have           bool
	minBuf, maxBuf []byte // exact extrema of the open zone (owned)
	minKey, maxKey uint64 // prefixKey of minBuf / maxBuf

	arena              []byte   // bounds of the closed zones, after truncation
	mins, maxs         [][2]int // per zone: range of its bound in arena
	minKnown, maxKnown []bool
}

// prefixKey returns the first 8 bytes of data[s:e] as a big-endian integer,
// zero-padded. If prefixKey(a) < prefixKey(b) then a < b bytewise; equal
// keys need a full comparison.
func prefixKey(data []byte, s, e int) uint64 {
	if e-s >= 8 {
		return binary.BigEndian.Uint64(data[s : s+8])
	}
	if s+8 <= len(data) {
		return binary.BigEndian.Uint64(data[s:s+8]) &^ (^uint64(0) >> (8 * uint(e-s)))
	}
	var k uint64
	for j := s; j < e; j++ {
		k |= uint64(data[j]) << (56 - 8*uint(j-s))
	}
	return k
}

func prefixKeyOf(v []byte) uint64 { return prefixKey(v, 0, len(v)) }

// setFirst makes v (copied) the only value seen so far in the open zone.
func (a *bytesAcc) setFirst(v []byte) {
	a.minBuf = append(a.minBuf[:0], v...)
	a.maxBuf = append(a.maxBuf[:0], v...)
	a.minKey = prefixKeyOf(v)
	a.maxKey = a.minKey
	a.have = true
}

// offsetScan folds rows [lo, hi) of an offsets-based string/binary array,
// recording its nulls (validity vb at bit offset off) and returning their
// number. The nulls are recorded from the validity words in one pass; the
// values are then scanned in one piece, null slots included: a null slot is
// looked at only when its prefix key makes it a candidate (an empty slot
// always is), and then skipped by its validity bit, so that nulls do not cut
// the scan into short stretches.
func offsetScan[O int32 | int64](a *bytesAcc, data []byte, offs []O, vb []byte, off, lo, hi int, base uint64, nr *nullRecorder) uint64 {
	var nulls uint64
	if vb != nil {
		nulls = recordValidityNulls(vb, off, lo, hi, base, nr)
	}
	s := lo
	if !a.have {
		for s < hi && vb != nil && vb[(off+s)>>3]>>uint((off+s)&7)&1 == 0 {
			s++
		}
		if s == hi {
			return nulls
		}
		a.setFirst(data[offs[s]:offs[s+1]])
		s++
	}
	if s == hi {
		return nulls
	}
	st := extremaScan{minS: a.minBuf, maxS: a.maxBuf, minK: a.minKey, maxK: a.maxKey}
	scanOffsets(&st, data, offs[s:hi+1], vb, off+s)
	if st.minNew {
		a.minBuf = append(a.minBuf[:0], st.minS...)
		a.minKey = st.minK
	}
	if st.maxNew {
		a.maxBuf = append(a.maxBuf[:0], st.maxS...)
		a.maxKey = st.maxK
	}
	return nulls
}

// extremaScan holds the running extrema of a scan; minS/maxS may point into
// the batch until the scan ends.
type extremaScan struct {
	minS, maxS     []byte
	minK, maxK     uint64
	minNew, maxNew bool
}

// scanOffsets folds the values delimited by offs (len(offs)-1 values) into
// st, skipping null ones: value j-1…j is row bit+j-1 of the validity bitmap
// vb (nil: all valid). The hot loop (nextCandidate) only looks for values
// that may change the extrema; those, and values near the end of the data
// buffer, are then compared in full here.
func scanOffsets[O int32 | int64](st *extremaScan, data []byte, offs []O, vb []byte, bit int) {
	base := unsafe.Pointer(unsafe.SliceData(data))
	n := uint(len(data))
	for j := 1; j < len(offs); j++ {
		j = nextCandidate(base, n, offs, j, st.minK, st.maxK, len(st.minS) == 0, vb, bit)
		if j >= len(offs) {
			return
		}
		if p := bit + j - 1; vb != nil && vb[p>>3]>>uint(p&7)&1 == 0 {
			continue // a null slot
		}
		s, e := int(offs[j-1]), int(offs[j])
		v := data[s:e]
		k := prefixKey(data, s, e)
		if k < st.minK || (k == st.minK && bytes.Compare(v, st.minS) < 0) {
			st.minS, st.minK, st.minNew = v, k, true
		}
		if k > st.maxK || (k == st.maxK && bytes.Compare(v, st.maxS) > 0) {
			st.maxS, st.maxK, st.maxNew = v, k, true
		}
	}
}

// nextCandidate returns the first j' >= j such that value j'-1…j' (between
// offs[j'-1] and offs[j']) may change the extrema minK/maxK (the prefix keys
// of the running min and max; minEmpty: the running min is the empty
// value), or lies within 8 bytes of the end of the data. It returns
// len(offs) when there is none.
//
// A value is skipped when its 8-byte big-endian prefix key k (zero-padded)
// lies strictly between minK and maxK: then it is strictly between the min
// and the max bytewise. With 32-bit offsets on a CPU with AVX-512 VBMI, a
// kernel tests eight values per step (nextCandidateVBMI); otherwise one at a
// time (nextCandidateKey).
//
// vb and bit are the validity of the values (value j-1…j is row bit+j-1;
// vb nil: all valid): the kernel does not stop at a null slot (an empty
// one would otherwise be a candidate while the min is not empty); the
// caller skips null slots it is given anyway.
func nextCandidate[O int32 | int64](base unsafe.Pointer, n uint, offs []O, j int, minK, maxK uint64, minEmpty bool, vb []byte, bit int) int {
	if useVBMI && unsafe.Sizeof(offs[0]) == 4 {
		// Skipped: lo <= k < maxK. Once the min is empty, a value with k ==
		// minK == 0 (the empty value, or one of zero bytes) cannot change
		// the min either (ties keep the first), so it is skipped too.
		lo := minK + 1
		if minEmpty {
			lo = minK
		}
		if minK != math.MaxUint64 && maxK > lo {
			o32 := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(offs))), len(offs))
			return nextCandidateVBMI(base, n, o32, j, minK, maxK, lo, maxK-lo, vb, bit)
		}
	}
	return nextCandidateKey(base, n, offs, j, minK, maxK)
}

// nextCandidateVBMI is nextCandidate with the AVX-512 VBMI kernel
// (prefixFilterVBMI): the kernel skips values while it can (eight at a time,
// with at least eight values left and 128 bytes of data from the first
// one's start); the value it stops at is then checked alone.
func nextCandidateVBMI(base unsafe.Pointer, n uint, offs []int32, j int, minK, maxK, lo, span uint64, vb []byte, bit int) int {
	vp := unsafe.Pointer(unsafe.SliceData(vb))
	for j < len(offs) {
		if len(offs)-j >= 8 {
			j += prefixFilterVBMI((*byte)(base), int(n), &offs[j-1], len(offs)-j, lo, span, (*byte)(vp), len(vb), bit+j-1)
			if j >= len(offs) {
				return j
			}
		}
		if nextCandidateKey(base, n, offs[:j+1], j, minK, maxK) == j {
			return j
		}
		j++
	}
	return j
}

// nextCandidateKey is nextCandidate with the prefix-key filter only.
func nextCandidateKey[O int32 | int64](base unsafe.Pointer, n uint, offs []O, j int, minK, maxK uint64) int {
	for ; j < len(offs); j++ {
		s, e := int(offs[j-1]), int(offs[j])
		if s < 0 || uint(s)+8 > n {
			return j // the caller's bounds-checked comparison takes it
		}
		k := bits.ReverseBytes64(*(*uint64)(unsafe.Add(base, s)))
		if e-s < 8 {
			k &^= ^uint64(0) >> (8 * uint(e-s))
		}
		if k <= minK || k >= maxK {
			return j
		}
	}
	return j
}

// consider folds one value (not retained) into the open zone.
func (a *bytesAcc) consider(v []byte) {
	if !a.have {
		a.setFirst(v)
		return
	}
	k := prefixKeyOf(v)
	if k < a.minKey || (k == a.minKey && bytes.Compare(v, a.minBuf) < 0) {
		a.minBuf = append(a.minBuf[:0], v...)
		a.minKey = k
	}
	if k > a.maxKey || (k == a.maxKey && bytes.Compare(v, a.maxBuf) > 0) {
		a.maxBuf = append(a.maxBuf[:0], v...)
		a.maxKey = k
	}
}

// stringBytes views s as bytes without copying; the result must not be
// modified or retained.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// getter returns a per-row accessor for any supported byte-like array.
func bytesGetter(arr arrow.Array) func(i int) []byte {
	switch a := arr.(type) {
	case *array.String:
		return func(i int) []byte { return stringBytes(a.Value(i)) }
	case *array.LargeString:
		return func(i int) []byte { return stringBytes(a.Value(i)) }
	case *array.StringView:
		return func(i int) []byte { return stringBytes(a.Value(i)) }
	case *array.Binary:
		return a.Value
	case *array.LargeBinary:
		return a.Value
	case *array.BinaryView:
		return a.Value
	case *array.FixedSizeBinary:
		return a.Value
	}
	return nil
}

// dataBuffer returns the values buffer of an offsets-based array (may be
// nil when every value is empty).
func dataBuffer(arr arrow.Array) []byte {
	bufs := arr.Data().Buffers()
	if len(bufs) < 3 || bufs[2] == nil {
		return nil
	}
	return bufs[2].Bytes()
}

func (a *bytesAcc) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	vb, off := validity(arr)
	if vb != nil && arr.NullN() == 0 {
		vb = nil
	}
	switch t := arr.(type) {
	case *array.String:
		z.nulls += offsetScan(a, dataBuffer(arr), t.ValueOffsets(), vb, off, lo, hi, base, nr)
		return
	case *array.Binary:
		z.nulls += offsetScan(a, dataBuffer(arr), t.ValueOffsets(), vb, off, lo, hi, base, nr)
		return
	case *array.LargeString:
		z.nulls += offsetScan(a, dataBuffer(arr), t.ValueOffsets(), vb, off, lo, hi, base, nr)
		return
	case *array.LargeBinary:
		z.nulls += offsetScan(a, dataBuffer(arr), t.ValueOffsets(), vb, off, lo, hi, base, nr)
		return
	}
	if vb != nil {
		z.nulls += recordValidityNulls(vb, off, lo, hi, base, nr)
	}
	get := bytesGetter(arr)
	for i := lo; i < hi; i++ {
		if vb != nil && vb[(off+i)>>3]>>uint((off+i)&7)&1 == 0 {
			continue
		}
		a.consider(get(i))
	}
}

func (a *bytesAcc) observeAt(values arrow.Array, idx []int, _ *zoneCounts) {
	get := bytesGetter(values)
	for _, i := range idx {
		a.consider(get(i))
	}
}

func (a *bytesAcc) closeZone(ordinary bool) {
	var mn, mx []byte
	mnOK, mxOK := false, false
	if ordinary && a.have {
		switch {
		case !a.truncate:
			mn, mnOK = a.minBuf, true
			mx, mxOK = a.maxBuf, true
		case a.isString:
			mn, mnOK = a.minBuf, true
			if len(mn) > a.maxBound {
				mn = []byte(truncate.MinString(string(mn), a.maxBound))
			}
			mx, mxOK = a.maxBuf, true
			if len(mx) > a.maxBound {
				var t string
				t, mxOK = truncate.MaxString(string(mx), a.maxBound, max(HardCapBoundBytes, a.maxBound))
				mx = []byte(t)
			}
		default:
			mn, mnOK = truncate.MinBinary(a.minBuf, a.maxBound), true
			mx, mxOK = truncate.MaxBinary(a.maxBuf, a.maxBound, max(HardCapBoundBytes, a.maxBound))
		}
		if a.isString {
			// R38: string bounds must be valid UTF-8. Input that is not gives
			// an unknown bound rather than an invalid one.
			mnOK = mnOK && utf8.Valid(mn)
			mxOK = mxOK && utf8.Valid(mx)
		}
	}
	// The bounds are appended to one arena (reused from file to file), not
	// cloned one by one; Finish copies the arena once (fillBounds).
	var mnAt, mxAt [2]int
	if mnOK {
		mnAt = [2]int{len(a.arena), len(a.arena) + len(mn)}
		a.arena = append(a.arena, mn...)
	}
	if mxOK {
		mxAt = [2]int{len(a.arena), len(a.arena) + len(mx)}
		a.arena = append(a.arena, mx...)
	}
	a.mins = append(a.mins, mnAt)
	a.maxs = append(a.maxs, mxAt)
	a.minKnown = append(a.minKnown, mnOK)
	a.maxKnown = append(a.maxKnown, mxOK)
	a.have = false
}

func (a *bytesAcc) zoneBounds(i int) (any, any) {
	return a.boundValue(a.mins[i], a.minKnown[i]), a.boundValue(a.maxs[i], a.maxKnown[i])
}

// boundValue returns a copy of the bound at arena range at (nil: unknown).
func (a *bytesAcc) boundValue(at [2]int, ok bool) any {
	if !ok {
		return nil
	}
	b := a.arena[at[0]:at[1]]
	if a.isString {
		return string(b)
	}
	return append([]byte{}, b...)
}

// fillBounds sets the bounds of every zone from one copy of the arena:
// strings share one allocation, and so do their interface values.
func (a *bytesAcc) fillBounds(zones []Zone) {
	own := append([]byte{}, a.arena...) // non-nil even when empty
	if a.isString {
		all := unsafe.String(unsafe.SliceData(own), len(own))
		vals := make([]string, 2*len(zones))
		for i := range zones {
			vals[2*i] = all[a.mins[i][0]:a.mins[i][1]]
			vals[2*i+1] = all[a.maxs[i][0]:a.maxs[i][1]]
		}
		a.setBounds(zones, boxShared(any(""), vals))
		return
	}
	vals := make([][]byte, 2*len(zones))
	for i := range zones {
		vals[2*i] = own[a.mins[i][0]:a.mins[i][1]:a.mins[i][1]]
		vals[2*i+1] = own[a.maxs[i][0]:a.maxs[i][1]:a.maxs[i][1]]
	}
	a.setBounds(zones, boxShared(any([]byte(nil)), vals))
}

func (a *bytesAcc) setBounds(zones []Zone, boxed []any) {
	for i := range zones {
		if a.minKnown[i] {
			zones[i].Min = boxed[2*i]
		}
		if a.maxKnown[i] {
			zones[i].Max = boxed[2*i+1]
		}
	}
}

func (a *bytesAcc) reset() {
	a.arena, a.mins, a.maxs = a.arena[:0], a.mins[:0], a.maxs[:0]
	a.minKnown, a.maxKnown = a.minKnown[:0], a.maxKnown[:0]
	a.have = false
}
