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

// func kgradRows32(x, dy *float32, offs *int, rows, n, xStride, cout int, acc *float32, mask *int32)
// The kernel gradient of ConvRow's convolution for 13 taps, over rows of n output pixels: for each
// tap k, acc[k*8+c] += x[r*xStride+p+offs[k]] * dy[(r*n+p)*cout+c] (fused), pixels p and rows r in
// order. dy is read masked to cout lanes; acc holds 8 lanes per tap, the lanes past cout unused.
TEXT ·kgradRows32(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ offs+16(FP), R8
	MOVQ rows+24(FP), CX
	MOVQ n+32(FP), R10
	MOVQ xStride+40(FP), R12
	SHLQ $2, R12
	MOVQ cout+48(FP), R11
	SHLQ $2, R11
	MOVQ mask+64(FP), AX
	VMOVDQU (AX), Y15
	MOVQ acc+56(FP), DI
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	VMOVUPS 256(DI), Y8
	VMOVUPS 288(DI), Y9
	VMOVUPS 320(DI), Y10
	VMOVUPS 352(DI), Y11
	VMOVUPS 384(DI), Y12
row:
	TESTQ CX, CX
	JZ done
	MOVQ SI, R13
	MOVQ R10, R9
pixel:
	TESTQ R9, R9
	JZ nextrow
	VMASKMOVPS (DX), Y15, Y13
	MOVQ (R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y0
	MOVQ 8(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y1
	MOVQ 16(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y2
	MOVQ 24(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y3
	MOVQ 32(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y4
	MOVQ 40(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y5
	MOVQ 48(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y6
	MOVQ 56(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y7
	MOVQ 64(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y8
	MOVQ 72(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y9
	MOVQ 80(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y10
	MOVQ 88(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y11
	MOVQ 96(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y13, Y14, Y12
	ADDQ $4, R13
	ADDQ R11, DX
	DECQ R9
	JMP pixel
nextrow:
	ADDQ R12, SI
	DECQ CX
	JMP row
done:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	VMOVUPS Y12, 384(DI)
	VZEROUPPER
	RET

// func convRow16(x, w *float32, offs *int, nTaps, cin int, out *float32, n int)
// One output row of a valid, unit-stride convolution with 16 output channels, channels last: for
// pixels p < n, out[p*16+c] = sum over taps t and input channels i, in that order, of
// x[p*cin+offs[t]+i] * w[(t*cin+i)*16+c] (fused multiply-adds from 0). Four pixels at a time.
TEXT ·convRow16(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DX
	MOVQ offs+16(FP), R8
	MOVQ cin+32(FP), R10
	MOVQ R10, R11
	SHLQ $2, R11 // bytes from one pixel's inputs to the next
	MOVQ out+40(FP), DI
	MOVQ n+48(FP), CX
group4:
	CMPQ CX, $4
	JLT single
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ DX, R12
	XORQ BX, BX
tap4:
	CMPQ BX, nTaps+24(FP)
	JGE store4
	MOVQ (R8)(BX*8), AX
	LEAQ (SI)(AX*4), R13
	MOVQ R10, R9
chan4:
	LEAQ (R13)(R11*2), R14
	VMOVUPS (R12), Y8
	VMOVUPS 32(R12), Y9
	VBROADCASTSS (R13), Y10
	VBROADCASTSS (R13)(R11*1), Y11
	VBROADCASTSS (R13)(R11*2), Y12
	VBROADCASTSS (R14)(R11*1), Y13
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $64, R12
	ADDQ $4, R13
	DECQ R9
	JNZ chan4
	INCQ BX
	JMP tap4
store4:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $256, DI
	LEAQ (SI)(R11*4), SI
	SUBQ $4, CX
	JMP group4
single:
	TESTQ CX, CX
	JZ done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVQ DX, R12
	XORQ BX, BX
tap1:
	CMPQ BX, nTaps+24(FP)
	JGE store1
	MOVQ (R8)(BX*8), AX
	LEAQ (SI)(AX*4), R13
	MOVQ R10, R9
chan1:
	VBROADCASTSS (R13), Y10
	VFMADD231PS (R12), Y10, Y0
	VFMADD231PS 32(R12), Y10, Y1
	ADDQ $64, R12
	ADDQ $4, R13
	DECQ R9
	JNZ chan1
	INCQ BX
	JMP tap1
store1:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, DI
	ADDQ R11, SI
	DECQ CX
	JMP single
done:
	VZEROUPPER
	RET

// func kgradRows16(x, dy *float32, offs *int, rows, n, xStride, pixStride int, acc *float32)
// The kernel gradient of ConvRow16's convolution for 6 (tap, input channel) pairs, over rows of n
// output pixels: for each pair k, acc[k*16+c] += x[r*xStride+p*pixStride+offs[k]] *
// dy[(r*n+p)*16+c] (fused), pixels p and rows r in order.
TEXT ·kgradRows16(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), DX
	MOVQ offs+16(FP), R8
	MOVQ rows+24(FP), CX
	MOVQ n+32(FP), R10
	MOVQ xStride+40(FP), R12
	SHLQ $2, R12
	MOVQ pixStride+48(FP), R11
	SHLQ $2, R11
	MOVQ acc+56(FP), DI
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	VMOVUPS 256(DI), Y8
	VMOVUPS 288(DI), Y9
	VMOVUPS 320(DI), Y10
	VMOVUPS 352(DI), Y11
row:
	TESTQ CX, CX
	JZ done
	MOVQ SI, R13
	MOVQ R10, R9
pixel:
	TESTQ R9, R9
	JZ nextrow
	VMOVUPS (DX), Y12
	VMOVUPS 32(DX), Y13
	MOVQ (R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	MOVQ 8(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	MOVQ 16(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	MOVQ 24(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	MOVQ 32(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	MOVQ 40(R8), AX
	VBROADCASTSS (R13)(AX*4), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	ADDQ R11, R13
	ADDQ $64, DX
	DECQ R9
	JMP pixel
nextrow:
	ADDQ R12, SI
	DECQ CX
	JMP row
done:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	VZEROUPPER
	RET
