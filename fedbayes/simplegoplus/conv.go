package simplegoplus

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// ConvGeneral is XLA's general convolution, lowered to patches plus one DotGeneral ("im2col").
//
// SimpleGo's own ConvGeneral is a direct loop over every output element and kernel position, on one
// core; the convolutions GoMLX emits for the gradients (kernel gradient: a convolution with the
// batch as channels and the output as kernel; input gradient: an input-dilated convolution with the
// flipped kernel) are the slowest of all. It also rejects the empty strides GoMLX passes for the
// input gradient. Here:
//
//  1. the input is transposed to [batch, spatial..., channels] and padded (edges, and interior zeros
//     for input dilation) with Pad; the kernel to [spatial..., in, out];
//  2. patches are gathered with strided Slices, enumerating whichever is smaller: the kernel
//     positions (each slice is one kernel tap seen by every output position) or the output
//     positions (each slice is the window of one output position);
//  3. one DotGeneral contracts (kernel position, input channel) with the kernel, and a Transpose puts
//     the axes where axes asks.
//
// Channel or batch grouping is left to SimpleGo.
func (b *Builder) ConvGeneral(input, kernel backends.Op, axes backends.ConvolveAxesConfig, strides []int, paddings [][2]int,
	inputDilations, kernelDilations []int, channelGroupCount, batchGroupCount int) (out backends.Op, err error) {
	defer recoverOp("ConvGeneral", &out, &err)
	xs, ks := b.shape(input), b.shape(kernel)
	n := xs.Rank() - 2
	if n < 0 || ks.Rank() != xs.Rank() || len(axes.InputSpatial) != n || len(axes.KernelSpatial) != n || len(axes.OutputSpatial) != n {
		fail("input %s and kernel %s do not match the axes %+v", xs, ks, axes)
	}
	ones := func(v []int) []int {
		if len(v) == 0 {
			return slices.Repeat([]int{1}, n)
		}
		v = slices.Clone(v)
		for i := range v {
			v[i] = max(v[i], 1)
		}
		return v
	}
	strides, inputDilations, kernelDilations = ones(strides), ones(inputDilations), ones(kernelDilations)
	if len(paddings) == 0 {
		paddings = make([][2]int, n)
	}
	if len(strides) != n || len(inputDilations) != n || len(kernelDilations) != n || len(paddings) != n {
		fail("strides %v, paddings %v and dilations %v / %v must have one entry per spatial axis (%d)",
			strides, paddings, inputDilations, kernelDilations, n)
	}
	if max(channelGroupCount, 1) > 1 || max(batchGroupCount, 1) > 1 || (BLASInUse() && n > 0) ||
		(n > 0 && directConvInUse() && directConv(xs, ks, axes, strides, paddings, inputDilations, kernelDilations)) {
		// Grouped convolutions are SimpleGo's; with OpenBLAS, every other one is a ConvGeneral node
		// that execConvGeneral computes (im2col/col2im plus gemm, or direct), and without it so are
		// those it computes directly (conv_direct.go). The parameters are normalised here because
		// SimpleGo's builder rejects empty strides and empty kernel dilations.
		return must(b.Builder.ConvGeneral(input, kernel, axes, strides, paddings, inputDilations, kernelDilations,
			channelGroupCount, batchGroupCount)), nil
	}
	if xs.Dimensions[axes.InputChannels] != ks.Dimensions[axes.KernelInputChannels] {
		fail("input channels %d (axis %d of %s) != kernel input channels %d (axis %d of %s)",
			xs.Dimensions[axes.InputChannels], axes.InputChannels, xs,
			ks.Dimensions[axes.KernelInputChannels], axes.KernelInputChannels, ks)
	}

	// 1. Canonical layouts, padding and input dilation.
	x := b.transposeIfNeeded(input, slices.Concat([]int{axes.InputBatch}, axes.InputSpatial, []int{axes.InputChannels}))
	w := b.transposeIfNeeded(kernel, slices.Concat(axes.KernelSpatial, []int{axes.KernelInputChannels, axes.KernelOutputChannels}))
	pad := make([]backends.PadAxis, n+2)
	needPad := false
	for i := range n {
		pad[1+i] = backends.PadAxis{Start: paddings[i][0], End: paddings[i][1], Interior: inputDilations[i] - 1}
		needPad = needPad || pad[1+i] != backends.PadAxis{}
	}
	if needPad {
		x = must(b.Pad(x, b.scalarOf(xs.DType, 0), pad...))
	}
	px := b.shape(x).Dimensions // [B, P..., C]
	batch, cin := px[0], px[n+1]
	kDims := b.shape(w).Dimensions[:n]
	cout := b.shape(w).Dimensions[n+1]
	oDims := make([]int, n)
	for i := range n {
		span := (kDims[i]-1)*kernelDilations[i] + 1
		if px[1+i] < span {
			oDims[i] = 0
		} else {
			oDims[i] = (px[1+i]-span)/strides[i] + 1
		}
	}
	kSize, oSize := sizeOf(kDims), sizeOf(oDims)
	var res backends.Op // [B, O..., Cout]
	switch {
	case kSize == 0 || oSize == 0 || batch == 0 || cin == 0 || cout == 0:
		res = b.zerosOf(shapeWith(b.shape(input), slices.Concat([]int{batch}, oDims, []int{cout})))
	case scatterCheaper(xs, axes, strides, kernelDilations, kSize, oSize):
		res = b.convScatter(input, w, axes, paddings, inputDilations, oDims, kDims, cout)
	case kSize <= oSize:
		// 2a. One slice per kernel tap: [B, O..., C] each, concatenated on channels -> [B, O..., K*C].
		parts := make([]backends.Op, 0, kSize)
		for _, k := range windowOffsets(kDims) {
			parts = append(parts, b.spatialSlice(x, px, k, kernelDilations, oDims, strides))
		}
		patches := parts[0]
		if len(parts) > 1 {
			patches = must(b.Concatenate(n+1, parts...))
		}
		// The image batch is a DotGeneral batch axis (the kernel broadcast along it): SimpleGo then
		// splits the product across its workers, and avoids padding a thin [B*O, Cout] output to its
		// 64x64 blocks.
		patches = must(b.Reshape(patches, batch, oSize, kSize*cin))
		res = must(b.DotGeneral(patches, []int{2}, []int{0}, b.batchedKernel(w, batch, kSize*cin, cout), []int{1}, []int{0}))
		res = must(b.Reshape(res, slices.Concat([]int{batch}, oDims, []int{cout})...))
	default:
		// 2b. One slice per output position: the window [B, K..., C], stacked -> [O, B, K*C].
		parts := make([]backends.Op, 0, oSize)
		for _, o := range windowOffsets(oDims) {
			parts = append(parts, must(b.Reshape(b.spatialSlice(x, px, o, strides, kDims, kernelDilations), 1, batch, kSize*cin)))
		}
		patches := parts[0]
		if len(parts) > 1 {
			patches = must(b.Concatenate(0, parts...))
		}
		w2 := must(b.Reshape(w, kSize*cin, cout))
		r := must(b.DotGeneral(patches, []int{2}, nil, w2, []int{0}, nil)) // [O, B, Cout]
		r = must(b.Transpose(r, 1, 0, 2))
		res = must(b.Reshape(r, slices.Concat([]int{batch}, oDims, []int{cout})...))
	}

	// 3. Output layout: canonical axis j goes to output axis target[j].
	target := slices.Concat([]int{axes.OutputBatch}, axes.OutputSpatial, []int{axes.OutputChannels})
	perm := make([]int, n+2)
	for j, t := range target {
		if t < 0 || t >= n+2 {
			fail("output axes %+v out of range for rank %d", axes, n+2)
		}
		perm[t] = j
	}
	return b.transposeIfNeeded(res, perm), nil
}

