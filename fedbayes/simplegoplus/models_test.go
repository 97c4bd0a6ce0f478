package simplegoplus

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
	"github.com/gomlx/gomlx/pkg/ml/layers"
	"github.com/gomlx/gomlx/pkg/ml/layers/activations"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// The test models: the nets the fedbayes models are built from, written with GoMLX layers.

// mlpModel is a dense net: input flattened, hidden ReLU layers, logits.
func mlpModel(hidden []int, classes int, dropout float64) train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		x := inputs[0]
		x = Reshape(x, x.Shape().Dimensions[0], -1)
		for i, h := range hidden {
			x = activations.Relu(layers.DenseWithBias(ctx.In(fmt.Sprintf("dense_%d", i)), x, h))
			x = layers.DropoutStatic(ctx, x, dropout)
		}
		return []*Node{layers.DenseWithBias(ctx.In("logits"), x, classes)}
	}
}

// lenetModel is the LeNet-style CNN of the papers (Ozer et al. 2022, Jamoussi et al.): conv 5x5 (6)
// -> ReLU -> max-pool 2x2, conv 5x5 (16) -> ReLU -> max-pool 2x2, dense 120 -> 84 -> classes, on
// channels-last images [batch, H, W, C].
func lenetModel(classes int, dropout float64) train.ModelFn {
	return func(ctx *context.Context, _ any, inputs []*Node) []*Node {
		x := inputs[0]
		for i, filters := range []int{6, 16} {
			x = layers.Convolution(ctx.In(fmt.Sprintf("conv_%d", i)), x).Filters(filters).KernelSize(5).NoPadding().Done()
			x = MaxPool(activations.Relu(x)).Window(2).Done()
		}
		x = Reshape(x, x.Shape().Dimensions[0], -1)
		for i, h := range []int{120, 84} {
			x = activations.Relu(layers.DenseWithBias(ctx.In(fmt.Sprintf("dense_%d", i)), x, h))
			x = layers.DropoutStatic(ctx, x, dropout)
		}
		return []*Node{layers.DenseWithBias(ctx.In("logits"), x, classes)}
	}
}

// momentumSGD is SGD with heavy-ball momentum and L2 weight decay (g += wd*w; m = mu*m + g;
// w -= lr*m), as used by the papers' clients. GoMLX v0.26.0's optimizers.StochasticGradientDescent
// has neither, so this test-only optimizer adds them on GoMLX's optimizer interface.
type momentumSGD struct{ lr, mu, wd float64 }

// UpdateGraph implements optimizers.Interface.
func (o momentumSGD) UpdateGraph(ctx *context.Context, g *Graph, loss *Node) {
	grads := ctx.BuildTrainableVariablesGradientsGraph(loss)
	_ = optimizers.IncrementGlobalStepGraph(ctx, g, loss.DType())
	i := 0
	for v := range ctx.IterVariables() {
		if !v.Trainable || !v.InUseByGraph(g) {
			continue
		}
		w := v.ValueGraph(g)
		grad := Add(grads[i], MulScalar(w, o.wd))
		m := ctx.Checked(false).InAbsPath("/sgd_momentum"+v.Scope()).WithInitializer(initializers.Zero).
			VariableWithShape(v.Name()+"_m", w.Shape()).SetTrainable(false)
		mNew := Add(MulScalar(m.ValueGraph(g), o.mu), grad)
		m.SetValueGraph(mNew)
		v.SetValueGraph(Sub(w, MulScalar(mNew, o.lr)))
		i++
	}
}

// Clear implements optimizers.Interface.
func (o momentumSGD) Clear(ctx *context.Context) error {
	return ctx.InAbsPath("/sgd_momentum").DeleteVariablesInScope()
}

// newTrainer returns a trainer for model on backend with a fixed seed.
func newTrainer(be backends.Backend, model train.ModelFn, opt optimizers.Interface, seed int64) *train.Trainer {
	ctx := context.New()
	ctx.SetParam(context.ParamInitialSeed, seed)
	if err := ctx.SetRNGStateFromSeed(seed); err != nil {
		panic(err)
	}
	return train.NewTrainer(be, ctx, model, losses.SparseCategoricalCrossEntropyLogits, opt, nil, nil)
}

// syntheticBatch returns a learnable classification batch: each class has a fixed random template,
// and an example is its class template plus noise. Images are [n, dims...], labels [n, 1] int32.
func syntheticBatch(seed uint64, n, classes int, dims []int) (*tensors.Tensor, *tensors.Tensor) {
	size := sizeOf(dims)
	templates := randFloats(99, classes*size)
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float32, n*size)
	y := make([]int32, n)
	for i := range n {
		c := r.IntN(classes)
		y[i] = int32(c)
		for j := range size {
			x[i*size+j] = float32(templates[c*size+j] + 0.5*r.NormFloat64())
		}
	}
	return tensors.FromFlatDataAndDimensions(x, append([]int{n}, dims...)...), tensors.FromFlatDataAndDimensions(y, n, 1)
}

