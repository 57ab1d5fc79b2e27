#include "textflag.h"

// func hammingRowsPOPCNT(codes []uint64, w int, q []uint64, dist []uint16)
TEXT ·hammingRowsPOPCNT(SB), NOSPLIT, $0-80
	MOVQ codes_base+0(FP), SI
	MOVQ w+24(FP), R8
	MOVQ q_base+32(FP), R9
	MOVQ dist_base+56(FP), DI
	MOVQ dist_len+64(FP), CX
	TESTQ CX, CX
	JZ   done

row:
	XORQ AX, AX
	MOVQ R8, DX
	MOVQ R9, BX

word:
	MOVQ    (SI), R10
	XORQ    (BX), R10
	POPCNTQ R10, R10
	ADDQ    R10, AX
	ADDQ    $8, SI
	ADDQ    $8, BX
	DECQ    DX
	JNZ     word
	MOVW    AX, (DI)
	ADDQ    $2, DI
	DECQ    CX
	JNZ     row

done:
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