// spatialSlice slices x [B, P..., C] (dimensions px) along its spatial axes, B and C whole: along
// axis i, count[i] positions step[i] apart from pos[i]*posStep[i]. A kernel tap k's view of every
// output position is (k, kernelDilations, oDims, strides); an output position o's window is (o,
// strides, kDims, kernelDilations).
func (b *Builder) spatialSlice(x backends.Op, px, pos, posStep, count, step []int) backends.Op {
	n := len(pos)
	starts, limits, st := make([]int, n+2), slices.Clone(px), make([]int, n+2)
	st[0], st[n+1] = 1, 1
	for i := range n {
		starts[1+i] = pos[i] * posStep[i]
		limits[1+i] = starts[1+i] + (count[i]-1)*step[i] + 1
		st[1+i] = step[i]
	}
	return must(b.Slice(x, starts, limits, st))
}

// batchedKernel reshapes the canonical kernel to [K*C, Cout] and broadcasts it to [batch, K*C, Cout].
func (b *Builder) batchedKernel(w backends.Op, batch, kc, cout int) backends.Op {
	w2 := must(b.Reshape(w, kc, cout))
	return must(b.BroadcastInDim(w2, shapeWith(b.shape(w), []int{batch, kc, cout}), []int{1, 2}))
}

// scatterCheaper tells whether convScatter applies (unit strides and kernel dilations) and does less
// arithmetic than patches: it multiplies every input element by the whole kernel once, while patches
// multiply every output element by it, padding and dilation zeros included. This is the case of the
// gradient with respect to the input (a "full" convolution of the output gradient).
func scatterCheaper(xs shapes.Shape, axes backends.ConvolveAxesConfig, strides, kernelDilations []int, kSize, oSize int) bool {
	for i := range strides {
		if strides[i] != 1 || kernelDilations[i] != 1 {
			return false
		}
	}
	iSize := 1
	for _, a := range axes.InputSpatial {
		iSize *= xs.Dimensions[a]
	}
	return iSize < oSize
}

