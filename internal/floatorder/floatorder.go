// Package floatorder orders IEEE 754 bit patterns of every float width
// lancekeeper stores (float16, float32, float64) by totalOrder —
//
//	-NaN < -Inf < … < -0.0 < +0.0 < … < +Inf < +NaN
//
// the order Arrow Rust uses for float bounds (zone-seeds.md §4.3, R50) — and
// tells NaNs of any sign and payload apart (R25). The seed collector, the
// seed validator and pruning share these keys.
package floatorder

// Key64 maps the bit pattern of a float64 to an unsigned key whose
// natural order is IEEE 754 totalOrder (§4.3): negative values have all bits
// flipped, non-negative values get the sign bit set.
func Key64(bits uint64) uint64 { return bits ^ (uint64(int64(bits)>>63) | 1<<63) }

// Key32 is [Key64] for float32 bit patterns.
func Key32(bits uint32) uint32 { return bits ^ (uint32(int32(bits)>>31) | 1<<31) }

// Key16 is [Key64] for float16 bit patterns.
func Key16(bits uint16) uint16 { return bits ^ (uint16(int16(bits)>>15) | 1<<15) }

// FromKey64 inverts [Key64].
func FromKey64(key uint64) uint64 { return key ^ (uint64(int64(^key)>>63) | 1<<63) }

// FromKey32 inverts [Key32].
func FromKey32(key uint32) uint32 { return key ^ (uint32(int32(^key)>>31) | 1<<31) }

// FromKey16 inverts [Key16].
func FromKey16(key uint16) uint16 { return key ^ (uint16(int16(^key)>>15) | 1<<15) }

// IsNaN64 reports whether a float64 bit pattern is a NaN (either sign, any
// payload, quiet or signalling).
func IsNaN64(bits uint64) bool { return bits&0x7FFF_FFFF_FFFF_FFFF > 0x7FF0_0000_0000_0000 }

// IsNaN32 reports whether a float32 bit pattern is a NaN.
func IsNaN32(bits uint32) bool { return bits&0x7FFF_FFFF > 0x7F80_0000 }

// IsNaN16 reports whether a float16 bit pattern is a NaN.
func IsNaN16(bits uint16) bool { return bits&0x7FFF > 0x7C00 }
