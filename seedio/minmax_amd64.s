//go:build !noasm

#include "textflag.h"

// AVX2 kernels for the collector's hot loops (see minmax_amd64.go).
//
// Plan 9 operand order: VPCMPGTQ b, a, dst => dst = (a > b) per int64 lane;
// VPBLENDVB mask, x, y, dst => dst = mask ? x : y (bytewise on the mask sign).

// func minmax64AVX2(p *int64, n int, flip int64) (mn, mx int64)
// Folds p[0:n] (each lane XORed with flip) into signed min/max. Requires
// n >= 4. Steps of 16, then of 4; the last partial step re-reads the final 4
// values (min and max are idempotent, so overlap is harmless).
TEXT ·minmax64AVX2(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ flip+16(FP), Y15
	LEAQ -32(SI)(CX*8), DI          // address of the last 4 values

	VMOVDQU (SI), Y0
	VPXOR   Y15, Y0, Y0
	VMOVDQA Y0, Y1
	VMOVDQA Y0, Y2
	VMOVDQA Y0, Y3
	VMOVDQA Y0, Y4
	VMOVDQA Y0, Y5
	VMOVDQA Y0, Y6
	VMOVDQA Y0, Y7

	CMPQ CX, $16
	JLT  tail4

loop16:
	VMOVDQU (SI), Y8
	VPXOR   Y15, Y8, Y8
	VMOVDQU 32(SI), Y9
	VPXOR   Y15, Y9, Y9
	VMOVDQU 64(SI), Y10
	VPXOR   Y15, Y10, Y10
	VMOVDQU 96(SI), Y11
	VPXOR   Y15, Y11, Y11

	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y13
	VPBLENDVB Y13, Y8, Y4, Y4

	VPCMPGTQ  Y9, Y1, Y12
	VPBLENDVB Y12, Y9, Y1, Y1
	VPCMPGTQ  Y5, Y9, Y13
	VPBLENDVB Y13, Y9, Y5, Y5

	VPCMPGTQ  Y10, Y2, Y12
	VPBLENDVB Y12, Y10, Y2, Y2
	VPCMPGTQ  Y6, Y10, Y13
	VPBLENDVB Y13, Y10, Y6, Y6

	VPCMPGTQ  Y11, Y3, Y12
	VPBLENDVB Y12, Y11, Y3, Y3
	VPCMPGTQ  Y7, Y11, Y13
	VPBLENDVB Y13, Y11, Y7, Y7

	ADDQ $128, SI
	SUBQ $16, CX
	CMPQ CX, $16
	JGE  loop16

tail4:
	CMPQ CX, $4
	JLT  last
	VMOVDQU   (SI), Y8
	VPXOR     Y15, Y8, Y8
	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y13
	VPBLENDVB Y13, Y8, Y4, Y4
	ADDQ      $32, SI
	SUBQ      $4, CX
	JMP       tail4

last:
	TESTQ     CX, CX
	JZ        reduce
	VMOVDQU   (DI), Y8
	VPXOR     Y15, Y8, Y8
	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y13
	VPBLENDVB Y13, Y8, Y4, Y4

reduce:
	// min of Y0..Y3 into Y0, max of Y4..Y7 into Y4
	VPCMPGTQ  Y1, Y0, Y12
	VPBLENDVB Y12, Y1, Y0, Y0
	VPCMPGTQ  Y3, Y2, Y12
	VPBLENDVB Y12, Y3, Y2, Y2
	VPCMPGTQ  Y2, Y0, Y12
	VPBLENDVB Y12, Y2, Y0, Y0

	VPCMPGTQ  Y4, Y5, Y13
	VPBLENDVB Y13, Y5, Y4, Y4
	VPCMPGTQ  Y6, Y7, Y13
	VPBLENDVB Y13, Y7, Y6, Y6
	VPCMPGTQ  Y4, Y6, Y13
	VPBLENDVB Y13, Y6, Y4, Y4

	// 256 -> 128
	VEXTRACTI128 $1, Y0, X1
	VPCMPGTQ     X1, X0, X12
	VPBLENDVB    X12, X1, X0, X0
	VEXTRACTI128 $1, Y4, X5
	VPCMPGTQ     X4, X5, X13
	VPBLENDVB    X13, X5, X4, X4

	// 128 -> 64
	VPSHUFD   $0x4E, X0, X1
	VPCMPGTQ  X1, X0, X12
	VPBLENDVB X12, X1, X0, X0
	VPSHUFD   $0x4E, X4, X5
	VPCMPGTQ  X4, X5, X13
	VPBLENDVB X13, X5, X4, X4

	VMOVQ X0, AX
	VMOVQ X4, BX
	MOVQ  AX, mn+24(FP)
	MOVQ  BX, mx+32(FP)
	VZEROUPPER
	RET

// func minmaxF64AVX2(p *uint64, n int) (mn, mx int64, done int)
// Folds float64 bit patterns p[0:n] into signed min/max of the totalOrder
// transform s = b ^ ((b >> 63 arithmetic) & 0x7FFF_FFFF_FFFF_FFFF), in steps
// of 16 then 4 values, the last step re-reading the final 4 values. A step
// holding a NaN is not folded: the kernel stops and returns done = index of
// that step (the caller handles the NaNs); otherwise done = n. Requires
// n >= 4. Neutral results (nothing folded) are mn = MaxInt64, mx = MinInt64,
// which are NaN transforms and never ordinary values.
TEXT ·minmaxF64AVX2(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -32(SI)(CX*8), DI      // address of the last 4 values
	XORQ DX, DX                 // elements done

	MOVQ $0x7FFFFFFFFFFFFFFF, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14       // abs mask; also min identity
	MOVQ $0x7FF0000000000000, AX
	MOVQ AX, X13
	VPBROADCASTQ X13, Y13       // +Inf bits
	VPXOR Y15, Y15, Y15         // zero
	VMOVDQA Y14, Y0             // min acc
	VMOVDQA Y14, Y1
	VPCMPEQQ Y4, Y4, Y4         // all ones
	VPXOR   Y14, Y4, Y4         // 0x8000... : max identity
	VMOVDQA Y4, Y5

floop:
	MOVQ CX, AX
	SUBQ DX, AX
	CMPQ AX, $16
	JLT  ftail

	VMOVDQU (SI), Y8
	VMOVDQU 32(SI), Y9
	VMOVDQU 64(SI), Y10
	VMOVDQU 96(SI), Y11

	// NaN check: any (b & abs) > inf
	VPAND    Y14, Y8, Y2
	VPCMPGTQ Y13, Y2, Y2
	VPAND    Y14, Y9, Y3
	VPCMPGTQ Y13, Y3, Y3
	VPOR     Y3, Y2, Y2
	VPAND    Y14, Y10, Y3
	VPCMPGTQ Y13, Y3, Y3
	VPOR     Y3, Y2, Y2
	VPAND    Y14, Y11, Y3
	VPCMPGTQ Y13, Y3, Y3
	VPOR     Y3, Y2, Y2
	VPTEST   Y2, Y2
	JNZ      freduce

	// s = b ^ ((0 > b) & abs)
	VPCMPGTQ Y8, Y15, Y12
	VPAND    Y14, Y12, Y12
	VPXOR    Y12, Y8, Y8
	VPCMPGTQ Y9, Y15, Y12
	VPAND    Y14, Y12, Y12
	VPXOR    Y12, Y9, Y9
	VPCMPGTQ Y10, Y15, Y12
	VPAND    Y14, Y12, Y12
	VPXOR    Y12, Y10, Y10
	VPCMPGTQ Y11, Y15, Y12
	VPAND    Y14, Y12, Y12
	VPXOR    Y12, Y11, Y11

	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y12
	VPBLENDVB Y12, Y8, Y4, Y4
	VPCMPGTQ  Y9, Y1, Y12
	VPBLENDVB Y12, Y9, Y1, Y1
	VPCMPGTQ  Y5, Y9, Y12
	VPBLENDVB Y12, Y9, Y5, Y5
	VPCMPGTQ  Y10, Y0, Y12
	VPBLENDVB Y12, Y10, Y0, Y0
	VPCMPGTQ  Y4, Y10, Y12
	VPBLENDVB Y12, Y10, Y4, Y4
	VPCMPGTQ  Y11, Y1, Y12
	VPBLENDVB Y12, Y11, Y1, Y1
	VPCMPGTQ  Y5, Y11, Y12
	VPBLENDVB Y12, Y11, Y5, Y5

	ADDQ $128, SI
	ADDQ $16, DX
	JMP  floop

ftail:
	CMPQ AX, $4
	JLT  flast
	VMOVDQU  (SI), Y8
	VPAND    Y14, Y8, Y2
	VPCMPGTQ Y13, Y2, Y2
	VPTEST   Y2, Y2
	JNZ      freduce
	VPCMPGTQ  Y8, Y15, Y12
	VPAND     Y14, Y12, Y12
	VPXOR     Y12, Y8, Y8
	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y12
	VPBLENDVB Y12, Y8, Y4, Y4
	ADDQ      $32, SI
	ADDQ      $4, DX
	SUBQ      $4, AX
	JMP       ftail

flast:
	TESTQ    AX, AX
	JZ       freduce
	VMOVDQU  (DI), Y8
	VPAND    Y14, Y8, Y2
	VPCMPGTQ Y13, Y2, Y2
	VPTEST   Y2, Y2
	JNZ      freduce
	VPCMPGTQ  Y8, Y15, Y12
	VPAND     Y14, Y12, Y12
	VPXOR     Y12, Y8, Y8
	VPCMPGTQ  Y8, Y0, Y12
	VPBLENDVB Y12, Y8, Y0, Y0
	VPCMPGTQ  Y4, Y8, Y12
	VPBLENDVB Y12, Y8, Y4, Y4
	MOVQ      CX, DX

freduce:
	VPCMPGTQ  Y1, Y0, Y12
	VPBLENDVB Y12, Y1, Y0, Y0
	VPCMPGTQ  Y4, Y5, Y12
	VPBLENDVB Y12, Y5, Y4, Y4

	VEXTRACTI128 $1, Y0, X1
	VPCMPGTQ     X1, X0, X12
	VPBLENDVB    X12, X1, X0, X0
	VEXTRACTI128 $1, Y4, X5
	VPCMPGTQ     X4, X5, X12
	VPBLENDVB    X12, X5, X4, X4

	VPSHUFD   $0x4E, X0, X1
	VPCMPGTQ  X1, X0, X12
	VPBLENDVB X12, X1, X0, X0
	VPSHUFD   $0x4E, X4, X5
	VPCMPGTQ  X4, X5, X12
	VPBLENDVB X12, X5, X4, X4

	VMOVQ X0, AX
	VMOVQ X4, BX
	MOVQ  AX, mn+16(FP)
	MOVQ  BX, mx+24(FP)
	MOVQ  DX, done+32(FP)
	VZEROUPPER
	RET
