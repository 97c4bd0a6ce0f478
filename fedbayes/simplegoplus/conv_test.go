package simplegoplus

import (
	"math"
	"slices"
	"testing"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/shapeinference"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// The convolution layouts the tests and benchmarks use: channels last (GoMLX's default), channels
// first, and the layout of GoMLX's kernel gradient (the input's batch and channels swapped, the
// output shaped like a kernel).
var (
	axesNHWC = backends.ConvolveAxesConfig{InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
		KernelSpatial: []int{0, 1}, KernelInputChannels: 2, KernelOutputChannels: 3,
		OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3}
	axesNCHW = backends.ConvolveAxesConfig{InputBatch: 0, InputChannels: 1, InputSpatial: []int{2, 3},
		KernelInputChannels: 1, KernelOutputChannels: 0, KernelSpatial: []int{2, 3},
		OutputBatch: 0, OutputChannels: 1, OutputSpatial: []int{2, 3}}
	axesKGrad = backends.ConvolveAxesConfig{InputBatch: 3, InputChannels: 0, InputSpatial: []int{1, 2},
		KernelInputChannels: 0, KernelOutputChannels: 3, KernelSpatial: []int{1, 2},
		OutputBatch: 2, OutputChannels: 3, OutputSpatial: []int{0, 1}}
)

// TestConvGeneralVsStock compares this backend's ConvGeneral (patches over kernel taps, patches over
// output positions, and the input-side scatter) with stock SimpleGo's direct loops, including the
// unusual layouts GoMLX's gradients use, in float64.
func TestConvGeneralVsStock(t *testing.T) {
	nhwc, nchw, kgrad := axesNHWC, axesNCHW, axesKGrad
	for _, tc := range []struct {
		name         string
		xDims, kDims []int
		axes         backends.ConvolveAxesConfig
		strides      []int
		pads         [][2]int
		inDil, kDil  []int
		wantScatter  bool
	}{
		{name: "kernel taps", xDims: []int{2, 9, 8, 3}, kDims: []int{3, 3, 3, 4}, axes: nhwc},
		{name: "strided padded", xDims: []int{2, 9, 8, 3}, kDims: []int{3, 2, 3, 4}, axes: nhwc, strides: []int{2, 3}, pads: [][2]int{{1, 2}, {0, 1}}},
		{name: "kernel dilation", xDims: []int{1, 9, 9, 2}, kDims: []int{3, 3, 2, 2}, axes: nhwc, kDil: []int{2, 3}},
		{name: "channels first", xDims: []int{2, 3, 7, 6}, kDims: []int{4, 3, 3, 2}, axes: nchw},
		{name: "channels first, one channel (no transpose needed)", xDims: []int{3, 1, 9, 8}, kDims: []int{4, 1, 3, 3}, axes: nchw},
		{name: "one channel, one output channel", xDims: []int{3, 9, 8, 1}, kDims: []int{3, 3, 1, 1}, axes: nhwc},
		{name: "output positions (kernel-gradient layout)", xDims: []int{5, 7, 7, 2}, kDims: []int{5, 5, 5, 3}, axes: kgrad},
		// LeNet's kernel gradients at batch 8 and 32: taps read as the forward patches transposed
		// (one input channel) or by rows (six), the long contraction split over the cores.
		{name: "LeNet conv1 kernel gradient", xDims: []int{8, 28, 28, 1}, kDims: []int{8, 24, 24, 6}, axes: kgrad},
		{name: "LeNet conv2 kernel gradient", xDims: []int{32, 12, 12, 6}, kDims: []int{32, 8, 8, 16}, axes: kgrad},
		{name: "strided forward's kernel gradient", xDims: []int{4, 13, 13, 1}, kDims: []int{4, 6, 6, 3}, axes: kgrad, kDil: []int{2, 2}, pads: [][2]int{{1, 1}, {2, 0}}},
		{name: "strided forward's kernel gradient, channels", xDims: []int{4, 13, 13, 3}, kDims: []int{4, 6, 6, 3}, axes: kgrad, kDil: []int{2, 1}, pads: [][2]int{{1, 1}, {2, 0}}},
		{name: "LeNet conv2 forward", xDims: []int{4, 12, 12, 6}, kDims: []int{5, 5, 6, 16}, axes: nhwc},
		// Wide rows (conv_wide.go): whole input rows per patch row, the last example's rows read past
		// the input's end.
		{name: "LeNet conv1 forward (wide rows in float64, direct in float32)", xDims: []int{4, 28, 28, 1}, kDims: []int{5, 5, 1, 6}, axes: nhwc},
		// Direct (conv_direct.go) in float32: one input channel, 4 to 8 output channels.
		{name: "one channel, eight outputs, uneven kernel (direct)", xDims: []int{3, 9, 11, 1}, kDims: []int{3, 2, 1, 8}, axes: nhwc},
		{name: "one channel first, four outputs (direct)", xDims: []int{2, 1, 7, 6}, kDims: []int{4, 1, 3, 3}, axes: nchw},
		{name: "two channels, sixteen outputs, rows of 7 (direct)", xDims: []int{3, 7, 9, 2}, kDims: []int{3, 3, 2, 16}, axes: nhwc},
		{name: "sixteen-channel kernel gradient, 20 pairs in groups of 6 (direct)", xDims: []int{5, 6, 6, 5}, kDims: []int{5, 5, 5, 16}, axes: kgrad},
		{name: "one-channel kernel gradient, 5 examples, 4 channels (direct)", xDims: []int{5, 9, 10, 1}, kDims: []int{5, 7, 7, 4}, axes: kgrad},
		{name: "wide rows, two channels first", xDims: []int{3, 2, 10, 9}, kDims: []int{4, 2, 3, 3}, axes: nchw},
		{name: "scatter (input-gradient layout)", xDims: []int{2, 4, 3, 3}, kDims: []int{5, 5, 3, 2}, axes: nhwc, pads: [][2]int{{4, 4}, {4, 4}}},
		{name: "scatter, uneven padding", xDims: []int{2, 4, 5, 3}, kDims: []int{5, 3, 3, 2}, axes: nhwc, pads: [][2]int{{4, 3}, {2, 1}}},
		{name: "scatter, LeNet conv2 input gradient", xDims: []int{4, 8, 8, 16}, kDims: []int{5, 5, 16, 6}, axes: nhwc, pads: [][2]int{{4, 4}, {4, 4}}},
		{name: "scatter with input dilation", xDims: []int{1, 3, 3, 2}, kDims: []int{3, 3, 2, 2}, axes: nhwc, pads: [][2]int{{1, 1}, {2, 1}}, inDil: []int{2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, k := randFloats(30, sizeOf(tc.xDims)), randFloats(31, sizeOf(tc.kDims))
			run := func(be backends.Backend, dt dtypes.DType) []float64 {
				out, _ := eval(t, be, func(x, k *Node) *Node {
					c := Convolve(ConvertDType(x, dt), ConvertDType(k, dt)).AxesConfig(tc.axes)
					strides := tc.strides
					if strides == nil { // stock SimpleGo rejects the empty strides GoMLX passes by default
						strides = sliceOf(len(tc.xDims)-2, 1)
					}
					c = c.StridePerAxis(strides...)
					if tc.pads != nil {
						c = c.PaddingPerDim(tc.pads)
					}
					if tc.inDil != nil {
						c = c.InputDilationPerAxis(tc.inDil...)
					}
					kDil := tc.kDil
					if kDil == nil { // stock SimpleGo indexes empty kernel dilations when the input is dilated
						kDil = sliceOf(len(tc.xDims)-2, 1)
					}
					c = c.DilationPerAxis(kDil...)
					return ConvertDType(c.Done(), dtypes.Float64)
				}, tensors.FromFlatDataAndDimensions(x, tc.xDims...), tensors.FromFlatDataAndDimensions(k, tc.kDims...))
				return out
			}
			closeSlices(t, tc.name, run(plusBackend(), dtypes.Float64), run(stockBackend(), dtypes.Float64), 1e-12)
			// float32, the models' dtype (sgemm, the float32 loops of col2im and the patches), against
			// stock SimpleGo's float32 sums in another order.
			closeSlices(t, tc.name+" float32", run(plusBackend(), dtypes.Float32), run(stockBackend(), dtypes.Float32), 1e-4)
		})
	}
}

// TestReduceWindowVsStock compares the tiled pooling with stock SimpleGo's (and an untiled window,
// which is SimpleGo's own).
func TestReduceWindowVsStock(t *testing.T) {
	dims := []int{2, 7, 6, 3}
	x := tensors.FromFlatDataAndDimensions(randFloats(32, sizeOf(dims)), dims...)
	for name, pool := range map[string]func(x *Node) *Node{
		"max 2x2":        func(x *Node) *Node { return MaxPool(x).Window(2).Done() },
		"min 3x2":        func(x *Node) *Node { return MinPool(x).WindowPerAxis(3, 2).Done() },
		"sum 2x3":        func(x *Node) *Node { return SumPool(x).WindowPerAxis(2, 3).Done() },
		"max 3x3 s1 pad": func(x *Node) *Node { return MaxPool(x).Window(3).Strides(1).PadSame().Done() },
	} {
		got, _ := eval(t, plusBackend(), pool, x)
		want, _ := eval(t, stockBackend(), pool, x)
		closeSlices(t, name, got, want, 1e-12)
	}
}

// TestConvRowScalar checks the Go fallback of the direct convolution against the vector loop on
// LeNet's first layer: the same fused multiply-adds, equal but for rare double roundings (1 ulp).
func TestConvRowScalar(t *testing.T) {
	xs := randFloats(50, 28*28)
	ws := randFloats(51, 25*8)
	x, lanes := make([]float32, len(xs)), make([]float32, len(ws))
	for i, v := range xs {
		x[i] = float32(v)
	}
	for i, v := range ws {
		lanes[i] = float32(v)
	}
	var offs []int
	for i := range 5 {
		for j := range 5 {
			offs = append(offs, i*28+j)
		}
	}
	got, want := make([]float32, 24*6), make([]float32, 24*6)
	convRowScalar(x, lanes, offs, 24, 6, got)
	if !simd.ConvRow(x, lanes, offs, 24, 6, want) {
		t.Skip("no vector kernels here")
	}
	for i := range want {
		if d := int64(math.Float32bits(got[i])) - int64(math.Float32bits(want[i])); d < -1 || d > 1 {
			t.Fatalf("output %d: %v, vector loop %v", i, got[i], want[i])
		}
	}
	// The fallback of the sixteen-channel rows, on a row of LeNet's second layer (12x12x6 input).
	x6 := make([]float32, 12*12*6)
	for i := range x6 {
		x6[i] = float32(math.Cos(float64(i)))
	}
	w16 := make([]float32, 25*6*16)
	for i := range w16 {
		w16[i] = float32(math.Sin(float64(3 * i)))
	}
	var offs6 []int
	for i := range 5 {
		for j := range 5 {
			offs6 = append(offs6, (i*12+j)*6)
		}
	}
	got16, want16 := make([]float32, 8*16), make([]float32, 8*16)
	convRow16Scalar(x6, w16, offs6, 6, 8, got16)
	simd.ConvRow16(x6, w16, offs6, 6, 8, want16)
	for i := range want16 {
		if d := int64(math.Float32bits(got16[i])) - int64(math.Float32bits(want16[i])); d < -1 || d > 1 {
			t.Fatalf("sixteen channels, output %d: %v, vector loop %v", i, got16[i], want16[i])
		}
	}
	// The fallback of the sixteen-channel kernel gradient (6 pairs over the 8x8 output rows).
	dy16 := make([]float32, 8*8*16)
	for i := range dy16 {
		dy16[i] = float32(math.Cos(float64(5 * i)))
	}
	gotAcc16, wantAcc16 := make([]float32, 16*simd.KGradPairs16), make([]float32, 16*simd.KGradPairs16)
	pairs := []int{0, 1, 5, 6, 70, 173}
	kgradRows16Scalar(x6, dy16, pairs, 8, 8, 12*6, 6, gotAcc16)
	simd.KGradRows16(x6, dy16, pairs, 8, 8, 12*6, 6, wantAcc16)
	for i := range wantAcc16 {
		if g, w := float64(gotAcc16[i]), float64(wantAcc16[i]); math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
			t.Fatalf("sixteen-channel kernel gradient %d: %v, vector loop %v", i, g, w)
		}
	}
	// The kernel gradient's fallback, over 24 rows of 24 pixels and the first 13 taps.
	dy := make([]float32, 24*24*6)
	for i := range dy {
		dy[i] = float32(math.Sin(float64(i)))
	}
	gotAcc, wantAcc := make([]float32, 8*simd.KGradTaps), make([]float32, 8*simd.KGradTaps)
	kgradRowsScalar(x, dy, offs[:simd.KGradTaps], 24, 24, 28, 6, gotAcc)
	simd.KGradRows(x, dy, offs[:simd.KGradTaps], 24, 24, 28, 6, wantAcc)
	for k := range simd.KGradTaps {
		for c := range 6 {
			g, w := float64(gotAcc[k*8+c]), float64(wantAcc[k*8+c])
			if math.Abs(g-w) > 1e-5*(1+math.Abs(w)) {
				t.Fatalf("kernel gradient tap %d channel %d: %v, vector loop %v", k, c, g, w)
			}
		}
	}
}

