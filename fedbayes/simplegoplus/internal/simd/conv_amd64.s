// AVX2+FMA loop of a valid, unit-stride convolution with one input channel (see conv.go). Written by
// hand.

#include "textflag.h"

// func convRow32(x, w *float32, offs *int, nTaps int, out *float32, n, cout int, mask *int32)
// For output pixels p = 0..n-1 of one row: out[p*cout+c] = sum over taps t in order of
// x[p+offs[t]] * w[t*8+c] (fused multiply-adds from 0), c < cout <= 8. Four pixels at a time; each
// pixel's 8 lanes are stored whole (the lanes past cout belong to the next pixel, stored after it)
// but the row's last pixel, whose store is masked to cout lanes.
TEXT ·convRow32(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	MOVQ offs+16(FP), R8
	MOVQ nTaps+24(FP), R9
	MOVQ out+32(FP), DI
	MOVQ n+40(FP), CX
	MOVQ cout+48(FP), R11
	SHLQ $2, R11 // bytes from one pixel's outputs to the next
	MOVQ mask+56(FP), AX
	VMOVDQU (AX), Y15
group4:
	CMPQ CX, $5 // four pixels, keeping the last one for the masked store
	JLT single
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ R10, R10
	MOVQ DX, R12
tap4:
	CMPQ R10, R9
	JGE store4
	MOVQ (R8)(R10*8), AX
	VMOVUPS (R12), Y8
	VBROADCASTSS (SI)(AX*4), Y4
	VBROADCASTSS 4(SI)(AX*4), Y5
	VBROADCASTSS 8(SI)(AX*4), Y6
	VBROADCASTSS 12(SI)(AX*4), Y7
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y8, Y5, Y1
	VFMADD231PS Y8, Y6, Y2
	VFMADD231PS Y8, Y7, Y3
	ADDQ $32, R12
	INCQ R10
	JMP tap4
store4:
	VMOVUPS Y0, (DI)
	ADDQ R11, DI
	VMOVUPS Y1, (DI)
	ADDQ R11, DI
	VMOVUPS Y2, (DI)
	ADDQ R11, DI
	VMOVUPS Y3, (DI)
	ADDQ R11, DI
	ADDQ $16, SI
	SUBQ $4, CX
	JMP group4
single:
	TESTQ CX, CX
	JZ done
	VXORPS Y0, Y0, Y0
	XORQ R10, R10
	MOVQ DX, R12
tap1:
	CMPQ R10, R9
	JGE store1
	MOVQ (R8)(R10*8), AX
	VBROADCASTSS (SI)(AX*4), Y4
	VFMADD231PS (R12), Y4, Y0
	ADDQ $32, R12
	INCQ R10
	JMP tap1
store1:
	CMPQ CX, $1
	JEQ last
	VMOVUPS Y0, (DI)
	JMP next1
last:
	VMASKMOVPS Y0, Y15, (DI)
next1:
	ADDQ R11, DI
	ADDQ $4, SI
	DECQ CX
	JMP single
done:
	VZEROUPPER
	RET
