package seedio

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The SIMD kernels (when the CPU has them) and the portable loops must agree
// with a plain reference on every length and alignment (R29, R50).
func TestR50_MinMaxKernelsMatchReference(t *testing.T) {
	t.Logf("AVX2 kernels in use: %v", useAVX2)
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
			if IsNaN64(b) {
				wantNaN++
				if b>>63 != 0 {
					wantNeg++
				}
				continue
			}
			k := TotalOrderKey64(b)
			wantKMn, wantKMx = min(wantKMn, k), max(wantKMx, k)
		}
		kmn, kmx, nans, negs := floatScan(fb, 63, uint64(0x7FF0_0000_0000_0000), ^uint64(0), 0)
		if kmn != wantKMn || kmx != wantKMx || nans != wantNaN || negs != wantNeg {
			t.Fatalf("float64 n=%d: keys %#x..%#x nan %d/%d, want %#x..%#x nan %d/%d",
				n, kmn, kmx, nans, negs, wantKMn, wantKMx, wantNaN, wantNeg)
		}
	}
}
