package simplegoplus

import (
	"math"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// Valid, unit-stride float32 convolutions with few channels, computed directly (the vector loops
// of package simd, with FMA). The first: one input channel and 4 to 8 output channels (the first
// layer of the LeNets on MNIST-like images), each output pixel its taps' fused multiply-adds on one
// vector of output channels (simd.ConvRow); its patches would be a matrix 25 times the input and its
// gemm has 6 columns, which BLAS handles poorly. The second: 16 output channels (LeNet's second
// layer), each pixel on two vectors of 8 channels (simd.ConvRow16); its patches would be copied in
// runs of a few channels. Their kernel gradients likewise (simd.KGradRows, simd.KGradRows16). The
// sums run over the taps (and input channels) in order from zero, and the kernel gradients' over
// blocks of examples added in order, so the results depend only on the shapes, not on the number of
// cores; they differ from the gemm's in the last bits.

// oneChannelRows reports whether the convolution has the direct form: two spatial axes, one input
// channel, 4 to 8 output channels, no padding, unit strides and no dilation, and the vector kernels
// available.
func (g *convGeometry) oneChannelRows() bool {
	return simd.FMAAvailable && g.cin == 1 && g.cout >= 4 && g.cout <= 8 && g.validUnit()
}

// directForm is how execConvGeneral computes a float32 convolution without a gemm, if it does.
type directForm int

const (
	directNone         directForm = iota // a gemm form (convBLAS) or SimpleGo's executor
	directOne                            // convOneChannel: oneChannelRows
	directSixteen                        // convSixteen: sixteenChannelRows
	directKGradOne                       // kernelGradOneChannel: the kernel gradient of a oneChannelRows forward
	directKGradSixteen                   // kernelGradSixteen: the kernel gradient of a sixteenChannelRows forward
)

// String names the form, for test messages.
func (d directForm) String() string {
	switch d {
	case directOne:
		return "directOne"
	case directSixteen:
		return "directSixteen"
	case directKGradOne:
		return "directKGradOne"
	case directKGradSixteen:
		return "directKGradSixteen"
	}
	return "directNone"
}

// direct returns the direct form of the float32 convolution g, or directNone: a kernel gradient
// (isKernelGradient) is direct when its forward is; any other convolution when it is not computed
// as a scatter (useScatter) and has one of the forward forms. execConvGeneral's dispatch and the
// builder (directConv) both classify with it, so they cannot disagree.
func (g *convGeometry) direct() directForm {
	if g.isKernelGradient() {
		switch f := g.forward(); {
		case f.oneChannelRows():
			return directKGradOne
		case f.sixteenChannelRows():
			return directKGradSixteen
		}
		return directNone
	}
	switch {
	case g.useScatter():
		return directNone
	case g.sixteenChannelRows():
		return directSixteen
	case g.oneChannelRows():
		return directOne
	}
	return directNone
}

// directConv reports whether an ungrouped convolution with these (normalised) parameters is float32
// and direct: then it needs no BLAS, and the builder keeps it as a ConvGeneral node for
// execConvGeneral even when OpenBLAS is not in use.
func directConv(xs, ks shapes.Shape, axes backends.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int) bool {
	if xs.DType != dtypes.Float32 || ks.DType != dtypes.Float32 ||
		xs.Dimensions[axes.InputChannels] != ks.Dimensions[axes.KernelInputChannels] {
		return false // a mismatch is reported by the composed lowering
	}
	os, err := shapeinference.ConvGeneralOp(xs, ks, axes, strides, paddings, inputDilations, kernelDilations, 1, 1)
	if err != nil {
		return false
	}
	p := convData{axes: axes, strides: strides, paddings: paddings, inputDilations: inputDilations, kernelDilations: kernelDilations}
	g := p.geometry(xs, ks, os)
	return g.direct() != directNone
}

// validUnit reports whether the convolution has two spatial axes, no padding, unit strides and no
// dilation.
func (g *convGeometry) validUnit() bool {
	return len(g.in) == 2 && g.validUnitAxes()
}

// validUnitAxes reports whether every spatial axis has no padding, unit strides and no dilation.
func (g *convGeometry) validUnitAxes() bool {
	for i := range g.in {
		if g.stride[i] != 1 || g.kDil[i] != 1 || g.inDil[i] != 1 || g.padLow[i] != 0 ||
			g.out[i]+g.kernel[i]-1 != g.in[i] {
			return false
		}
	}
	return true
}

// sixteenChannelRows reports whether the convolution has the direct form of simd.ConvRow16:
// validUnit, 16 output channels, and more than one input channel (one goes to oneChannelRows).
func (g *convGeometry) sixteenChannelRows() bool {
	return simd.FMAAvailable && g.cout == 16 && g.cin > 1 && g.validUnit()
}

// convSixteen computes y [B, O0, O1, 16] from x [B, S0, S1, Cin] and w [K0, K1, Cin, 16] for a
// convolution with sixteenChannelRows, output rows split over the cores: each output its taps' and
// channels' fused multiply-adds in order, on two vectors of 8 channels.
func convSixteen(g convGeometry, x, w, y []float32) {
	s0, s1, cin := g.in[0], g.in[1], g.cin
	o0, o1 := g.out[0], g.out[1]
	k0, k1 := g.kernel[0], g.kernel[1]
	offs := make([]int, 0, k0*k1)
	for i := range k0 {
		for j := range k1 {
			offs = append(offs, (i*s1+j)*cin)
		}
	}
	rows := g.batch * o0
	rowsPerChunk := max(1, chunkElems/(o1*16*k0*k1*cin/8))
	parallelChunks(rows, rowsPerChunk, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			b, oy := row/o0, row%o0
			xr := x[(b*s0+oy)*s1*cin : (b+1)*s0*s1*cin]
			yr := y[row*o1*16 : (row+1)*o1*16]
			if !simd.ConvRow16(xr, w, offs, cin, o1, yr) {
				convRow16Scalar(xr, w, offs, cin, o1, yr)
			}
		}
	})
}

