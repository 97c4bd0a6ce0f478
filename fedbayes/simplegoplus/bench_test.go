package simplegoplus

import (
	"testing"

	"github.com/gomlx/gomlx/backends"
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
