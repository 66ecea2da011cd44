package seedio

// Bounds and NaN counts of Float16/32/64 columns: IEEE 754 totalOrder on bit
// patterns (R29, R50, §4.3), NaNs excluded from bounds (R30, R31) and counted
// by sign (R25, R26), signed zeros widened (R39).

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
)

type floatBits interface{ uint16 | uint32 | uint64 }

// floatAcc works on raw bit patterns K. Running bounds are totalOrder keys;
// all-ones and zero keys are NaN keys, so they serve as identities for min and
// max without colliding with an ordinary value.
type floatAcc[K floatBits] struct {
	bitsOf     func(arrow.Array) []K
	toValue    func(K) any
	shift      uint // sign bit position
	inf        K    // bit pattern of +Inf
	mnK, mxK   K
	mins, maxs []K // bit patterns per zone, R39 applied unless exact
	known      []bool
	exact      bool // CollectorOptions.ExactZeros
}

func (a *floatAcc[K]) setExactZeros() { a.exact = true }

// setExactZeros turns R39 widening off in a float accumulator (also under
// a dictionary); other accumulators have nothing to widen.
func setExactZeros(acc accumulator) {
	var a any = acc
	if d, ok := a.(*dictAcc); ok {
		a = d.inner
	}
	if z, ok := a.(interface{ setExactZeros() }); ok {
		z.setExactZeros()
	}
}

func newFloatAcc[K floatBits](bitsOf func(arrow.Array) []K, shift uint, toValue func(K) any) *floatAcc[K] {
	// +Inf: exponent all ones, mantissa zero. Exponent widths 5, 8, 11.
	infBits := map[uint]uint64{15: 0x7C00, 31: 0x7F80_0000, 63: 0x7FF0_0000_0000_0000}[shift]
	inf := K(infBits)
	return &floatAcc[K]{bitsOf: bitsOf, toValue: toValue, shift: shift, inf: inf, mnK: ^K(0), mxK: 0}
}

func (a *floatAcc[K]) observe(arr arrow.Array, lo, hi int, z *zoneCounts, nr *nullRecorder, base uint64) {
	vals := a.bitsOf(arr)
	vb, off := validity(arr)
	var nans, negs uint64
	if vb == nil || arr.NullN() == 0 {
		a.mnK, a.mxK, nans, negs = floatScan(vals[lo:hi], a.shift, a.inf, a.mnK, a.mxK)
		z.nans += nans
		z.negNaNs += negs
		return
	}
	mnK, mxK := a.mnK, a.mxK
	if useAVX512 && a.shift == 63 && (off+lo)%8 == 0 {
		// Byte-aligned validity: one masked SIMD pass counts NaNs and folds
		// the ordinary values; a separate pass over the validity words
		// records the nulls.
		nulls := recordValidityNulls(vb, off, lo, hi, base, nr)
		z.nulls += nulls
		if nulls < uint64(hi-lo) {
			var out [16]int64
			nn, ng := minmaxF64MaskedAVX512((*uint64)(unsafe.Pointer(&vals[lo])), hi-lo, &vb[(off+lo)/8], &out)
			for i := 0; i < 8; i++ {
				mnK = min(mnK, K(uint64(out[i])^(1<<63)))
				mxK = max(mxK, K(uint64(out[8+i])^(1<<63)))
			}
			a.mnK, a.mxK = mnK, mxK
			z.nans += uint64(nn)
			z.negNaNs += uint64(ng)
		}
		return
	}
	z.nulls += nullsAndStretches(vb, off, lo, hi, base, nr, func(s, e int) {
		var nn, ng uint64
		mnK, mxK, nn, ng = floatScan(vals[s:e], a.shift, a.inf, mnK, mxK)
		nans += nn
		negs += ng
	})
	a.mnK, a.mxK = mnK, mxK
	z.nans += nans
	z.negNaNs += negs
}

// floatScan folds the bit patterns vals (all non-null) into the key bounds
// and returns the NaN counts. Float64 uses the AVX2 kernel when available.
func floatScan[K floatBits](vals []K, shift uint, inf K, mnK, mxK K) (K, K, uint64, uint64) {
	if !useAVX2 || shift != 63 || len(vals) < 4 {
		return floatScanGo(vals, shift, inf, mnK, mxK)
	}
	var nans, negs uint64
	for len(vals) >= 4 {
		mS, xS, done := kernelMinMaxF64((*uint64)(unsafe.Pointer(unsafe.SliceData(vals))), len(vals))
		// signed transform -> unsigned totalOrder key: flip the sign bit.
		mnK = min(mnK, K(uint64(mS)^(1<<63)))
		mxK = max(mxK, K(uint64(xS)^(1<<63)))
		vals = vals[done:]
		if len(vals) == 0 {
			break
		}
		// the next step holds a NaN: take up to 16 values here
		k := min(16, len(vals))
		var nn, ng uint64
		mnK, mxK, nn, ng = floatScanGo(vals[:k], shift, inf, mnK, mxK)
		nans += nn
		negs += ng
		vals = vals[k:]
	}
	var nn, ng uint64
	mnK, mxK, nn, ng = floatScanGo(vals, shift, inf, mnK, mxK)
	return mnK, mxK, nans + nn, negs + ng
}