// TestDirectConv checks which convolutions count as direct (conv_direct.go), the ones the builder
// keeps as ConvGeneral nodes for execConvGeneral even without OpenBLAS: LeNet's two forward
// convolutions and their kernel gradients in float32, not their float64 forms, the input gradient,
// a padded or strided convolution or other channel counts.
func TestDirectConv(t *testing.T) {
	nhwc, kgrad := axesNHWC, axesKGrad
	for _, tc := range []struct {
		name         string
		xDims, kDims []int
		axes         backends.ConvolveAxesConfig
		dtype        dtypes.DType
		pad, stride  int
		want         bool
	}{
		{"LeNet conv1", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, dtypes.Float32, 0, 1, true},
		{"LeNet conv2", []int{64, 12, 12, 6}, []int{5, 5, 6, 16}, nhwc, dtypes.Float32, 0, 1, true},
		{"LeNet conv1 kernel gradient", []int{64, 28, 28, 1}, []int{64, 24, 24, 6}, kgrad, dtypes.Float32, 0, 1, true},
		{"LeNet conv2 kernel gradient", []int{64, 12, 12, 6}, []int{64, 8, 8, 16}, kgrad, dtypes.Float32, 0, 1, true},
		{"LeNet conv1 in float64", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, dtypes.Float64, 0, 1, false},
		{"LeNet conv2 input gradient", []int{64, 8, 8, 16}, []int{5, 5, 16, 6}, nhwc, dtypes.Float32, 4, 1, false},
		{"padded", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, dtypes.Float32, 2, 1, false},
		{"strided", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, dtypes.Float32, 0, 2, false},
		{"channels that do not match", []int{64, 28, 28, 64}, []int{5, 5, 1, 6}, nhwc, dtypes.Float32, 0, 1, false},
		{"32 output channels", []int{64, 12, 12, 6}, []int{5, 5, 6, 32}, nhwc, dtypes.Float32, 0, 1, false},
	} {
		xs, ks := shapes.Make(tc.dtype, tc.xDims...), shapes.Make(tc.dtype, tc.kDims...)
		pads := [][2]int{{tc.pad, tc.pad}, {tc.pad, tc.pad}}
		got := directConv(xs, ks, tc.axes, []int{tc.stride, tc.stride}, pads, []int{1, 1}, []int{1, 1})
		if want := tc.want && simd.FMAAvailable; got != want {
			t.Errorf("%s: direct = %v, want %v (FMA available: %v)", tc.name, got, want, simd.FMAAvailable)
		}
	}
}

