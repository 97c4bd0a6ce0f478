package simplegoplus

import (
	"testing"

	"fedbayes.dev/fedbayes/data"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// TestLeNetFashionMNIST trains the LeNet CNN on real Fashion-MNIST (installed by `make data`) for 40
// steps of 32 new examples each, and checks the loss went down.
func TestLeNetFashionMNIST(t *testing.T) {
	train, _, err := data.LoadFashionMNIST(data.Dir())
	if err != nil {
		t.Skipf("Fashion-MNIST not installed (run `make data`): %v", err)
	}
	const steps, batch = 40, 32
	size := 1
	for _, d := range train.Shape {
		size *= d
	}
	if train.Len() < steps*batch || size != 28*28 {
		t.Fatalf("unexpected Fashion-MNIST: %d examples of shape %v", train.Len(), train.Shape)
	}
	for _, opt := range []struct {
		name string
		opt  optimizers.Interface
	}{
		{"sgd momentum", momentumSGD{lr: 0.02, mu: 0.9, wd: 5e-4}},
		{"adam", optimizers.Adam().LearningRate(2e-3).Done()},
	} {
		t.Run(opt.name, func(t *testing.T) {
			tr := newTrainer(plusBackend(), lenetModel(10, 0.2), opt.opt, 3)
			ls := trainSteps(t, tr, steps, func(s int) (*tensors.Tensor, *tensors.Tensor) {
				lo, hi := s*batch, (s+1)*batch
				x := tensors.FromFlatDataAndDimensions(train.X[lo*size:hi*size], batch, 28, 28, 1)
				y := tensors.FromFlatDataAndDimensions(append([]int32(nil), train.Labels[lo:hi]...), batch, 1)
				return x, y
			})
			first, last := mean(ls[:5]), mean(ls[len(ls)-5:])
			t.Logf("loss: first 5 steps %.3f, last 5 steps %.3f", first, last)
			if !(last < 0.75*first) {
				t.Fatalf("loss did not go down on Fashion-MNIST: %.3f -> %.3f (%v)", first, last, ls)
			}
		})
	}
}
