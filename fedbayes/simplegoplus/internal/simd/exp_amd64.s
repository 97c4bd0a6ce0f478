// AVX2 exponential of float32 (see exp.go). Written by hand.

#include "textflag.h"

// func exp32(x, y *float32, n int, consts *float64, table *uint64, limits *float32)
// y[i] = e^x[i] for i < n (a multiple of 8), the computation of fastmath.Exp32 on 4 float64 lanes at
// a time with the same operations in the same order (no fused multiply-adds): t = x*32/ln2 +
// 1.5*2^52, r = x - (t - 1.5*2^52)*ln2/32, the degree-5 polynomial by Horner, the scale from the
// table of 2^(j/32) and the exponent bits of n = low 32 bits of t; then NaN, x > 88.8 (+Inf) and x <
// -104 (0) as Exp32 has them; y is written after x's 8 values are read (y may be x). consts: 32/ln2, 1.5*2^52, ln2/32, 1/120, 1/24, 1/6, 1/2, 1; limits:
// 88.8, -104, +Inf as float32.
TEXT ·exp32(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ consts+24(FP), R8
	MOVQ table+32(FP), R9
	MOVQ limits+40(FP), R10
	VBROADCASTSD (R8), Y8
	VBROADCASTSD 8(R8), Y9
	VBROADCASTSD 16(R8), Y10
	VBROADCASTSD 24(R8), Y11
	VBROADCASTSD 32(R8), Y12
	VBROADCASTSD 40(R8), Y13
	VBROADCASTSD 48(R8), Y14
	XORQ AX, AX
loop:
	MOVQ CX, BX
	SUBQ AX, BX
	CMPQ BX, $8
	JLT done
	MOVL $31, DX
	VMOVD DX, X7
	VPBROADCASTD X7, X7
	VCVTPS2PD (SI)(AX*4), Y0 // xd
	VMULPD Y8, Y0, Y1
	VADDPD Y9, Y1, Y1 // t = xd*invLn232 + shifter
	VSUBPD Y9, Y1, Y2
	VMULPD Y10, Y2, Y2
	VSUBPD Y2, Y0, Y2 // r = xd - (t-shifter)*ln2By32
	VMULPD Y11, Y2, Y3
	VADDPD Y12, Y3, Y3 // 1/24 + r/120
	VMULPD Y3, Y2, Y3
	VADDPD Y13, Y3, Y3 // 1/6 + r*a
	VMULPD Y3, Y2, Y3
	VADDPD Y14, Y3, Y3 // 1/2 + r*a
	VBROADCASTSD 56(R8), Y6 // 1
	VMULPD Y3, Y2, Y3
	VADDPD Y6, Y3, Y3 // 1 + r*a
	VMULPD Y3, Y2, Y3
	VADDPD Y6, Y3, Y3 // p = 1 + r*a
	VEXTRACTF128 $1, Y1, X4
	VSHUFPS $0x88, X4, X1, X4 // n (int32) of the 4 lanes
	VPSRAD $5, X4, X5
	VPMOVSXDQ X5, Y5
	VPSLLQ $52, Y5, Y5 // uint64(n>>5)<<52
	VPAND X7, X4, X4 // n&31 (X7: 31 in each lane)
	VPCMPEQD Y6, Y6, Y6
	VPXOR Y1, Y1, Y1
	VPGATHERDQ Y6, (R9)(X4*8), Y1 // table[n&31]
	VPADDQ Y5, Y1, Y1 // scale bits
	VMULPD Y1, Y3, Y3
	VCVTPD2PSY Y3, X15 // the first 4 results
	VCVTPS2PD 16(SI)(AX*4), Y0 // xd
	VMULPD Y8, Y0, Y1
	VADDPD Y9, Y1, Y1 // t = xd*invLn232 + shifter
	VSUBPD Y9, Y1, Y2
	VMULPD Y10, Y2, Y2
	VSUBPD Y2, Y0, Y2 // r = xd - (t-shifter)*ln2By32
	VMULPD Y11, Y2, Y3
	VADDPD Y12, Y3, Y3 // 1/24 + r/120
	VMULPD Y3, Y2, Y3
	VADDPD Y13, Y3, Y3 // 1/6 + r*a
	VMULPD Y3, Y2, Y3
	VADDPD Y14, Y3, Y3 // 1/2 + r*a
	VBROADCASTSD 56(R8), Y6 // 1
	VMULPD Y3, Y2, Y3
	VADDPD Y6, Y3, Y3 // 1 + r*a
	VMULPD Y3, Y2, Y3
	VADDPD Y6, Y3, Y3 // p = 1 + r*a
	VEXTRACTF128 $1, Y1, X4
	VSHUFPS $0x88, X4, X1, X4 // n (int32) of the 4 lanes
	VPSRAD $5, X4, X5
	VPMOVSXDQ X5, Y5
	VPSLLQ $52, Y5, Y5 // uint64(n>>5)<<52
	VPAND X7, X4, X4 // n&31 (X7: 31 in each lane)
	VPCMPEQD Y6, Y6, Y6
	VPXOR Y1, Y1, Y1
	VPGATHERDQ Y6, (R9)(X4*8), Y1 // table[n&31]
	VPADDQ Y5, Y1, Y1 // scale bits
	VMULPD Y1, Y3, Y3
	VCVTPD2PSY Y3, X3
	VINSERTF128 $1, X3, Y15, Y1 // the 8 results
	// The special cases, on the 8 float32 lanes.
	VMOVUPS (SI)(AX*4), Y0
	VBROADCASTSS (R10), Y2
	VCMPPS $0x1e, Y2, Y0, Y3 // x > 88.8
	VBROADCASTSS 8(R10), Y4
	VBLENDVPS Y3, Y4, Y1, Y1
	VBROADCASTSS 4(R10), Y2
	VCMPPS $0x11, Y2, Y0, Y3 // x < -104
	VXORPS Y4, Y4, Y4
	VBLENDVPS Y3, Y4, Y1, Y1
	VCMPPS $0x03, Y0, Y0, Y3 // x is NaN
	VBLENDVPS Y3, Y0, Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	VZEROUPPER
	RET