// floatScanGo is the portable loop of floatScan.
func floatScanGo[K floatBits](vals []K, shift uint, inf K, mnK, mxK K) (K, K, uint64, uint64) {
	signBit := K(1) << shift
	abs := ^signBit
	var nans, negs uint64
	m0, m1, x0, x1 := mnK, mnK, mxK, mxK
	i := 0
	for ; i+4 <= len(vals); i += 4 {
		v := vals[i : i+4 : i+4]
		b0, b1, b2, b3 := v[0], v[1], v[2], v[3]
		if max(b0&abs, b1&abs, b2&abs, b3&abs) > inf {
			// At least one NaN among the four: take them one by one.
			for _, b := range v {
				if b&abs > inf {
					nans++
					negs += uint64(b >> shift)
					continue
				}
				k := b ^ ((K(0) - b>>shift) | signBit)
				m0 = min(m0, k)
				x0 = max(x0, k)
			}
			continue
		}
		k0 := b0 ^ ((K(0) - b0>>shift) | signBit)
		k1 := b1 ^ ((K(0) - b1>>shift) | signBit)
		k2 := b2 ^ ((K(0) - b2>>shift) | signBit)
		k3 := b3 ^ ((K(0) - b3>>shift) | signBit)
		m0 = min(m0, k0, k2)
		x0 = max(x0, k0, k2)
		m1 = min(m1, k1, k3)
		x1 = max(x1, k1, k3)
	}
	for ; i < len(vals); i++ {
		b := vals[i]
		if b&abs > inf {
			nans++
			negs += uint64(b >> shift)
			continue
		}
		k := b ^ ((K(0) - b>>shift) | signBit)
		m0 = min(m0, k)
		x0 = max(x0, k)
	}
	return min(m0, m1), max(x0, x1), nans, negs
}

func (a *floatAcc[K]) observeAt(values arrow.Array, idx []int, z *zoneCounts) {
	vals := a.bitsOf(values)
	signBit := K(1) << a.shift
	for _, i := range idx {
		b := vals[i]
		if b&^signBit > a.inf {
			z.nans++
			z.negNaNs += uint64(b >> a.shift)
			continue
		}
		k := b ^ ((K(0) - b>>a.shift) | signBit)
		a.mnK = min(a.mnK, k)
		a.mxK = max(a.mxK, k)
	}
}

func (a *floatAcc[K]) fromKey(k K) K {
	signBit := K(1) << a.shift
	return k ^ ((K(0) - (^k)>>a.shift) | signBit)
}

func (a *floatAcc[K]) closeZone(ordinary bool) {
	signBit := K(1) << a.shift
	mn, mx := a.fromKey(a.mnK), a.fromKey(a.mxK)
	if mn == 0 && !a.exact { // exact minimum +0.0: widen to -0.0 (R39)
		mn = signBit
	}
	if mx == signBit && !a.exact { // exact maximum -0.0: widen to +0.0 (R39)
		mx = 0
	}
	a.mins = append(a.mins, mn)
	a.maxs = append(a.maxs, mx)
	a.known = append(a.known, ordinary)
	a.mnK, a.mxK = ^K(0), 0
}

func (a *floatAcc[K]) zoneBounds(i int) (any, any) {
	if !a.known[i] {
		return nil, nil
	}
	return a.toValue(a.mins[i]), a.toValue(a.maxs[i])
}

// fillBounds sets the bounds of every zone, boxed with two allocations: the
// bit patterns K have the memory layout of the value type toValue returns.
func (a *floatAcc[K]) fillBounds(zones []Zone) {
	proto := a.toValue(0)
	mins, maxs := boxShared(proto, a.mins), boxShared(proto, a.maxs)
	for i := range zones {
		if a.known[i] {
			zones[i].Min, zones[i].Max = mins[i], maxs[i]
		}
	}
}

func (a *floatAcc[K]) reset() {
	a.mins, a.maxs, a.known = a.mins[:0], a.maxs[:0], a.known[:0]
	a.mnK, a.mxK = ^K(0), 0
}

// kernelMinMaxF64 runs the widest available float64 kernel over p[0:n]
// (n >= 4); see minmaxF64AVX2.
func kernelMinMaxF64(p *uint64, n int) (mn, mx int64, done int) {
	if useAVX512 && n >= 8 {
		var out [16]int64
		done = minmaxF64AVX512(p, n, &out)
		mn, mx = out[0], out[8]
		for i := 1; i < 8; i++ {
			mn, mx = min(mn, out[i]), max(mx, out[8+i])
		}
		return mn, mx, done
	}
	return minmaxF64AVX2(p, n)
}