// convRow16Scalar is simd.ConvRow16's computation in Go (the same fused multiply-adds), for a row
// the vector loop does not take (none when sixteenChannelRows holds: a safeguard).
func convRow16Scalar(x, w []float32, offs []int, cin, n int, out []float32) {
	for p := range n {
		for c := range 16 {
			var acc float32
			for t, o := range offs {
				for i := range cin {
					acc = fma32(x[p*cin+o+i], w[(t*cin+i)*16+c], acc)
				}
			}
			out[p*16+c] = acc
		}
	}
}

// convOneChannel computes y [B, O0, O1, Cout] from x [B, S0, S1] and w [K0, K1, Cout] for a
// convolution with oneChannelRows, output rows split over the cores.
func convOneChannel(g convGeometry, x, w, y []float32) {
	s0, s1 := g.in[0], g.in[1]
	o0, o1 := g.out[0], g.out[1]
	k0, k1 := g.kernel[0], g.kernel[1]
	cout := g.cout
	// Each tap's weights padded to 8 lanes, and its offset from the pixel it adds to.
	lanes := make([]float32, 8*k0*k1)
	offs := make([]int, 0, k0*k1)
	for i := range k0 {
		for j := range k1 {
			t := i*k1 + j
			copy(lanes[8*t:8*t+cout], w[t*cout:(t+1)*cout])
			offs = append(offs, i*s1+j)
		}
	}
	rows := g.batch * o0
	rowsPerChunk := max(1, chunkElems/(o1*cout*k0*k1/4))
	parallelChunks(rows, rowsPerChunk, func(lo, hi int) {
		for row := lo; row < hi; row++ {
			b, oy := row/o0, row%o0
			xr := x[b*s0*s1+oy*s1 : (b+1)*s0*s1]
			yr := y[row*o1*cout : (row+1)*o1*cout]
			if !simd.ConvRow(xr, lanes, offs, o1, cout, yr) {
				convRowScalar(xr, lanes, offs, o1, cout, yr)
			}
		}
	})
}

// convRowScalar is simd.ConvRow's computation in Go (with the same fused multiply-adds), for a
// row the vector loop does not take (none when oneChannelRows holds: a safeguard).
func convRowScalar(x, lanes []float32, offs []int, n, cout int, out []float32) {
	for p := range n {
		for c := range cout {
			var acc float32
			for t, o := range offs {
				acc = fma32(x[p+o], lanes[8*t+c], acc)
			}
			out[p*cout+c] = acc
		}
	}
}

// fma32 is a*b + c rounded once to float64 and then to float32: the float32 fused multiply-add
// but in rare double-rounding cases (one unit in the last place).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// kgradExamples is how many examples one partial kernel gradient covers: the partials (a fixed
// split by the batch size, so the result does not depend on the number of cores) are computed on
// both cores and added in order.
const kgradExamples = 4

// blockPartials returns the sum over examples [0, batch) of per-example accumulations of accLen
// values: add(b, acc) adds example b's terms into acc. The examples go in blocks of kgradExamples,
// each block's partial (from zero, its examples in order) computed on whichever core is free; the
// partials are then added in block order, so the result depends only on batch, not on the number
// of cores. A batch of zero examples gives zeros.
func blockPartials(batch, accLen int, add func(b int, acc []float32)) []float32 {
	blocks := (batch + kgradExamples - 1) / kgradExamples
	partial := make([]float32, max(blocks, 1)*accLen)
	parallelDo(blocks, func(blk int) {
		acc := partial[blk*accLen : (blk+1)*accLen]
		for b := blk * kgradExamples; b < min(batch, (blk+1)*kgradExamples); b++ {
			add(b, acc)
		}
	})
	total := partial[:accLen] // block 0, then the others added in order
	for blk := 1; blk < blocks; blk++ {
		addTo(total, partial[blk*accLen:(blk+1)*accLen])
	}
	return total
}

