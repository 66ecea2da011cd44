package seedio

// Bounds of integer-like columns: signed and unsigned integers, dates,
// times, timestamps, durations and Decimal32/64 — all ordered as the integer
// they store (§4.1). Decimal128/256 use cmpAcc.

import (
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
)

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intLimits returns the smallest and largest value of T.
func intLimits[T integer]() (lo, hi T) {
	var zero T
	allOnes := ^zero
	if allOnes > 0 { // unsigned
		return 0, allOnes
	}
	lo = T(1) << (8*unsafe.Sizeof(zero) - 1)
	return lo, ^lo
}

// intAcc accumulates bounds of an integer-like column.
type intAcc[T integer] struct {
	values     func(arrow.Array) []T
	neutralMin T // largest T: identity for min
	neutralMax T // smallest T: identity for max
	mn, mx     T // running bounds of the open zone
	mins, maxs []T
	// minOK/maxOK: bound known (the zone had ordinary values and the bound
	// is a valid value of the type).
	minOK, maxOK []bool
	fits         func(T) bool // optional bound validity check (decimal precision, R38/E19)
}

func newIntAcc[T integer](values func(arrow.Array) []T) *intAcc[T] {
	lo, hi := intLimits[T]()
	a := &intAcc[T]{values: values, neutralMin: hi, neutralMax: lo}
	a.mn, a.mx = hi, lo
	return a
}

func (a *intAcc[T]) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	vals := a.values(arr)
	vb, off := validity(arr)
	if vb == nil || arr.NullN() == 0 {
		a.mn, a.mx = minMaxInts(vals[lo:hi], a.mn, a.mx)
		return
	}
	mn, mx := a.mn, a.mx
	if useAVX512 && unsafe.Sizeof(mn) == 8 && (off+lo)%8 == 0 {
		// Byte-aligned validity: one masked SIMD pass over the values and a
		// separate pass over the validity words for the nulls.
		nulls := recordValidityNulls(vb, off, lo, hi, base, nr)
		z.nulls += nulls
		if nulls < uint64(hi-lo) {
			var flip int64
			if ^T(0) > 0 {
				flip = math.MinInt64
			}
			var out [16]int64
			minmax64MaskedAVX512((*int64)(unsafe.Pointer(&vals[lo])), hi-lo, &vb[(off+lo)/8], flip, &out)
			for i := 0; i < 8; i++ {
				mn, mx = min(mn, T(out[i]^flip)), max(mx, T(out[8+i]^flip))
			}
			a.mn, a.mx = mn, mx
		}
		return
	}
	z.nulls += nullsAndStretches(vb, off, lo, hi, base, nr, func(s, e int) {
		mn, mx = minMaxInts(vals[s:e], mn, mx)
	})
	a.mn, a.mx = mn, mx
}

func (a *intAcc[T]) observeAt(values arrow.Array, idx []int, _ *zoneCounts) {
	vals := a.values(values)
	mn, mx := a.mn, a.mx
	for _, i := range idx {
		v := vals[i]
		mn = min(mn, v)
		mx = max(mx, v)
	}
	a.mn, a.mx = mn, mx
}

func (a *intAcc[T]) closeZone(ordinary bool) {
	a.mins = append(a.mins, a.mn)
	a.maxs = append(a.maxs, a.mx)
	a.minOK = append(a.minOK, ordinary && (a.fits == nil || a.fits(a.mn)))
	a.maxOK = append(a.maxOK, ordinary && (a.fits == nil || a.fits(a.mx)))
	a.mn, a.mx = a.neutralMin, a.neutralMax
}

func (a *intAcc[T]) zoneBounds(i int) (any, any) {
	var mn, mx any
	if a.minOK[i] {
		mn = a.mins[i]
	}
	if a.maxOK[i] {
		mx = a.maxs[i]
	}
	return mn, mx
}

// fillBounds sets the bounds of every zone, boxed with two allocations.
func (a *intAcc[T]) fillBounds(zones []Zone) {
	var zero T
	mins, maxs := boxShared(any(zero), a.mins), boxShared(any(zero), a.maxs)
	for i := range zones {
		if a.minOK[i] {
			zones[i].Min = mins[i]
		}
		if a.maxOK[i] {
			zones[i].Max = maxs[i]
		}
	}
}

func (a *intAcc[T]) reset() {
	a.mins, a.maxs, a.minOK, a.maxOK = a.mins[:0], a.maxs[:0], a.minOK[:0], a.maxOK[:0]
	a.mn, a.mx = a.neutralMin, a.neutralMax
}

