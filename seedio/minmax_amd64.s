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

// func minmax64AVX512(p *int64, n int, flip int64, out *[16]int64)
// AVX-512F version of minmax64AVX2: folds p[0:n] (n >= 8), each XORed with
// flip, into 8 signed lane minima out[0:8] and maxima out[8:16]; the caller
// reduces the lanes. Steps of 32, then 8, then an overlapping last step.
TEXT ·minmax64AVX512(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ flip+16(FP), Z15
	MOVQ out+24(FP), DX
	LEAQ -64(SI)(CX*8), DI          // address of the last 8 values

	VPXORQ    (SI), Z15, Z0
	VMOVDQA64 Z0, Z1
	VMOVDQA64 Z0, Z2
	VMOVDQA64 Z0, Z3
	VMOVDQA64 Z0, Z4
	VMOVDQA64 Z0, Z5
	VMOVDQA64 Z0, Z6
	VMOVDQA64 Z0, Z7

	CMPQ CX, $32
	JLT  ztail8

zloop32:
	VPXORQ  (SI), Z15, Z8
	VPXORQ  64(SI), Z15, Z9
	VPXORQ  128(SI), Z15, Z10
	VPXORQ  192(SI), Z15, Z11
	VPMINSQ Z8, Z0, Z0
	VPMAXSQ Z8, Z4, Z4
	VPMINSQ Z9, Z1, Z1
	VPMAXSQ Z9, Z5, Z5
	VPMINSQ Z10, Z2, Z2
	VPMAXSQ Z10, Z6, Z6
	VPMINSQ Z11, Z3, Z3
	VPMAXSQ Z11, Z7, Z7
	ADDQ    $256, SI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JGE     zloop32

ztail8:
	CMPQ    CX, $8
	JLT     zlast
	VPXORQ  (SI), Z15, Z8
	VPMINSQ Z8, Z0, Z0
	VPMAXSQ Z8, Z4, Z4
	ADDQ    $64, SI
	SUBQ    $8, CX
	JMP     ztail8

zlast:
	TESTQ   CX, CX
	JZ      zreduce
	VPXORQ  (DI), Z15, Z8
	VPMINSQ Z8, Z0, Z0
	VPMAXSQ Z8, Z4, Z4

zreduce:
	VPMINSQ   Z1, Z0, Z0
	VPMINSQ   Z3, Z2, Z2
	VPMINSQ   Z2, Z0, Z0
	VPMAXSQ   Z5, Z4, Z4
	VPMAXSQ   Z7, Z6, Z6
	VPMAXSQ   Z6, Z4, Z4
	VMOVDQU64 Z0, (DX)
	VMOVDQU64 Z4, 64(DX)
	VZEROUPPER
	RET

// func minmaxF64AVX512(p *uint64, n int, out *[16]int64) (done int)
// AVX-512F version of minmaxF64AVX2 (n >= 8): lane minima/maxima of the
// totalOrder transform go to out[0:8] / out[8:16]; a step (32 or 8 values)
// holding a NaN is not folded and done is its index; otherwise done = n.
// Untouched lanes hold MaxInt64 / MinInt64 (NaN transforms).
TEXT ·minmaxF64AVX512(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ out+16(FP), R8
	LEAQ -64(SI)(CX*8), DI      // address of the last 8 values
	XORQ DX, DX                 // elements done

	MOVQ $0x7FFFFFFFFFFFFFFF, AX
	VPBROADCASTQ AX, Z14        // abs mask; also min identity
	MOVQ $0x7FF0000000000000, AX
	VPBROADCASTQ AX, Z13        // +Inf bits
	VMOVDQA64 Z14, Z0           // min accumulators
	VMOVDQA64 Z14, Z1
	VPTERNLOGQ $0xFF, Z4, Z4, Z4 // all ones
	VPXORQ    Z14, Z4, Z4       // 0x8000... : max identity
	VMOVDQA64 Z4, Z5

zfloop:
	MOVQ CX, AX
	SUBQ DX, AX
	CMPQ AX, $32
	JLT  zftail

	VMOVDQU64 (SI), Z8
	VMOVDQU64 64(SI), Z9
	VMOVDQU64 128(SI), Z10
	VMOVDQU64 192(SI), Z11
	// NaN check: max over |b| > inf
	VPANDQ   Z14, Z8, Z2
	VPANDQ   Z14, Z9, Z3
	VPMAXSQ  Z3, Z2, Z2
	VPANDQ   Z14, Z10, Z3
	VPMAXSQ  Z3, Z2, Z2
	VPANDQ   Z14, Z11, Z3
	VPMAXSQ  Z3, Z2, Z2
	VPCMPGTQ Z13, Z2, K1
	KORTESTB K1, K1
	JNZ      zfreduce

	// s = b ^ ((b >> 63 arithmetic) & abs)
	VPSRAQ $63, Z8, Z12
	VPANDQ Z14, Z12, Z12
	VPXORQ Z12, Z8, Z8
	VPSRAQ $63, Z9, Z12
	VPANDQ Z14, Z12, Z12
	VPXORQ Z12, Z9, Z9
	VPSRAQ $63, Z10, Z12
	VPANDQ Z14, Z12, Z12
	VPXORQ Z12, Z10, Z10
	VPSRAQ $63, Z11, Z12
	VPANDQ Z14, Z12, Z12
	VPXORQ Z12, Z11, Z11

	VPMINSQ Z8, Z0, Z0
	VPMAXSQ Z8, Z4, Z4
	VPMINSQ Z9, Z1, Z1
	VPMAXSQ Z9, Z5, Z5
	VPMINSQ Z10, Z0, Z0
	VPMAXSQ Z10, Z4, Z4
	VPMINSQ Z11, Z1, Z1
	VPMAXSQ Z11, Z5, Z5

	ADDQ $256, SI
	ADDQ $32, DX
	JMP  zfloop

zftail:
	CMPQ      AX, $8
	JLT       zflast
	VMOVDQU64 (SI), Z8
	VPANDQ    Z14, Z8, Z2
	VPCMPGTQ  Z13, Z2, K1
	KORTESTB  K1, K1
	JNZ       zfreduce
	VPSRAQ    $63, Z8, Z12
	VPANDQ    Z14, Z12, Z12
	VPXORQ    Z12, Z8, Z8
	VPMINSQ   Z8, Z0, Z0
	VPMAXSQ   Z8, Z4, Z4
	ADDQ      $64, SI
	ADDQ      $8, DX
	SUBQ      $8, AX
	JMP       zftail

zflast:
	TESTQ     AX, AX
	JZ        zfreduce
	VMOVDQU64 (DI), Z8
	VPANDQ    Z14, Z8, Z2
	VPCMPGTQ  Z13, Z2, K1
	KORTESTB  K1, K1
	JNZ       zfreduce
	VPSRAQ    $63, Z8, Z12
	VPANDQ    Z14, Z12, Z12
	VPXORQ    Z12, Z8, Z8
	VPMINSQ   Z8, Z0, Z0
	VPMAXSQ   Z8, Z4, Z4
	MOVQ      CX, DX

zfreduce:
	VPMINSQ   Z1, Z0, Z0
	VPMAXSQ   Z5, Z4, Z4
	VMOVDQU64 Z0, (R8)
	VMOVDQU64 Z4, 64(R8)
	MOVQ      DX, done+24(FP)
	VZEROUPPER
	RET

// func minmax64MaskedAVX512(p *int64, n int, valid *byte, flip int64, out *[16]int64)
// Folds the valid values of p[0:n] (n >= 1; bit i of valid[k] says whether
// p[8k+i] is valid), each XORed with flip, into 8 signed lane minima
// out[0:8] and maxima out[8:16]. Lanes never folded keep MaxInt64 /
// MinInt64. The final partial step uses a masked (fault-suppressing) load.
TEXT ·minmax64MaskedAVX512(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ valid+16(FP), BX
	VPBROADCASTQ flip+24(FP), Z15
	MOVQ out+32(FP), DX

	MOVQ $0x7FFFFFFFFFFFFFFF, AX
	VPBROADCASTQ AX, Z0
	VMOVDQA64 Z0, Z1
	MOVQ $0x8000000000000000, AX
	VPBROADCASTQ AX, Z4
	VMOVDQA64 Z4, Z5

mloop16:
	CMPQ    CX, $16
	JLT     mtail8
	KMOVB   (BX), K1
	KMOVB   1(BX), K2
	VPXORQ  (SI), Z15, Z8
	VPXORQ  64(SI), Z15, Z9
	VPMINSQ Z8, Z0, K1, Z0
	VPMAXSQ Z8, Z4, K1, Z4
	VPMINSQ Z9, Z1, K2, Z1
	VPMAXSQ Z9, Z5, K2, Z5
	ADDQ    $128, SI
	ADDQ    $2, BX
	SUBQ    $16, CX
	JMP     mloop16

mtail8:
	CMPQ    CX, $8
	JLT     mlast
	KMOVB   (BX), K1
	VPXORQ  (SI), Z15, Z8
	VPMINSQ Z8, Z0, K1, Z0
	VPMAXSQ Z8, Z4, K1, Z4
	ADDQ    $64, SI
	INCQ    BX
	SUBQ    $8, CX

mlast:
	TESTQ       CX, CX
	JZ          mreduce
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	MOVBLZX     (BX), R9
	ANDL        R9, AX
	KMOVB       AX, K1
	VMOVDQU64.Z (SI), K1, Z8
	VPXORQ      Z15, Z8, Z8
	VPMINSQ     Z8, Z0, K1, Z0
	VPMAXSQ     Z8, Z4, K1, Z4

mreduce:
	VPMINSQ   Z1, Z0, Z0
	VPMAXSQ   Z5, Z4, Z4
	VMOVDQU64 Z0, (DX)
	VMOVDQU64 Z4, 64(DX)
	VZEROUPPER
	RET

// func minmaxF64MaskedAVX512(p *uint64, n int, valid *byte, out *[16]int64) (nans, negs int)
// Float64 version of minmax64MaskedAVX512: valid NaNs are counted (negs: with
// the sign bit set) and excluded; valid ordinary values are folded as their
// totalOrder transform s = b ^ ((b >> 63 arithmetic) & abs) into out
// (MaxInt64 / MinInt64 when none). Steps of 16 check for NaNs first and
// count them only when present.
TEXT ·minmaxF64MaskedAVX512(SB), NOSPLIT, $0-48
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ valid+16(FP), BX
	MOVQ out+24(FP), DX
	XORQ R10, R10               // nans
	XORQ R11, R11               // negative nans

	MOVQ $0x7FFFFFFFFFFFFFFF, AX
	VPBROADCASTQ AX, Z14        // abs mask; also min identity
	MOVQ $0x7FF0000000000000, AX
	VPBROADCASTQ AX, Z13        // +Inf bits
	VPXORQ    Z15, Z15, Z15     // zero
	VMOVDQA64 Z14, Z0
	VMOVDQA64 Z14, Z1
	MOVQ $0x8000000000000000, AX
	VPBROADCASTQ AX, Z4
	VMOVDQA64 Z4, Z5

mfloop16:
	CMPQ      CX, $16
	JLT       mfloop
	KMOVB     (BX), K1
	KMOVB     1(BX), K5
	VMOVDQU64 (SI), Z8
	VMOVDQU64 64(SI), Z9
	VPANDQ    Z14, Z8, Z2
	VPANDQ    Z14, Z9, Z3
	VPCMPGTQ  Z13, Z2, K1, K2   // valid NaN, first 8
	VPCMPGTQ  Z13, Z3, K5, K6   // valid NaN, next 8
	KORTESTB  K2, K6
	JNZ       mfnan16

mfback16:
	KANDNB     K1, K2, K4       // valid and not NaN
	KANDNB     K5, K6, K7
	VPSRAQ     $63, Z8, Z12
	VPTERNLOGQ $0x78, Z14, Z12, Z8 // Z8 ^= Z12 & abs
	VPSRAQ     $63, Z9, Z12
	VPTERNLOGQ $0x78, Z14, Z12, Z9
	VPMINSQ    Z8, Z0, K4, Z0
	VPMAXSQ    Z8, Z4, K4, Z4
	VPMINSQ    Z9, Z1, K7, Z1
	VPMAXSQ    Z9, Z5, K7, Z5
	ADDQ       $128, SI
	ADDQ       $2, BX
	SUBQ       $16, CX
	JMP        mfloop16

mfnan16:
	VPCMPGTQ Z8, Z15, K2, K3
	KMOVB    K2, AX
	POPCNTL  AX, AX
	ADDQ     AX, R10
	KMOVB    K3, AX
	POPCNTL  AX, AX
	ADDQ     AX, R11
	VPCMPGTQ Z9, Z15, K6, K3
	KMOVB    K6, AX
	POPCNTL  AX, AX
	ADDQ     AX, R10
	KMOVB    K3, AX
	POPCNTL  AX, AX
	ADDQ     AX, R11
	JMP      mfback16

mfloop:
	CMPQ      CX, $8
	JLT       mflast
	KMOVB     (BX), K1
	VMOVDQU64 (SI), Z8
	ADDQ      $64, SI
	INCQ      BX
	SUBQ      $8, CX

mfstep:
	VPANDQ     Z14, Z8, Z2
	VPCMPGTQ   Z13, Z2, K1, K2  // valid NaN
	VPCMPGTQ   Z8, Z15, K2, K3  // valid NaN with the sign bit
	KMOVB      K2, AX
	POPCNTL    AX, AX
	ADDQ       AX, R10
	KMOVB      K3, AX
	POPCNTL    AX, AX
	ADDQ       AX, R11
	KANDNB     K1, K2, K4       // valid and not NaN
	VPSRAQ     $63, Z8, Z12
	VPTERNLOGQ $0x78, Z14, Z12, Z8
	VPMINSQ    Z8, Z0, K4, Z0
	VPMAXSQ    Z8, Z4, K4, Z4
	JMP        mfloop

mflast:
	TESTQ       CX, CX
	JZ          mfdone
	MOVL        $1, AX
	SHLL        CX, AX
	DECL        AX
	MOVBLZX     (BX), R9
	ANDL        R9, AX
	KMOVB       AX, K1
	VMOVDQU64.Z (SI), K1, Z8
	XORQ        CX, CX
	JMP         mfstep

mfdone:
	VPMINSQ   Z1, Z0, Z0
	VPMAXSQ   Z5, Z4, Z4
	VMOVDQU64 Z0, (DX)
	VMOVDQU64 Z4, 64(DX)
	MOVQ      R10, nans+32(FP)
	MOVQ      R11, negs+40(FP)
	VZEROUPPER
	RET

// Byte indices for VPERMB: qword lane i, every byte = 4*i (byte 0 of dword
// i of the relative starts).
DATA prefixBcast<>+0(SB)/8, $0x0000000000000000
DATA prefixBcast<>+8(SB)/8, $0x0404040404040404
DATA prefixBcast<>+16(SB)/8, $0x0808080808080808
DATA prefixBcast<>+24(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA prefixBcast<>+32(SB)/8, $0x1010101010101010
DATA prefixBcast<>+40(SB)/8, $0x1414141414141414
DATA prefixBcast<>+48(SB)/8, $0x1818181818181818
DATA prefixBcast<>+56(SB)/8, $0x1c1c1c1c1c1c1c1c
GLOBL prefixBcast<>(SB), RODATA|NOPTR, $64

// Per qword lane: byte b (little-endian) takes window byte start+7-b, so
// the lane read as an integer is the big-endian 8-byte prefix.
DATA prefixRev<>+0(SB)/8, $0x0001020304050607
DATA prefixRev<>+8(SB)/8, $0x0001020304050607
DATA prefixRev<>+16(SB)/8, $0x0001020304050607
DATA prefixRev<>+24(SB)/8, $0x0001020304050607
DATA prefixRev<>+32(SB)/8, $0x0001020304050607
DATA prefixRev<>+40(SB)/8, $0x0001020304050607
DATA prefixRev<>+48(SB)/8, $0x0001020304050607
DATA prefixRev<>+56(SB)/8, $0x0001020304050607
GLOBL prefixRev<>(SB), RODATA|NOPTR, $64

// func prefixFilterVBMI(data *byte, n int, offs *int32, count int, lo, span uint64, valid *byte, validLen, bit int) (done int)
// Eight values per step, from a 256-byte window at the first one's start
// (two VPERMI2B of 128 bytes each, blended by bit 7 of the byte index). A
// step ends the loop when one of its values is a candidate or its prefix
// leaves the window; done is then that value's index. The only
// loop-carried dependency is done += 8, so steps overlap. Null values (bits
// of valid from bit on; valid nil: none) are never candidates.
TEXT ·prefixFilterVBMI(SB), NOSPLIT, $0-80
	MOVQ data+0(FP), SI
	MOVQ valid+48(FP), BX
	MOVQ validLen+56(FP), R12
	MOVQ bit+64(FP), R13
	MOVQ n+8(FP), R8
	MOVQ offs+16(FP), DI
	MOVQ count+24(FP), CX
	VPBROADCASTQ lo+32(FP), Z20
	VPBROADCASTQ span+40(FP), Z21
	VMOVDQU64 prefixBcast<>(SB), Z30
	VMOVDQU64 prefixRev<>(SB), Z31
	MOVL $8, AX
	VPBROADCASTD AX, Y22            // 8: the longest prefix
	MOVL $248, AX
	VPBROADCASTD AX, Y23            // 248: the last start whose prefix fits 256 bytes
	VPTERNLOGQ $0xFF, Z24, Z24, Z24 // all ones
	XORQ AX, AX                     // done
	SUBQ $8, CX                     // steps need done <= count-8

ploop:
	CMPQ AX, CX
	JGT  pret                       // fewer than 8 values left
	MOVLQSX (DI)(AX*4), R9          // w: start of value done
	TESTQ R9, R9
	JL   pret
	LEAQ 256(R9), R10
	CMPQ R10, R8
	JGT  pret                       // the window would pass the end of data

	VMOVDQU32    (DI)(AX*4), Y0     // starts s0..s7
	VMOVDQU32    4(DI)(AX*4), Y1    // ends e0..e7
	VPBROADCASTD (DI)(AX*4), Y2
	VPSUBD       Y2, Y0, Y3         // relative starts
	VPCMPUD      $6, Y23, Y3, K1    // prefix leaves the window
	VPSUBD       Y0, Y1, Y4         // lengths
	VPMINUD      Y22, Y4, Y4
	VPSLLD       $3, Y4, Y4
	VPMOVZXDQ    Y4, Z4             // 8 * min(length, 8) per qword lane
	VPSRLVQ      Z4, Z24, Z5        // bits past the value's end
	VPERMB       Z3, Z30, Z6        // relative start in every byte of its lane
	VPADDB       Z31, Z6, Z6        // byte indices into the window
	VPMOVB2M     Z6, K4             // index >= 128: upper half
	VMOVDQA64    Z6, Z9
	ADDQ         SI, R9
	VMOVDQU64    (R9), Z7
	VPERMI2B     64(R9), Z7, Z6
	VMOVDQU64    128(R9), Z8
	VPERMI2B     192(R9), Z8, Z9
	VPBLENDMB    Z9, Z6, K4, Z6     // big-endian 8-byte prefixes
	VPANDNQ      Z6, Z5, Z6         // zero-padded keys
	VPSUBQ       Z20, Z6, Z6
	VPCMPUQ      $5, Z21, Z6, K2    // k - lo >= span: a candidate
	TESTQ        BX, BX
	JZ           pvalid
	LEAQ         (R13)(AX*1), R10   // validity bit of value done
	MOVQ         R10, DX
	SHRQ         $3, DX
	INCQ         DX
	CMPQ         DX, R12
	JGE          pvalid             // fewer than two bytes left: no mask
	MOVWLZX      -1(BX)(DX*1), DX
	ANDQ         $7, R10
	SHRXL        R10, DX, DX
	KMOVB        DX, K3
	KANDB        K3, K2, K2         // nulls are not candidates

pvalid:
	KORB         K1, K2, K2
	KORTESTB     K2, K2
	JNZ          pstop
	ADDQ         $8, AX
	JMP          ploop

pstop:
	KMOVB  K2, R11
	TZCNTL R11, R11
	ADDQ   R11, AX

pret:
	MOVQ AX, done+72(FP)
	VZEROUPPER
	RET

// Lowercase hex digits, repeated in both 128-bit lanes for VPSHUFB.
DATA hexDigits<>+0(SB)/8, $"01234567"
DATA hexDigits<>+8(SB)/8, $"89abcdef"
DATA hexDigits<>+16(SB)/8, $"01234567"
DATA hexDigits<>+24(SB)/8, $"89abcdef"
GLOBL hexDigits<>(SB), RODATA|NOPTR, $32

// func hexEncodeAVX2(dst, src *byte, n int)
// Writes the 2n lowercase hex digits of src[0:n] to dst, 16 input bytes per
// step (n must be a multiple of 16): each byte is zero-extended to a 16-bit
// lane holding its high nibble in the low byte and its low nibble in the
// high byte (first digit at the lower address), and the 32 nibbles are
// looked up in the digit table.
TEXT ·hexEncodeAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVDQU hexDigits<>(SB), Y14
	MOVL    $0x0F000F00, AX
	MOVD    AX, X15
	VPBROADCASTD X15, Y15

hexloop:
	CMPQ      CX, $16
	JLT       hexdone
	VPMOVZXBW (SI), Y1
	VPSRLW    $4, Y1, Y2
	VPSLLW    $8, Y1, Y3
	VPAND     Y15, Y3, Y3
	VPOR      Y2, Y3, Y4
	VPSHUFB   Y4, Y14, Y5
	VMOVDQU   Y5, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JMP       hexloop

hexdone:
	VZEROUPPER
	RET