// trainSteps runs steps training steps on fixed batches and returns the loss of each step.
func trainSteps(t testing.TB, tr *train.Trainer, steps int, batch func(step int) (*tensors.Tensor, *tensors.Tensor)) []float64 {
	t.Helper()
	var lossesOut []float64
	for s := range steps {
		x, y := batch(s)
		var m []*tensors.Tensor
		var err error
		if perr := catch(func() { m, err = tr.TrainStep(nil, []*tensors.Tensor{x}, []*tensors.Tensor{y}) }); perr != nil {
			t.Fatalf("step %d panicked: %v", s, perr)
		}
		if err != nil {
			t.Fatalf("step %d: %v", s, err)
		}
		lossesOut = append(lossesOut, float64(tensors.MustCopyFlatData[float32](m[0])[0]))
	}
	return lossesOut
}

// mean returns the mean of v.
func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestModelsTrain trains the dense net and the LeNet CNN (1x28x28 and 3x32x32), with and without
// dropout, with momentum SGD (weight decay) and Adam, on synthetic data, and checks the loss drops.
func TestModelsTrain(t *testing.T) {
	const classes, batchSize = 10, 32
	for _, tc := range []struct {
		name  string
		dims  []int
		model train.ModelFn
		steps int
	}{
		{"mlp", []int{28, 28, 1}, mlpModel([]int{100}, classes, 0), 30},
		{"mlp dropout", []int{28, 28, 1}, mlpModel([]int{100}, classes, 0.3), 30},
		{"lenet 1x28x28", []int{28, 28, 1}, lenetModel(classes, 0), 30},
		{"lenet 1x28x28 dropout", []int{28, 28, 1}, lenetModel(classes, 0.3), 30},
		{"lenet 3x32x32", []int{32, 32, 3}, lenetModel(classes, 0), 30},
	} {
		for _, opt := range []struct {
			name string
			opt  func() optimizers.Interface
		}{
			{"sgd momentum", func() optimizers.Interface { return momentumSGD{lr: 0.02, mu: 0.9, wd: 1e-4} }},
			{"adam", func() optimizers.Interface { return optimizers.Adam().LearningRate(1e-3).Done() }},
		} {
			t.Run(tc.name+"/"+opt.name, func(t *testing.T) {
				tr := newTrainer(plusBackend(), tc.model, opt.opt(), 1)
				// 4 distinct batches cycled, so the loss is measured on data the model has seen.
				ls := trainSteps(t, tr, tc.steps, func(s int) (*tensors.Tensor, *tensors.Tensor) {
					return syntheticBatch(uint64(s%4), batchSize, classes, tc.dims)
				})
				first, last := mean(ls[:4]), mean(ls[len(ls)-4:])
				if !(last < 0.7*first) {
					t.Fatalf("loss did not go down: first 4 steps %.4f, last 4 steps %.4f (%v)", first, last, ls)
				}
			})
		}
	}
}

// TestTrainingDeterministic checks same seed, same losses (dropout included).
func TestTrainingDeterministic(t *testing.T) {
	run := func() []float64 {
		tr := newTrainer(plusBackend(), lenetModel(10, 0.3), momentumSGD{lr: 0.02, mu: 0.9, wd: 1e-4}, 5)
		return trainSteps(t, tr, 3, func(s int) (*tensors.Tensor, *tensors.Tensor) {
			return syntheticBatch(uint64(s), 16, 10, []int{28, 28, 1})
		})
	}
	a, b := run(), run()
	closeSlices(t, "losses of two runs", a, b, 0)
}

// TestConvGradient checks the convolution gradient (which needs Reverse, and Pad when strided or
// dilated) against finite differences in float64, for input and kernel.
func TestConvGradient(t *testing.T) {
	for _, tc := range []struct {
		name             string
		xDims, kDims     []int
		stride, dilation int
		same             bool
	}{
		{"5x5 valid", []int{2, 8, 7, 2}, []int{5, 5, 2, 3}, 1, 1, false},
		{"3x3 same stride 2", []int{1, 7, 6, 2}, []int{3, 3, 2, 2}, 2, 1, true},
		{"3x3 dilation 2", []int{1, 8, 8, 1}, []int{3, 3, 1, 2}, 1, 2, false},
		{"1d", []int{2, 9, 3}, []int{3, 3, 2}, 1, 1, false}, // odd kernels only: see docs/pure-go-backend.md on even ones
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, k := randFloats(20, sizeOf(tc.xDims)), randFloats(21, sizeOf(tc.kDims))
			xT, kT := tensors.FromFlatDataAndDimensions(x, tc.xDims...), tensors.FromFlatDataAndDimensions(k, tc.kDims...)
			conv := func(x, k *Node) *Node {
				c := Convolve(x, k).StridePerAxis(sliceOf(len(tc.xDims)-2, tc.stride)...).DilationPerAxis(sliceOf(len(tc.xDims)-2, tc.dilation)...)
				if tc.same {
					c = c.PadSame()
				}
				return c.Done()
			}
			gradCheck(t, plusBackend(), func(x *Node) *Node { return conv(x, ConstCachedTensor(x.Graph(), kT)) }, x, tc.xDims, 1e-6)
			gradCheck(t, plusBackend(), func(k *Node) *Node { return conv(ConstCachedTensor(k.Graph(), xT), k) }, k, tc.kDims, 1e-6)
			// Forward pass equal to stock SimpleGo's.
			want, _ := eval(t, stockBackend(), conv, xT, kT)
			got, _ := eval(t, plusBackend(), conv, xT, kT)
			closeSlices(t, "conv forward vs stock", got, want, 1e-12)
		})
	}
}

// sliceOf returns n copies of v.
func sliceOf(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
