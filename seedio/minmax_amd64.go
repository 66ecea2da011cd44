//go:build !noasm

package seedio

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels of minmax_amd64.s. It is set once at
// package initialisation from the CPU features and never changes.
var useAVX2 = cpu.X86.HasAVX2

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