// minMaxInts folds vals into (mn, mx) with four independent accumulator
// pairs so that the branch-free min/max instructions pipeline.
func minMaxInts[T integer](vals []T, mn, mx T) (T, T) {
	var zero T
	if useAVX2 && unsafe.Sizeof(zero) == 8 && len(vals) >= 4 {
		// 64-bit lanes: AVX2 kernel; unsigned values are compared as signed
		// after flipping the sign bit.
		var flip int64
		if ^zero > 0 {
			flip = math.MinInt64
		}
		m, x := kernelMinMax64((*int64)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals), flip)
		return min(mn, T(m^flip)), max(mx, T(x^flip))
	}
	m0, m1, m2, m3 := mn, mn, mn, mn
	x0, x1, x2, x3 := mx, mx, mx, mx
	i := 0
	for ; i+8 <= len(vals); i += 8 {
		v := vals[i : i+8 : i+8]
		m0 = min(m0, v[0], v[4])
		x0 = max(x0, v[0], v[4])
		m1 = min(m1, v[1], v[5])
		x1 = max(x1, v[1], v[5])
		m2 = min(m2, v[2], v[6])
		x2 = max(x2, v[2], v[6])
		m3 = min(m3, v[3], v[7])
		x3 = max(x3, v[3], v[7])
	}
	for ; i < len(vals); i++ {
		m0 = min(m0, vals[i])
		x0 = max(x0, vals[i])
	}
	return min(m0, m1, m2, m3), max(x0, x1, x2, x3)
}

// cmpAcc accumulates bounds of a type compared with a less function
// (Decimal128, Decimal256: signed two's complement, §4.1).
type cmpAcc[T any] struct {
	values       func(arrow.Array) []T
	less         func(x, y T) bool
	fits         func(T) bool // optional validity check of a bound (decimal precision, E19)
	have         bool
	mn, mx       T
	mins, maxs   []T
	minOK, maxOK []bool
}

func (a *cmpAcc[T]) take(v T) {
	if !a.have {
		a.mn, a.mx, a.have = v, v, true
		return
	}
	if a.less(v, a.mn) {
		a.mn = v
	}
	if a.less(a.mx, v) {
		a.mx = v
	}
}

func (a *cmpAcc[T]) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	vals := a.values(arr)
	vb, off := validity(arr)
	if vb == nil || arr.NullN() == 0 {
		for _, v := range vals[lo:hi] {
			a.take(v)
		}
		return
	}
	z.nulls += recordValidityNulls(vb, off, lo, hi, base, nr)
	for r := lo; r < hi; r++ {
		if vb[(off+r)>>3]>>uint((off+r)&7)&1 != 0 {
			a.take(vals[r])
		}
	}
}

func (a *cmpAcc[T]) observeAt(values arrow.Array, idx []int, _ *zoneCounts) {
	vals := a.values(values)
	for _, i := range idx {
		a.take(vals[i])
	}
}

func (a *cmpAcc[T]) closeZone(ordinary bool) {
	ok := ordinary && a.have
	a.mins = append(a.mins, a.mn)
	a.maxs = append(a.maxs, a.mx)
	a.minOK = append(a.minOK, ok && (a.fits == nil || a.fits(a.mn)))
	a.maxOK = append(a.maxOK, ok && (a.fits == nil || a.fits(a.mx)))
	a.have = false
}

func (a *cmpAcc[T]) zoneBounds(i int) (any, any) {
	var mn, mx any
	if a.minOK[i] {
		mn = a.mins[i]
	}
	if a.maxOK[i] {
		mx = a.maxs[i]
	}
	return mn, mx
}

func (a *cmpAcc[T]) reset() {
	a.mins, a.maxs, a.minOK, a.maxOK = a.mins[:0], a.maxs[:0], a.minOK[:0], a.maxOK[:0]
	a.have = false
}

// kernelMinMax64 folds p[0:n] (n >= 4), each XORed with flip, into signed
// min/max with the widest available SIMD kernel.
func kernelMinMax64(p *int64, n int, flip int64) (int64, int64) {
	if useAVX512 && n >= 8 {
		var out [16]int64
		minmax64AVX512(p, n, flip, &out)
		mn, mx := out[0], out[8]
		for i := 1; i < 8; i++ {
			mn, mx = min(mn, out[i]), max(mx, out[8+i])
		}
		return mn, mx
	}
	return minmax64AVX2(p, n, flip)
}
