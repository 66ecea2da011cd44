//go:build !amd64 || noasm

package seedio

// Portable build: no SIMD kernels; the pure Go loops are used.

const (
	useAVX2   = false
	useAVX512 = false
	useVBMI   = false
)

func prefixFilterVBMI(data *byte, n int, offs *int32, count int, lo, span uint64, valid *byte, validLen, bit int) (done int) {
	panic("seedio: prefixFilterVBMI without amd64 assembly")
}

func minmax64AVX2(p *int64, n int, flip int64) (mn, mx int64) {
	panic("seedio: minmax64AVX2 without amd64 assembly")
}

func minmaxF64AVX2(p *uint64, n int) (mn, mx int64, done int) {
	panic("seedio: minmaxF64AVX2 without amd64 assembly")
}

func minmax64AVX512(p *int64, n int, flip int64, out *[16]int64) {
	panic("seedio: minmax64AVX512 without amd64 assembly")
}

func minmaxF64AVX512(p *uint64, n int, out *[16]int64) (done int) {
	panic("seedio: minmaxF64AVX512 without amd64 assembly")
}

func minmax64MaskedAVX512(p *int64, n int, valid *byte, flip int64, out *[16]int64) {
	panic("seedio: minmax64MaskedAVX512 without amd64 assembly")
}

func minmaxF64MaskedAVX512(p *uint64, n int, valid *byte, out *[16]int64) (nans, negs int) {
	panic("seedio: minmaxF64MaskedAVX512 without amd64 assembly")
}

func hexEncodeAVX2(dst, src *byte, n int) {
	panic("seedio: hexEncodeAVX2 without amd64 assembly")
}
