package simplegoplus

import (
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// benchBatch is the batch size of every training-step benchmark.
const benchBatch = 64

// benchTrainStep measures one SGD step (GoMLX's optimizer, fixed learning rate) of model at batch 64
// on be, and reports samples/s. Compilation happens in an untimed first step; a backend that
// cannot train the model skips with the reason.
func benchTrainStep(b *testing.B, be backends.Backend, model train.ModelFn, dims []int) {
	tr := newTrainer(be, model, optimizers.StochasticGradientDescent().WithDecay(false).WithLearningRate(0.01), 1)
	x, y := syntheticBatch(1, benchBatch, 10, dims)
	step := func() error {
		var err error
		if perr := catch(func() { _, err = tr.TrainStep(nil, []*tensors.Tensor{x}, []*tensors.Tensor{y}) }); perr != nil {
			return perr
		}
		return err
	}
	if err := step(); err != nil {
		b.Skipf("%s cannot train this model: %v", be.Name(), firstLine(err.Error()))
	}
	b.ResetTimer()
	for b.Loop() {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchBatch*b.N)/b.Elapsed().Seconds(), "samples/s")
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// BenchmarkMLP is the 784-100-10 dense net: stock SimpleGo vs this backend, in the same run.
func BenchmarkMLP(b *testing.B) {
	model := mlpModel([]int{100}, 10, 0)
	b.Run("stock", func(b *testing.B) { benchTrainStep(b, stockBackend(), model, []int{28, 28, 1}) })
	b.Run("simplegoplus", func(b *testing.B) { benchTrainStep(b, plusBackend(), model, []int{28, 28, 1}) })
}

// BenchmarkLeNet28 is the LeNet-style CNN on 1x28x28 (Fashion-MNIST). Stock SimpleGo skips: it
// cannot compute the convolution and max-pool gradients.
func BenchmarkLeNet28(b *testing.B) {
	model := lenetModel(10, 0)
	b.Run("stock", func(b *testing.B) { benchTrainStep(b, stockBackend(), model, []int{28, 28, 1}) })
	b.Run("simplegoplus", func(b *testing.B) { benchTrainStep(b, plusBackend(), model, []int{28, 28, 1}) })
}

// BenchmarkLeNet32 is the LeNet-style CNN on 3x32x32 (CIFAR-10, SVHN).
func BenchmarkLeNet32(b *testing.B) {
	b.Run("simplegoplus", func(b *testing.B) { benchTrainStep(b, plusBackend(), lenetModel(10, 0), []int{32, 32, 3}) })
}

// BenchmarkLeNetConv times the five convolutions of a LeNet training step at batch 64 in float32,
// one graph each, as GoMLX lays them out (forward, kernel gradients, input gradient of the second
// layer), so that a change of the convolution executor can be measured op by op:
//
//	go test ./fedbayes/simplegoplus -run '^$' -bench LeNetConv -count 5
func BenchmarkLeNetConv(b *testing.B) {
	nhwc, kgrad := axesNHWC, axesKGrad
	for _, c := range []struct {
		name         string
		xDims, kDims []int
		axes         backends.ConvolveAxesConfig
		pad          int
	}{
		{"conv1", []int{64, 28, 28, 1}, []int{5, 5, 1, 6}, nhwc, 0},
		{"conv2", []int{64, 12, 12, 6}, []int{5, 5, 6, 16}, nhwc, 0},
		{"conv1-kernel-grad", []int{64, 28, 28, 1}, []int{64, 24, 24, 6}, kgrad, 0},
		{"conv2-kernel-grad", []int{64, 12, 12, 6}, []int{64, 8, 8, 16}, kgrad, 0},
		{"conv2-input-grad", []int{64, 8, 8, 16}, []int{5, 5, 16, 6}, nhwc, 4},
	} {
		b.Run(c.name, func(b *testing.B) {
			exec, err := NewExec(plusBackend(), func(x, k *Node) *Node {
				cv := Convolve(x, k).AxesConfig(c.axes)
				if c.pad > 0 {
					cv = cv.PaddingPerDim([][2]int{{c.pad, c.pad}, {c.pad, c.pad}})
				}
				return cv.Done()
			})
			if err != nil {
				b.Fatal(err)
			}
			x := tensors.FromFlatDataAndDimensions(float32s(randFloats(1, sizeOf(c.xDims))), c.xDims...)
			k := tensors.FromFlatDataAndDimensions(float32s(randFloats(2, sizeOf(c.kDims))), c.kDims...)
			if _, err := exec.Exec(x, k); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := exec.Exec(x, k); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// float32s converts v to float32.
func float32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// BenchmarkGather times the strided copies of gatherInto through the ops that use it, in float32:
// a Slice of one client from a [K, ...] tensor (one run), a strided Slice (a gather on every
// axis), a bias broadcast over an image batch (runs of 6 copied) and a value repeated over 6
// channels (BroadcastInDim), and the transpose of a DotGeneral operand (transposeInto, with
// OpenBLAS only), so that a change of the copy loops can be measured:
//
//	go test ./fedbayes/simplegoplus -run '^$' -bench Gather -count 5
func BenchmarkGather(b *testing.B) {
	for _, c := range []struct {
		name string
		dims []int
		fn   func(x *Node) *Node
	}{
		{"slice-client", []int{10, 64, 12, 12, 6}, func(x *Node) *Node { return Slice(x, AxisElem(3)) }},
		{"slice-strided", []int{64, 28, 28, 6}, func(x *Node) *Node {
			return Slice(x, AxisRange(), AxisRange(0, 28).Stride(2), AxisRange(1, 28).Stride(2))
		}},
		{"broadcast-bias", []int{6}, func(x *Node) *Node { return BroadcastPrefix(x, 64, 24, 24) }},
		{"broadcast-repeat", []int{64, 24, 24, 1}, func(x *Node) *Node { return BroadcastToDims(x, 64, 24, 24, 6) }},
		// DotGeneral with OpenBLAS: the operand [K, batch, M] contracted on its first axis is
		// transposed to [batch, M, K] (a gather along the last axis) before a small gemm.
		{"dot-operand-transposed", []int{256, 8, 256}, func(x *Node) *Node {
			return DotGeneral(x, []int{0}, []int{1}, Ones(x.Graph(), shapes.Make(x.DType(), 8, 256, 1)), []int{1}, []int{0})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			exec, err := NewExec(plusBackend(), c.fn)
			if err != nil {
				b.Fatal(err)
			}
			x := tensors.FromFlatDataAndDimensions(float32s(randFloats(1, sizeOf(c.dims))), c.dims...)
			if _, err := exec.Exec(x); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := exec.Exec(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