// convScatter computes the convolution from the input side ("col2im"): one DotGeneral multiplies each
// input position by every kernel tap, Y[b, i, k, o] = sum_c x[b, i, c] w[k, c, o], and each tap's
// slice is shifted into place with Pad (position p = pad + i*dilation - k, out-of-range cropped) and
// summed. No padding or dilation zero is ever multiplied.
func (b *Builder) convScatter(input, w backends.Op, axes backends.ConvolveAxesConfig, paddings [][2]int, inputDilations, oDims, kDims []int, cout int) backends.Op {
	xs := b.shape(input)
	n := len(oDims)
	x := b.transposeIfNeeded(input, slices.Concat([]int{axes.InputBatch}, axes.InputSpatial, []int{axes.InputChannels}))
	xd := b.shape(x).Dimensions
	batch, cin := xd[0], xd[n+1]
	iDims := xd[1 : n+1]
	iSize, kSize := sizeOf(iDims), sizeOf(kDims)
	// w [K..., C, Cout] -> [C, K*Cout], broadcast over the batch.
	wt := must(b.Transpose(must(b.Reshape(w, kSize, cin, cout)), 1, 0, 2))
	wt = must(b.Reshape(wt, cin, kSize*cout))
	wb := must(b.BroadcastInDim(wt, shapeWith(xs, []int{batch, cin, kSize * cout}), []int{1, 2}))
	x3 := must(b.Reshape(x, batch, iSize, cin))
	y := must(b.DotGeneral(x3, []int{2}, []int{0}, wb, []int{1}, []int{0})) // [B, I, K*Cout]
	y = must(b.Reshape(y, batch, iSize, kSize, cout))
	zero := b.scalarOf(xs.DType, 0)
	var acc backends.Op
	for ki, k := range windowOffsets(kDims) {
		yk := b.slice(y, []int{0, 0, ki, 0}, []int{batch, iSize, ki + 1, cout})
		yk = must(b.Reshape(yk, slices.Concat([]int{batch}, iDims, []int{cout})...))
		cfg := make([]backends.PadAxis, n+2)
		for i := range n {
			start := paddings[i][0] - k[i]
			last := start + (iDims[i]-1)*inputDilations[i]
			cfg[1+i] = backends.PadAxis{Start: start, End: oDims[i] - 1 - last, Interior: inputDilations[i] - 1}
		}
		placed := must(b.Pad(yk, zero, cfg...))
		if acc == nil {
			acc = placed
		} else {
			acc = must(b.Add(acc, placed))
		}
	}
	return acc
}

// transposeIfNeeded transposes x by perm (output axis i = input axis perm[i]) unless perm is the
// identity; perm must be a permutation of x's axes.
func (b *Builder) transposeIfNeeded(x backends.Op, perm []int) backends.Op {
	rank := b.shape(x).Rank()
	seen := make([]bool, rank)
	identity := len(perm) == rank
	for i, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			fail("axes %v are not a permutation of the %d axes of %s", perm, rank, b.shape(x))
		}
		seen[p] = true
		identity = identity && p == i
	}
	if len(perm) != rank {
		fail("axes %v are not a permutation of the %d axes of %s", perm, rank, b.shape(x))
	}
	if identity {
		return x
	}
	return must(b.Transpose(x, perm...))
}
