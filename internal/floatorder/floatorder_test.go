package floatorder

import (
	"math"
	"math/rand/v2"
	"testing"
)

// §4.3: -NaN < -Inf < -1 < -0 < +0 < 1 < +Inf < +NaN, for every width.
func TestR50_TotalOrderKeysFollowIEEETotalOrder(t *testing.T) {
	f64 := []uint64{
		0xFFF8_0000_0000_0001, // -NaN, larger payload sorts first
		0xFFF8_0000_0000_0000, // -NaN
		0xFFF0_0000_0000_0001, // -sNaN
		0xFFF0_0000_0000_0000, // -Inf
		math.Float64bits(-1),
		0x8000_0000_0000_0001, // -denormal
		0x8000_0000_0000_0000, // -0
		0,                     // +0
		1,                     // +denormal
		math.Float64bits(1),
		0x7FF0_0000_0000_0000, // +Inf
		0x7FF0_0000_0000_0001, // +sNaN
		0x7FF8_0000_0000_0000, // +NaN
		0x7FF8_0000_0000_0001, // Go math.NaN()
	}
	for i := 1; i < len(f64); i++ {
		if Key64(f64[i-1]) >= Key64(f64[i]) {
			t.Errorf("key64(%#x) >= key64(%#x)", f64[i-1], f64[i])
		}
	}
	f32 := []uint32{0xFFC0_0000, 0xFF80_0000, math.Float32bits(-1), 0x8000_0000, 0, math.Float32bits(1), 0x7F80_0000, 0x7FC0_0000}
	for i := 1; i < len(f32); i++ {
		if Key32(f32[i-1]) >= Key32(f32[i]) {
			t.Errorf("key32(%#x) >= key32(%#x)", f32[i-1], f32[i])
		}
	}
	f16 := []uint16{0xFE00, 0xFC00, 0xBC00, 0x8000, 0, 0x3C00, 0x7C00, 0x7C01, 0x7E00}
	for i := 1; i < len(f16); i++ {
		if Key16(f16[i-1]) >= Key16(f16[i]) {
			t.Errorf("key16(%#x) >= key16(%#x)", f16[i-1], f16[i])
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < 10000; i++ {
		b := rng.Uint64()
		if FromKey64(Key64(b)) != b {
			t.Fatalf("key64 round trip of %#x", b)
		}
		b32 := uint32(b)
		if FromKey32(Key32(b32)) != b32 {
			t.Fatalf("key32 round trip of %#x", b32)
		}
		b16 := uint16(b)
		if FromKey16(Key16(b16)) != b16 {
			t.Fatalf("key16 round trip of %#x", b16)
		}
		// Ordinary (non-NaN) values: key order agrees with Go's < except
		// that -0 < +0.
		x, y := math.Float64frombits(b), math.Float64frombits(rng.Uint64())
		if !math.IsNaN(x) && !math.IsNaN(y) && x < y && Key64(math.Float64bits(x)) >= Key64(math.Float64bits(y)) {
			t.Fatalf("key64 disagrees with < for %v < %v", x, y)
		}
	}
}

func TestR25_IsNaNAnyPayloadAnySign(t *testing.T) {
	cases := []struct {
		bits uint64
		nan  bool
	}{
		{0x7FF8_0000_0000_0000, true}, {0xFFF8_0000_0000_0000, true}, {0x7FF0_0000_0000_0001, true},
		{0x7FF8_0000_0000_0001, true}, {0xFFFF_FFFF_FFFF_FFFF, true},
		{0x7FF0_0000_0000_0000, false}, {0xFFF0_0000_0000_0000, false}, {0, false}, {0x8000_0000_0000_0000, false},
	}
	for _, c := range cases {
		if IsNaN64(c.bits) != c.nan {
			t.Errorf("IsNaN64(%#x) = %v", c.bits, !c.nan)
		}
	}
	if !IsNaN32(0x7FC0_0000) || !IsNaN32(0xFF80_0001) || IsNaN32(0x7F80_0000) {
		t.Error("IsNaN32")
	}
	if !IsNaN16(0x7E00) || !IsNaN16(0xFE00) || !IsNaN16(0x7C01) || IsNaN16(0x7C00) || IsNaN16(0x3C00) {
		t.Error("IsNaN16")
	}
}
