package seedio

// Helpers that keep Collector.Finish cheap: hex digits written eight input
// bytes at a time, and zone bounds boxed without one allocation per bound.

import (
	"encoding/binary"
	"unsafe"
)

// hexEncode writes the lowercase hex digits of src into dst
// (len(dst) >= 2*len(src)), the same bytes as encoding/hex.Encode, four
// input bytes per step with SWAR arithmetic instead of two table lookups
// per byte.
func hexEncode(dst, src []byte) {
	const (
		lowNibbles = 0x000F_000F_000F_000F
		ones       = 0x0101_0101_0101_0101
	)
	i, j := 0, 0
	if n := len(src) &^ 15; useAVX2 && n > 0 {
		_ = dst[2*n-1]
		hexEncodeAVX2(&dst[0], &src[0], n)
		i, j = n, 2*n
	}
	for ; i+4 <= len(src); i, j = i+4, j+8 {
		x := uint64(binary.LittleEndian.Uint32(src[i:]))
		x = (x | x<<16) & 0x0000_FFFF_0000_FFFF
		x = (x | x<<8) & 0x00FF_00FF_00FF_00FF // byte k in 16-bit lane k
		// first digit (high nibble) at the lower address
		y := (x>>4)&lowNibbles | (x&lowNibbles)<<8
		// '0'+n for n <= 9, 'a'+n-10 otherwise: add 0x27 where n > 9
		gt9 := ((y + 0x7676_7676_7676_7676) >> 7) & ones
		binary.LittleEndian.PutUint64(dst[j:], y+0x3030_3030_3030_3030+gt9*0x27)
	}
	const digits = "0123456789abcdef"
	for ; i < len(src); i, j = i+1, j+2 {
		dst[j] = digits[src[i]>>4]
		dst[j+1] = digits[src[i]&15]
	}
}

// eface is the layout of an empty interface value.
type eface struct {
	typ, data unsafe.Pointer
}

// boxShared returns interfaces holding vals[i] with the dynamic type of proto
// (a value of a non-pointer-shaped type whose memory layout is T's, e.g. a
// float64 for T = uint64 bit patterns), all pointing into one copy of vals:
// two allocations instead of one per value. The copy is never modified, as
// the interface contract requires.
func boxShared[T any](proto any, vals []T) []any {
	backing := make([]T, len(vals))
	copy(backing, vals)
	typ := (*eface)(unsafe.Pointer(&proto)).typ
	out := make([]any, len(vals))
	for i := range backing {
		*(*eface)(unsafe.Pointer(&out[i])) = eface{typ: typ, data: unsafe.Pointer(&backing[i])}
	}
	return out
}