// kernelGradOneChannel computes the kernel gradient dw [K0, K1, Cout] of a convolution f with
// oneChannelRows, from its input x [B, S0, S1] and output gradient dy [B, O0, O1, Cout]: dw[t, c] =
// sum over examples and output pixels p of x[b, p + t] * dy[b, p, c], taps in groups of
// simd.KGradTaps, each group's sums over a block of examples in pixel order, the blocks added in
// order.
func kernelGradOneChannel(f convGeometry, x, dy, dw []float32) {
	s0, s1 := f.in[0], f.in[1]
	o0, o1 := f.out[0], f.out[1]
	k1, cout := f.kernel[1], f.cout
	nTaps := sizeOf(f.kernel)
	groups := (nTaps + simd.KGradTaps - 1) / simd.KGradTaps
	offs := make([]int, groups*simd.KGradTaps)
	for k := range offs {
		t := min(k, nTaps-1) // the last group padded with the last tap; its sums are not used
		offs[k] = t/k1*s1 + t%k1
	}
	total := blockPartials(f.batch, groups*simd.KGradTaps*8, func(b int, acc []float32) {
		xb, dyb := x[b*s0*s1:(b+1)*s0*s1], dy[b*o0*o1*cout:(b+1)*o0*o1*cout]
		for g := range groups {
			gOffs := offs[g*simd.KGradTaps : (g+1)*simd.KGradTaps]
			gAcc := acc[g*simd.KGradTaps*8 : (g+1)*simd.KGradTaps*8]
			if !simd.KGradRows(xb, dyb, gOffs, o0, o1, s1, cout, gAcc) {
				kgradRowsScalar(xb, dyb, gOffs, o0, o1, s1, cout, gAcc)
			}
		}
	})
	for t := range nTaps {
		copy(dw[t*cout:(t+1)*cout], total[t*8:t*8+cout])
	}
}

// kgradRowsScalar is simd.KGradRows's computation in Go (the same fused multiply-adds, in the same
// order), for arguments the vector loop does not take (none when oneChannelRows holds: a safeguard).
func kgradRowsScalar(x, dy []float32, offs []int, rows, n, xStride, cout int, acc []float32) {
	for r := range rows {
		for p := range n {
			for k, o := range offs {
				xv := x[r*xStride+p+o]
				for c := range cout {
					acc[k*8+c] = fma32(xv, dy[(r*n+p)*cout+c], acc[k*8+c])
				}
			}
		}
	}
}

// kernelGradSixteen computes the kernel gradient dw [Cin, K0, K1, 16] of a convolution f with
// sixteenChannelRows, from its input x [B, S0, S1, Cin] and output gradient dy [B, O0, O1, 16]:
// dw[i, t, c] = sum over examples and output pixels p of x[b, p + t, i] * dy[b, p, c], (tap, input
// channel) pairs in groups of simd.KGradPairs16, each group's sums over a block of examples in
// pixel order, the blocks added in order (as kernelGradOneChannel).
func kernelGradSixteen(f convGeometry, x, dy, dw []float32) {
	s0, s1, cin := f.in[0], f.in[1], f.cin
	o0, o1 := f.out[0], f.out[1]
	k1 := f.kernel[1]
	nTaps := sizeOf(f.kernel)
	nPairs := nTaps * cin // pair q = t*cin + i
	const gp = simd.KGradPairs16
	groups := (nPairs + gp - 1) / gp
	offs := make([]int, groups*gp)
	for k := range offs {
		q := min(k, nPairs-1) // the last group padded with the last pair; its sums are not used
		t, i := q/cin, q%cin
		offs[k] = (t/k1*s1+t%k1)*cin + i
	}
	total := blockPartials(f.batch, groups*gp*16, func(b int, acc []float32) {
		xb, dyb := x[b*s0*s1*cin:(b+1)*s0*s1*cin], dy[b*o0*o1*16:(b+1)*o0*o1*16]
		for g := range groups {
			gOffs, gAcc := offs[g*gp:(g+1)*gp], acc[g*gp*16:(g+1)*gp*16]
			if !simd.KGradRows16(xb, dyb, gOffs, o0, o1, s1*cin, cin, gAcc) {
				kgradRows16Scalar(xb, dyb, gOffs, o0, o1, s1*cin, cin, gAcc)
			}
		}
	})
	for q := range nPairs {
		t, i := q/cin, q%cin
		copy(dw[(i*nTaps+t)*16:(i*nTaps+t+1)*16], total[q*16:(q+1)*16])
	}
}

// kgradRows16Scalar is simd.KGradRows16's computation in Go (the same fused multiply-adds, in the
// same order), for arguments the vector loop does not take (none when sixteenChannelRows holds).
func kgradRows16Scalar(x, dy []float32, offs []int, rows, n, xStride, pixStride int, acc []float32) {
	for r := range rows {
		for p := range n {
			for k, o := range offs {
				xv := x[r*xStride+p*pixStride+o]
				for c := range 16 {
					acc[k*16+c] = fma32(xv, dy[(r*n+p)*16+c], acc[k*16+c])
				}
			}
		}
	}
}
