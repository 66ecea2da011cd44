package seedio

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/lancekeeper/lancekeeper/internal/floatorder"
)

// The SIMD kernels (when the CPU has them) and the portable loops must agree
// with a plain reference on every length and alignment (R29, R50).
func TestR50_MinMaxKernelsMatchReference(t *testing.T) {
	t.Logf("AVX2 kernels in use: %v, AVX-512: %v", useAVX2, useAVX512)
	rng := rand.New(rand.NewPCG(5, 50))
	buf := make([]int64, 400)
	ubuf := make([]uint64, 400)
	for iter := 0; iter < 3000; iter++ {
		n := rng.IntN(300)
		off := rng.IntN(8)
		for i := range buf {
			switch rng.IntN(8) {
			case 0:
				buf[i] = math.MinInt64
			case 1:
				buf[i] = math.MaxInt64
			default:
				buf[i] = int64(rng.Uint64()) >> rng.IntN(64)
			}
			ubuf[i] = uint64(buf[i])
		}
		vals := buf[off : off+n]
		wantMn, wantMx := int64(math.MaxInt64), int64(math.MinInt64)
		for _, v := range vals {
			wantMn, wantMx = min(wantMn, v), max(wantMx, v)
		}
		mn, mx := minMaxInts(vals, int64(math.MaxInt64), int64(math.MinInt64))
		if mn != wantMn || mx != wantMx {
			t.Fatalf("int64 n=%d off=%d: %d..%d, want %d..%d", n, off, mn, mx, wantMn, wantMx)
		}
		uvals := ubuf[off : off+n]
		wantUMn, wantUMx := uint64(math.MaxUint64), uint64(0)
		for _, v := range uvals {
			wantUMn, wantUMx = min(wantUMn, v), max(wantUMx, v)
		}
		umn, umx := minMaxInts(uvals, uint64(math.MaxUint64), 0)
		if umn != wantUMn || umx != wantUMx {
			t.Fatalf("uint64 n=%d: %d..%d, want %d..%d", n, umn, umx, wantUMn, wantUMx)
		}
		// floats: bit patterns with NaNs of both signs at random places
		fb := ubuf[off : off+n]
		for i := range fb {
			switch rng.IntN(40) {
			case 0:
				fb[i] = 0x7FF8_0000_0000_0000 | rng.Uint64()&0xF_FFFF
			case 1:
				fb[i] = 0xFFF0_0000_0000_0001
			case 2:
				fb[i] = 0x8000_0000_0000_0000
			case 3:
				fb[i] = 0
			default:
				fb[i] = math.Float64bits(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20)))
			}
		}
		var wantNaN, wantNeg uint64
		wantKMn, wantKMx := ^uint64(0), uint64(0)
		for _, b := range fb {
			if floatorder.IsNaN64(b) {
				wantNaN++
				if b>>63 != 0 {
					wantNeg++
				}
				continue
			}
			k := floatorder.Key64(b)
			wantKMn, wantKMx = min(wantKMn, k), max(wantKMx, k)
		}
		kmn, kmx, nans, negs := floatScan(fb, 63, uint64(0x7FF0_0000_0000_0000), ^uint64(0), 0)
		if kmn != wantKMn || kmx != wantKMx || nans != wantNaN || negs != wantNeg {
			t.Fatalf("float64 n=%d: keys %#x..%#x nan %d/%d, want %#x..%#x nan %d/%d",
				n, kmn, kmx, nans, negs, wantKMn, wantKMx, wantNaN, wantNeg)
		}
	}
}