// TestDirectForm checks which direct form (conv_direct.go) the classifier gives each float32
// convolution, the one execConvGeneral's dispatch and the builder both use: the LeNet layers and
// their kernel gradients get their forms; one input channel with 16 outputs, 3 or 9 outputs, a
// 1-D or padded convolution, an input gradient, a sixteen-output one cheaper as a scatter and a
// one-example kernel gradient (not shaped like one) get none. Without the FMA kernels every convolution gets none.
func TestDirectForm(t *testing.T) {
	nhwc, nchw, kgrad := axesNHWC, axesNCHW, axesKGrad
	conv1d := backends.ConvolveAxesConfig{InputBatch: 0, InputSpatial: []int{1}, InputChannels: 2,
		KernelSpatial: []int{0}, KernelInputChannels: 1, KernelOutputChannels: 2,
		OutputBatch: 0, OutputSpatial: []int{1}, OutputChannels: 2}
	for _, tc := range []struct {
		name         string
		xDims, kDims []int
		axes         backends.ConvolveAxesConfig
		pad          int
		want         directForm
	}{
		{"LeNet conv1", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, 0, directOne},
		{"one channel first, four outputs", []int{2, 1, 7, 6}, []int{4, 1, 3, 3}, nchw, 0, directOne},
		{"one channel, eight outputs", []int{3, 9, 11, 1}, []int{3, 2, 1, 8}, nhwc, 0, directOne},
		{"LeNet conv2", []int{64, 12, 12, 6}, []int{5, 5, 6, 16}, nhwc, 0, directSixteen},
		{"two channels, sixteen outputs", []int{3, 7, 9, 2}, []int{3, 3, 2, 16}, nhwc, 0, directSixteen},
		{"LeNet conv1 kernel gradient", []int{64, 28, 28, 1}, []int{64, 24, 24, 6}, kgrad, 0, directKGradOne},
		{"one-channel kernel gradient, 5 examples", []int{5, 9, 10, 1}, []int{5, 7, 7, 4}, kgrad, 0, directKGradOne},
		{"LeNet conv2 kernel gradient", []int{64, 12, 12, 6}, []int{64, 8, 8, 16}, kgrad, 0, directKGradSixteen},
		{"sixteen-channel kernel gradient, 4 examples", []int{4, 12, 12, 6}, []int{4, 8, 8, 16}, kgrad, 0, directKGradSixteen},
		// With 2 examples, 6 x 25 output values of 2 x 64 terms each is not shaped like a kernel
		// gradient (isKernelGradient): it is a forward with 2 input channels and 16 outputs. With
		// one, a forward with one input channel and 16 outputs, which has no direct form.
		{"sixteen-channel kernel gradient, 2 examples", []int{2, 12, 12, 6}, []int{2, 8, 8, 16}, kgrad, 0, directSixteen},
		{"sixteen-channel kernel gradient, 1 example", []int{1, 12, 12, 6}, []int{1, 8, 8, 16}, kgrad, 0, directNone},
		{"LeNet conv2 input gradient", []int{64, 8, 8, 16}, []int{5, 5, 16, 6}, nhwc, 4, directNone},
		{"padded", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, 2, directNone},
		{"one channel, three outputs", []int{8, 28, 28, 1}, []int{5, 5, 1, 3}, nhwc, 0, directNone},
		{"one channel, nine outputs", []int{8, 28, 28, 1}, []int{5, 5, 1, 9}, nhwc, 0, directNone},
		{"one channel, sixteen outputs", []int{8, 28, 28, 1}, []int{5, 5, 1, 16}, nhwc, 0, directNone},
		{"sixteen outputs, cheaper as a scatter", []int{8, 8, 8, 64}, []int{1, 1, 64, 16}, nhwc, 0, directNone},
		{"kernel gradient of a 32-output layer", []int{64, 12, 12, 6}, []int{64, 8, 8, 32}, kgrad, 0, directNone},
		{"one spatial axis", []int{4, 28, 1}, []int{5, 1, 6}, conv1d, 0, directNone},
	} {
		xs, ks := shapes.Make(dtypes.Float32, tc.xDims...), shapes.Make(dtypes.Float32, tc.kDims...)
		n := len(tc.axes.InputSpatial)
		ones := slices.Repeat([]int{1}, n)
		pads := slices.Repeat([][2]int{{tc.pad, tc.pad}}, n)
		os, err := shapeinference.ConvGeneralOp(xs, ks, tc.axes, ones, pads, ones, ones, 1, 1)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		p := convData{axes: tc.axes, strides: ones, paddings: pads, inputDilations: ones, kernelDilations: ones}
		g := p.geometry(xs, ks, os)
		want := tc.want
		if !simd.FMAAvailable {
			want = directNone
		}
		if got := g.direct(); got != want {
			t.Errorf("%s: form %v, want %v (FMA available: %v)", tc.name, got, want, simd.FMAAvailable)
		}
		if got := directConv(xs, ks, tc.axes, ones, pads, ones, ones); got != (want != directNone) {
			t.Errorf("%s: directConv %v, but the form is %v", tc.name, got, want)
		}
	}
}
