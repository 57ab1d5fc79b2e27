#include "textflag.h"

// func signGatherAVX512(codes []uint64, w int, planes []uint64, pos []int32, dist []uint16, levels, base int)
//
// Per row: base + levels·Σ popcount(c) − 2·Σ_k 2^k·Σ popcount(c AND
// plane_k) (signQuery), eight words a step with VPOPCNTQ, the last w%8
// under a mask K1 (masked-off words are neither read nor faulted on).
TEXT ·signGatherAVX512(SB), NOSPLIT, $0-120
	MOVQ         codes_base+0(FP), SI
	MOVQ         w+24(FP), R8
	MOVQ         planes_base+32(FP), R9
	MOVQ         pos_base+56(FP), R11
	MOVQ         pos_len+64(FP), R10
	MOVQ         dist_base+80(FP), DI
	VPBROADCASTQ levels+104(FP), Z30
	LEAQ         (R8*8), R13 // bytes a row, and a plane
	MOVQ         R8, CX
	ANDQ         $7, CX      // words in the tail
	MOVQ         $1, DX
	SHLQ         CX, DX
	DECQ         DX
	KMOVW        DX, K1      // the tail's mask
	MOVQ         R8, R12
	SHRQ         $3, R12     // whole steps a row
	LEAQ         (R13)(R13*2), R8 // three planes on
	TESTQ        R10, R10
	JZ           sdone

srow:
	// The row 16 ahead is fetched into the cache while this one is
	// counted: the rows a filter passes are scattered, and the hardware
	// does not see where the next one is.
	CMPQ       R10, $16
	JBE        snofetch
	MOVLQSX    64(R11), AX
	IMULQ      R13, AX
	PREFETCHT0 (SI)(AX*1)
	PREFETCHT0 64(SI)(AX*1)

snofetch:
	MOVLQSX (R11), AX
	IMULQ   R13, AX
	LEAQ    (SI)(AX*1), BX
	MOVQ    R9, DX
	VPXORQ  Z0, Z0, Z0 // popcount(c)
	VPXORQ  Z1, Z1, Z1 // Σ_k 2^k·popcount(c AND plane_k)
	MOVQ    R12, AX
	TESTQ   AX, AX
	JZ      stail

sstep:
	VMOVDQU64 (BX), Z2
	VPOPCNTQ  Z2, Z3
	VPADDQ    Z3, Z0, Z0
	VPANDQ    (DX), Z2, Z3
	VPOPCNTQ  Z3, Z3
	VPADDQ    Z3, Z1, Z1
	VPANDQ    (DX)(R13*1), Z2, Z4
	VPOPCNTQ  Z4, Z4
	VPSLLQ    $1, Z4, Z4
	VPADDQ    Z4, Z1, Z1
	VPANDQ    (DX)(R13*2), Z2, Z5
	VPOPCNTQ  Z5, Z5
	VPSLLQ    $2, Z5, Z5
	VPADDQ    Z5, Z1, Z1
	VPANDQ    (DX)(R8*1), Z2, Z6
	VPOPCNTQ  Z6, Z6
	VPSLLQ    $3, Z6, Z6
	VPADDQ    Z6, Z1, Z1
	ADDQ      $64, BX
	ADDQ      $64, DX
	DECQ      AX
	JNZ       sstep

stail:
	TESTQ       CX, CX
	JZ          ssum
	VMOVDQU64.Z (BX), K1, Z2
	VPOPCNTQ    Z2, Z3
	VPADDQ      Z3, Z0, Z0
	VPANDQ.Z    (DX), Z2, K1, Z3
	VPOPCNTQ    Z3, Z3
	VPADDQ      Z3, Z1, Z1
	VPANDQ.Z    (DX)(R13*1), Z2, K1, Z4
	VPOPCNTQ    Z4, Z4
	VPSLLQ      $1, Z4, Z4
	VPADDQ      Z4, Z1, Z1
	VPANDQ.Z    (DX)(R13*2), Z2, K1, Z5
	VPOPCNTQ    Z5, Z5
	VPSLLQ      $2, Z5, Z5
	VPADDQ      Z5, Z1, Z1
	VPANDQ.Z    (DX)(R8*1), Z2, K1, Z6
	VPOPCNTQ    Z6, Z6
	VPSLLQ      $3, Z6, Z6
	VPADDQ      Z6, Z1, Z1

ssum:
	VPMULLQ       Z30, Z0, Z0
	VPSLLQ        $1, Z1, Z1
	VPSUBQ        Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDQ        Y1, Y0, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDQ        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDQ        X1, X0, X0
	VMOVQ         X0, AX
	ADDQ          base+112(FP), AX
	MOVW          AX, (DI)
	ADDQ          $4, R11
	ADDQ          $2, DI
	DECQ          R10
	JNZ           srow

sdone:
	VZEROUPPER
	RET

// func dotQ8AVX2(a []float32, b []int8) float32
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   b_len+32(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ  CX, CX
	JZ     sum

loop:
	VPMOVSXBD   (DI), Y2
	VPMOVSXBD   8(DI), Y3
	VCVTDQ2PS   Y2, Y2
	VCVTDQ2PS   Y3, Y3
	VFMADD231PS (SI), Y2, Y0
	VFMADD231PS 32(SI), Y3, Y1
	ADDQ        $16, DI
	ADDQ        $64, SI
	SUBQ        $16, CX
	JNZ         loop

sum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+48(FP)
	RET

// func dotQ8AVX512(a []float32, b []int8) float32
//
// 64 values a round into four sums (an FMA's latency spans four), then
// 16 a round into the first.
TEXT ·dotQ8AVX512(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   b_len+32(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $64
	JB     q16

q64:
	VPMOVSXBD   (DI), Z4
	VPMOVSXBD   16(DI), Z5
	VPMOVSXBD   32(DI), Z6
	VPMOVSXBD   48(DI), Z7
	VCVTDQ2PS   Z4, Z4
	VCVTDQ2PS   Z5, Z5
	VCVTDQ2PS   Z6, Z6
	VCVTDQ2PS   Z7, Z7
	VFMADD231PS (SI), Z4, Z0
	VFMADD231PS 64(SI), Z5, Z1
	VFMADD231PS 128(SI), Z6, Z2
	VFMADD231PS 192(SI), Z7, Z3
	ADDQ        $64, DI
	ADDQ        $256, SI
	SUBQ        $64, CX
	CMPQ        CX, $64
	JAE         q64

q16:
	TESTQ       CX, CX
	JZ          qsum
	VPMOVSXBD   (DI), Z4
	VCVTDQ2PS   Z4, Z4
	VFMADD231PS (SI), Z4, Z0
	ADDQ        $16, DI
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         q16

qsum:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VZEROUPPER
	MOVSS         X0, ret+48(FP)
	RET

// func prefetchRange(p *int8, n int)
//
// One PREFETCHT0 for each 64 bytes of [p, p+n), the last line included.
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	LEAQ -1(SI)(CX*1), DI // the last byte

fline:
	CMPQ       SI, DI
	JA         fdone
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	JMP        fline

fdone:
	PREFETCHT0 (DI)
	RET