// Each SIMD kernel on its own (not only the one dispatch picks), every length
// from its minimum up, NaNs at every position of the last steps.
func TestR50_EachSIMDKernelMatchesReference(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU: the portable loops are covered by TestR50_MinMaxKernelsMatchReference")
	}
	rng := rand.New(rand.NewPCG(6, 60))
	for n := 4; n <= 140; n++ {
		for rep := 0; rep < 20; rep++ {
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = int64(rng.Uint64()) >> rng.IntN(64)
			}
			wantMn, wantMx := vals[0], vals[0]
			for _, v := range vals {
				wantMn, wantMx = min(wantMn, v), max(wantMx, v)
			}
			if mn, mx := minmax64AVX2(&vals[0], n, 0); mn != wantMn || mx != wantMx {
				t.Fatalf("AVX2 int64 n=%d: %d..%d want %d..%d", n, mn, mx, wantMn, wantMx)
			}
			if useAVX512 && n >= 8 {
				var out [16]int64
				minmax64AVX512(&vals[0], n, 0, &out)
				mn, mx := out[0], out[8]
				for i := 1; i < 8; i++ {
					mn, mx = min(mn, out[i]), max(mx, out[8+i])
				}
				if mn != wantMn || mx != wantMx {
					t.Fatalf("AVX-512 int64 n=%d: %d..%d want %d..%d", n, mn, mx, wantMn, wantMx)
				}
			}
			// floats with a NaN at a random position (or none)
			fb := make([]uint64, n)
			for i := range fb {
				fb[i] = math.Float64bits(rng.NormFloat64())
			}
			nanAt := -1
			if rep%2 == 0 {
				nanAt = rng.IntN(n)
				fb[nanAt] = 0xFFF8_0000_0000_0000
			}
			type kern func() (int64, int64, int)
			kernels := map[string]kern{"AVX2": func() (int64, int64, int) { return minmaxF64AVX2(&fb[0], n) }}
			if useAVX512 && n >= 8 {
				kernels["AVX-512"] = func() (int64, int64, int) {
					var out [16]int64
					done := minmaxF64AVX512(&fb[0], n, &out)
					mn, mx := out[0], out[8]
					for i := 1; i < 8; i++ {
						mn, mx = min(mn, out[i]), max(mx, out[8+i])
					}
					return mn, mx, done
				}
			}
			for name, k := range kernels {
				mS, xS, done := k()
				if nanAt < 0 && done != n {
					t.Fatalf("%s float n=%d: done %d without NaN", name, n, done)
				}
				if nanAt >= 0 && (done > nanAt || done < 0) {
					t.Fatalf("%s float n=%d: folded past the NaN at %d (done %d)", name, n, nanAt, done)
				}
				// everything folded is bounded by the reference over vals[:done]
				if done > 0 {
					wantK0, wantK1 := ^uint64(0), uint64(0)
					for _, b := range fb[:done] {
						k := floatorder.Key64(b)
						wantK0, wantK1 = min(wantK0, k), max(wantK1, k)
					}
					gotK0, gotK1 := uint64(mS)^(1<<63), uint64(xS)^(1<<63)
					// exactly fb[:done] was folded (the overlapping last step
					// only re-reads values inside it)
					if gotK0 != wantK0 || gotK1 != wantK1 {
						t.Fatalf("%s float n=%d done=%d: keys %#x..%#x, want %#x..%#x", name, n, done, gotK0, gotK1, wantK0, wantK1)
					}
				}
			}
		}
	}
}

// The masked AVX-512 kernels against a reference over random validity bits,
// every length 1…140 (partial final steps use masked loads).
func TestR25_R50_MaskedKernelsMatchReference(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU: the masked kernels are not used; stretch path covered by the property test")
	}
	rng := rand.New(rand.NewPCG(8, 80))
	for n := 1; n <= 140; n++ {
		for rep := 0; rep < 20; rep++ {
			valid := make([]byte, (n+7)/8)
			for i := range valid {
				valid[i] = byte(rng.Uint32())
				if rep%4 == 0 {
					valid[i] = 0xFF
				}
			}
			isValid := func(i int) bool { return valid[i/8]>>(i%8)&1 != 0 }
			vals := make([]int64, n)
			fb := make([]uint64, n)
			for i := range vals {
				vals[i] = int64(rng.Uint64()) >> rng.IntN(64)
				switch rng.IntN(10) {
				case 0:
					fb[i] = 0x7FF0_0000_0000_0001 | rng.Uint64()&(1<<63)
				case 1:
					fb[i] = rng.Uint64() & (1 << 63) // ±0
				default:
					fb[i] = math.Float64bits(rng.NormFloat64())
				}
			}
			for _, flip := range []int64{0, math.MinInt64} {
				wantMn, wantMx := int64(math.MaxInt64), int64(math.MinInt64)
				for i, v := range vals {
					if isValid(i) {
						wantMn, wantMx = min(wantMn, v^flip), max(wantMx, v^flip)
					}
				}
				var out [16]int64
				minmax64MaskedAVX512(&vals[0], n, &valid[0], flip, &out)
				mn, mx := out[0], out[8]
				for i := 1; i < 8; i++ {
					mn, mx = min(mn, out[i]), max(mx, out[8+i])
				}
				if mn != wantMn || mx != wantMx {
					t.Fatalf("int n=%d flip=%x: %d..%d want %d..%d", n, flip, mn, mx, wantMn, wantMx)
				}
			}
			var wantNaN, wantNeg int
			wantK0, wantK1 := ^uint64(0), uint64(0)
			for i, b := range fb {
				if !isValid(i) {
					continue
				}
				if floatorder.IsNaN64(b) {
					wantNaN++
					if b>>63 != 0 {
						wantNeg++
					}
					continue
				}
				k := floatorder.Key64(b)
				wantK0, wantK1 = min(wantK0, k), max(wantK1, k)
			}
			var out [16]int64
			nans, negs := minmaxF64MaskedAVX512(&fb[0], n, &valid[0], &out)
			k0, k1 := ^uint64(0), uint64(0)
			for i := 0; i < 8; i++ {
				k0 = min(k0, uint64(out[i])^(1<<63))
				k1 = max(k1, uint64(out[8+i])^(1<<63))
			}
			if nans != wantNaN || negs != wantNeg || k0 != wantK0 || k1 != wantK1 {
				t.Fatalf("float n=%d: nan %d/%d keys %#x..%#x, want %d/%d %#x..%#x", n, nans, negs, k0, k1, wantNaN, wantNeg, wantK0, wantK1)
			}
		}
	}
}
