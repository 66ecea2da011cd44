package floatorder

import (
	"math"
	"testing"
)

// TestFloat16Conversions (issue 15 item 7): every binary16 pattern
// converts to float64 exactly and back to itself; subnormals, ±0, ±Inf
// and NaN payloads included; rounding is to nearest, ties to even.
func TestFloat16Conversions(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		v := Float16ToFloat64(uint16(b))
		back := Float16FromFloat64(v)
		if IsNaN16(uint16(b)) {
			if !math.IsNaN(v) || !IsNaN16(back) || back>>15 != uint16(b)>>15 {
				t.Fatalf("NaN %#04x → %v → %#04x", b, v, back)
			}
			continue
		}
		if back != uint16(b) {
			t.Fatalf("%#04x → %v → %#04x", b, v, back)
		}
	}
	for _, c := range []struct {
		bits uint16
		want float64
	}{
		{0x0001, math.Ldexp(1, -24)}, {0x03FF, math.Ldexp(1023, -24)}, {0x0400, math.Ldexp(1, -14)},
		{0x8001, -math.Ldexp(1, -24)}, {0x3C00, 1}, {0x7BFF, 65504}, {0x7C00, math.Inf(1)}, {0xFC00, math.Inf(-1)}, {0x8000, math.Copysign(0, -1)},
	} {
		if got := Float16ToFloat64(c.bits); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("%#04x: got %v, want %v", c.bits, got, c.want)
		}
	}
	for _, c := range []struct {
		f    float64
		want uint16
	}{
		{math.Ldexp(1, -25), 0x0000},                                                                      // tie between 0 and the smallest subnormal: even (0)
		{math.Ldexp(3, -25), 0x0002},                                                                      // tie between 1 and 2 units: even (2)
		{math.Ldexp(1.5, -24) + 1e-12, 0x0002},                                                            // above the tie
		{0.1, 0x2E66}, {65519, 0x7BFF}, {65520, 0x7C00}, {-1e9, 0xFC00}, {1 + math.Ldexp(1, -11), 0x3C00}, // 1+2^-11 ties to even (1.0)
	} {
		if got := Float16FromFloat64(c.f); got != c.want {
			t.Errorf("%v: got %#04x, want %#04x", c.f, got, c.want)
		}
	}
}
