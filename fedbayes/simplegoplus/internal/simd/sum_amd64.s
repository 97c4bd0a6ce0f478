// AVX2 loops that add runs of float32 (see sum.go). Written by hand.

#include "textflag.h"

// The masks of the last block are laneMasks (simd.go): the 8 lanes from index 8-k have the first k on.

// func sumRows32(x, dst *float32, rows, width, stride int)
// dst[c] += x[r*stride+c] for r = 0, 1, ..., rows-1 in turn, for each c < width: 8 columns at a
// time, the last block masked (nothing read or written past width).
TEXT ·sumRows32(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ width+24(FP), DX
	MOVQ stride+32(FP), R13
	SHLQ $2, R13 // row stride in bytes
	LEAQ ·laneMasks(SB), BX
	XORQ R8, R8 // c0
block:
	CMPQ R8, DX
	JGE done
	MOVQ DX, AX
	SUBQ R8, AX // columns left
	CMPQ AX, $8
	JLE mask
	MOVQ $8, AX
mask:
	MOVQ $8, R9
	SUBQ AX, R9
	VMOVDQU (BX)(R9*4), Y7
	LEAQ (DI)(R8*4), R10
	VMASKMOVPS (R10), Y7, Y0
	LEAQ (SI)(R8*4), R11
	MOVQ rows+16(FP), R12
row:
	TESTQ R12, R12
	JZ store
	VMASKMOVPS (R11), Y7, Y1
	VADDPS Y1, Y0, Y0
	ADDQ R13, R11
	DECQ R12
	JMP row
store:
	VMASKMOVPS Y0, Y7, (R10)
	ADDQ $8, R8
	JMP block
done:
	VZEROUPPER
	RET

// func addTo32(dst, src *float32, n int)
// dst[i] += src[i] for i < n: 8 at a time, the last block masked.
TEXT ·addTo32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX
full:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT tail
	VMOVUPS (DI)(AX*4), Y0
	VADDPS (SI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP full
tail:
	TESTQ DX, DX
	JZ done
	LEAQ ·laneMasks(SB), BX
	MOVQ $8, R9
	SUBQ DX, R9
	VMOVDQU (BX)(R9*4), Y7
	LEAQ (DI)(AX*4), R10
	LEAQ (SI)(AX*4), R11
	VMASKMOVPS (R10), Y7, Y0
	VMASKMOVPS (R11), Y7, Y1
	VADDPS Y1, Y0, Y0
	VMASKMOVPS Y0, Y7, (R10)
done:
	VZEROUPPER
	RET
