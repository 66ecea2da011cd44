//go:build !noasm

package seedio

import "golang.org/x/sys/cpu"

// useAVX2 and useAVX512 select the kernels of minmax_amd64.s. They are set
// once at package initialisation from the CPU (and OS) features and never
// change.
var (
	useAVX2 = cpu.X86.HasAVX2
	// The AVX-512 kernels use foundation instructions plus the byte-wide
	// mask instructions of AVX512DQ (KMOVB, KORTESTB, KANDNB).
	useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ
	// useVBMI selects prefixFilterVBMI: VPERMB/VPERMI2B (VBMI), byte and
	// 256-bit EVEX forms (BW, VL), KMOVB (DQ), TZCNT (BMI1), SHRX (BMI2).
	useVBMI = useAVX512 && cpu.X86.HasAVX512VBMI && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI1 && cpu.X86.HasBMI2
)

// prefixFilterVBMI tests the utf8/binary values i = 0, 1, … of a zone,
// value i being data[offs[i]:offs[i+1]] (offs has count+1 entries), eight
// per step: it builds each value's 8-byte big-endian prefix key k (zero-
// padded) with byte permutes from a 256-byte window of data starting at the
// step's first value, and returns the index of the first value whose key is
// not inside [lo, lo+span) (a candidate for the extrema), or of the first
// value it did not test: when fewer than 8 values are left, when the step's
// first start is negative or less than 256 bytes from n, or when a value's
// prefix leaves the window. valid (validLen bytes; nil: all valid) is the
// validity bitmap, value i being bit bit+i: a null value is never a
// candidate (the bits are used while two bytes of valid can be read at the
// step's first value). Requires useVBMI.
//
//go:noescape
func prefixFilterVBMI(data *byte, n int, offs *int32, count int, lo, span uint64, valid *byte, validLen, bit int) (done int)

// minmax64AVX2 folds p[0:n], each XORed with flip, into signed min and
// max. n must be >= 4.
//
//go:noescape
func minmax64AVX2(p *int64, n int, flip int64) (mn, mx int64)

// minmaxF64AVX2 folds float64 bit patterns p[0:n] (n >= 4) into the signed
// min/max of their totalOrder transform, stopping before the first step (16
// or 4 values) that holds a NaN; done is the number of values folded.
//
//go:noescape
func minmaxF64AVX2(p *uint64, n int) (mn, mx int64, done int)

// minmax64AVX512 is minmax64AVX2 for AVX-512F (n >= 8): it leaves 8 lane
// minima in out[0:8] and 8 lane maxima in out[8:16].
//
//go:noescape
func minmax64AVX512(p *int64, n int, flip int64, out *[16]int64)

// minmaxF64AVX512 is minmaxF64AVX2 for AVX-512F (n >= 8), with lane results
// in out like minmax64AVX512.
//
//go:noescape
func minmaxF64AVX512(p *uint64, n int, out *[16]int64) (done int)

// minmax64MaskedAVX512 folds the valid values of p[0:n] (n >= 1; validity
// bits start at bit 0 of valid[0]), each XORed with flip, into lane minima
// out[0:8] and maxima out[8:16] (MaxInt64 / MinInt64 where nothing was
// folded).
//
//go:noescape
func minmax64MaskedAVX512(p *int64, n int, valid *byte, flip int64, out *[16]int64)

// minmaxF64MaskedAVX512 is the float64 version: it also returns the number
// of valid NaNs and of those with the sign bit set.
//
//go:noescape
func minmaxF64MaskedAVX512(p *uint64, n int, valid *byte, out *[16]int64) (nans, negs int)

// hexEncodeAVX2 writes the lowercase hex digits of src[0:n] to dst[0:2n];
// n must be a multiple of 16. Requires useAVX2.
//
//go:noescape
func hexEncodeAVX2(dst, src *byte, n int)
