package floatorder

import "math"

// Float16ToFloat64 converts the bit pattern of an IEEE 754 binary16 value
// to float64 exactly, subnormals included (arrow-go's float16.Num.Float32
// reads a subnormal such as 0x0001 as 1.1e-41 instead of 2^-24 ≈ 5.96e-8).
// A NaN keeps its sign and the top bits of its payload (quiet bit included).
func Float16ToFloat64(b uint16) float64 {
	neg := b>>15 != 0
	exp := int(b>>10) & 0x1f
	frac := uint64(b & 0x3ff)
	var v float64
	switch exp {
	case 0:
		v = math.Ldexp(float64(frac), -24)
	case 0x1f:
		if frac == 0 {
			v = math.Inf(1)
		} else {
			bits := uint64(0x7FF0_0000_0000_0000) | frac<<42
			if neg {
				bits |= 1 << 63
			}
			return math.Float64frombits(bits)
		}
	default:
		v = math.Ldexp(float64(1024+frac), exp-25)
	}
	if neg {
		v = -v
	}
	return v
}

// Float16FromFloat64 rounds f to the nearest binary16 value (ties to even),
// with gradual underflow to subnormals and overflow to ±Inf, as IEEE 754
// conversion does (arrow-go's float16.New truncates and flushes subnormals
// to zero). A NaN keeps its sign and the top 10 bits of its payload, and
// stays a NaN.
func Float16FromFloat64(f float64) uint16 {
	bits := math.Float64bits(f)
	sign := uint16(bits>>48) & 0x8000
	if math.IsNaN(f) {
		frac := uint16(bits>>42) & 0x3ff
		if frac == 0 {
			frac = 0x200
		}
		return sign | 0x7C00 | frac
	}
	a := math.Abs(f)
	if math.IsInf(a, 0) || a >= 65520 { // 65520 and above round to Inf
		return sign | 0x7C00
	}
	if a < math.Ldexp(1, -14) { // subnormal (or zero): units of 2^-24
		return sign | uint16(math.RoundToEven(math.Ldexp(a, 24))) // 1024 is the smallest normal, correctly
	}
	fr, e := math.Frexp(a) // a = fr·2^e, fr in [0.5, 1)
	m := math.RoundToEven((fr*2 - 1) * 1024)
	E := e - 1
	if m == 1024 {
		m, E = 0, E+1
	}
	if E > 15 {
		return sign | 0x7C00
	}
	return sign | uint16(E+15)<<10 | uint16(m)
}
