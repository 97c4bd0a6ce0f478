// AVX2 loops of tiled max pooling and its gradient (see pool.go). Written by hand.

#include "textflag.h"

// func maxRow32(x, out *float32, taps *int, nTaps, n, inStep, run int)
// For each of n windows w and each block of 8 lanes c0 < run: out[w*run+c0+l] = the first maximum
// over the taps k of x[taps[k]+w*inStep+c0+l] (the first value, then each later one that is greater).
TEXT ·maxRow32(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ taps+16(FP), R8
	MOVQ nTaps+24(FP), R9
	MOVQ n+32(FP), CX
	XORQ R12, R12 // w*inStep
	XORQ R13, R13 // w*run
window:
	TESTQ CX, CX
	JZ done
	XORQ R14, R14 // c0
lanes:
	CMPQ R14, run+48(FP)
	JGE next
	MOVQ R12, BX
	ADDQ R14, BX // base offset of the lanes
	MOVQ (R8), AX
	ADDQ BX, AX
	VMOVUPS (SI)(AX*4), Y0
	MOVQ $1, R10
tap:
	CMPQ R10, R9
	JGE store
	MOVQ (R8)(R10*8), AX
	ADDQ BX, AX
	VMOVUPS (SI)(AX*4), Y1
	VCMPPS $0x1e, Y0, Y1, Y2 // v > d (ordered: false with NaN)
	VBLENDVPS Y2, Y1, Y0, Y0 // d = v > d ? v : d
	INCQ R10
	JMP tap
store:
	MOVQ R13, AX
	ADDQ R14, AX
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, R14
	JMP lanes
next:
	ADDQ inStep+40(FP), R12
	ADDQ run+48(FP), R13
	DECQ CX
	JMP window
done:
	VZEROUPPER
	RET

// func argmaxRow32(x, src, out *float32, taps *int, nTaps, n, inStep, run, srcStep int)
// For each window w and block of lanes c0: the tap index of the first maximum, as in maxRow32; then
// every tap's position in out gets src[w*srcStep+c0+l] where the tap is that maximum, else +0.
TEXT ·argmaxRow32(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ src+8(FP), DX
	MOVQ out+16(FP), DI
	MOVQ taps+24(FP), R8
	MOVQ nTaps+32(FP), R9
	MOVQ n+40(FP), CX
	XORQ R12, R12 // w*inStep
	XORQ R13, R13 // w*srcStep
window:
	TESTQ CX, CX
	JZ done
	// The blocks of lanes from the last to the first: the lanes a last, partial block writes past
	// the run belong to the next tap's first block (written after it) or to the next window.
	MOVQ run+56(FP), R14
	DECQ R14
	ANDQ $-8, R14 // c0 of the last block
lanes:
	TESTQ R14, R14
	JS next
	MOVQ R12, BX
	ADDQ R14, BX
	MOVQ (R8), AX
	ADDQ BX, AX
	VMOVUPS (SI)(AX*4), Y0 // best value
	VPXOR Y3, Y3, Y3       // index of the best tap
	MOVQ $1, R10
tap:
	CMPQ R10, R9
	JGE scatter
	MOVQ (R8)(R10*8), AX
	ADDQ BX, AX
	VMOVUPS (SI)(AX*4), Y1
	VCMPPS $0x1e, Y0, Y1, Y2
	VBLENDVPS Y2, Y1, Y0, Y0
	VMOVQ R10, X4
	VPBROADCASTD X4, Y4
	VBLENDVPS Y2, Y4, Y3, Y3
	INCQ R10
	JMP tap
scatter:
	MOVQ R13, AX
	ADDQ R14, AX
	VMOVUPS (DX)(AX*4), Y5 // gradients of the windows
	XORQ R10, R10
put:
	CMPQ R10, R9
	JGE nextlanes
	VMOVQ R10, X4
	VPBROADCASTD X4, Y4
	VPCMPEQD Y3, Y4, Y6
	VANDPS Y5, Y6, Y6
	MOVQ (R8)(R10*8), AX
	ADDQ BX, AX
	VMOVUPS Y6, (DI)(AX*4)
	INCQ R10
	JMP put
nextlanes:
	SUBQ $8, R14
	JMP lanes
next:
	ADDQ inStep+48(FP), R12
	ADDQ srcStep+64(FP), R13
	DECQ CX
	JMP window
done:
	VZEROUPPER
	RET
