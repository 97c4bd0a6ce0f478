package models

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// matmul contracts x [K, B, in] with w [K, in, out] per client: DotGeneral with K as batch axis gives
// [K, B, out].
func matmul(x, w *Node) *Node {
	return DotGeneral(x, []int{2}, []int{0}, w, []int{1}, []int{0})
}

// addBias adds a per-client bias [K, out] to y [K, ..., out].
func addBias(y, bias *Node) *Node {
	dims := make([]int, y.Rank())
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = bias.Shape().Dimensions[0]
	dims[len(dims)-1] = bias.Shape().Dimensions[1]
	return Add(y, Reshape(bias, dims...))
}

// dense applies the next weight layer as a dense layer to x [K, B, in], returning [K, B, out]. A
// Bayesian layer uses the model's estimator (see Estimator); its weights are Gaussian, and so are its
// biases unless the model follows CompatBFLP (deterministic biases).
func (b *builder) dense(x *Node, out int) *Node {
	in := x.Shape().Dimensions[2]
	batch := x.Shape().Dimensions[1]
	scope, bayes := b.nextWeightLayer("dense")
	wInit, bInit := b.weightInit(in, bayes)
	w := b.param(scope, "weights", []int{in, out}, wInit, bayes)
	bias := b.param(scope, "biases", []int{out}, bInit, bayes && !b.m.cfg.vblinear())
	if !bayes {
		return addBias(matmul(x, w.mean), bias.mean)
	}
	switch b.m.cfg.Estimator {
	case Reparam:
		wSample := Add(w.mean, Mul(w.sigma, b.normal(in, out)))
		return addBias(matmul(x, wSample), b.biasSample(bias, out))
	case LocalReparam:
		mean := addBias(matmul(x, w.mean), bias.mean)
		variance := b.outputVariance(matmul(Square(x), w.variance), bias)
		return Add(mean, Mul(Sqrt(variance), b.normal(batch, out)))
	default: // Flipout
		bSample := b.biasSample(bias, out)
		delta := Mul(w.sigma, b.normal(in, out))
		perturbation := Mul(matmul(Mul(x, b.sign(batch, in)), delta), b.sign(batch, out))
		return Add(addBias(matmul(x, w.mean), bSample), perturbation)
	}
}

// biasSample is one reparameterised sample of a Gaussian bias [K, out], or a deterministic bias's value.
func (b *builder) biasSample(bias weight, out int) *Node {
	if bias.sigma == nil {
		return bias.mean
	}
	return Add(bias.mean, Mul(bias.sigma, b.normal(out)))
}

// outputVariance is the local-reparameterisation variance of a layer's output: the weights' part plus
// a Gaussian bias's variance, plus BFLPVarianceFloor under CompatBFLP (BFL-P's VBLinear.forward).
func (b *builder) outputVariance(weightsPart *Node, bias weight) *Node {
	v := weightsPart
	if bias.variance != nil {
		v = addBias(v, bias.variance)
	}
	if b.m.cfg.vblinear() {
		v = AddScalar(v, BFLPVarianceFloor)
	}
	return v
}

// convPerClient convolves x [K, B, H, W, C] with kernel [K, kh, kw, C, out], each client with its own
// kernel, returning [K, B, H', W', out]. The per-client convolutions are independent nodes of one graph.
func convPerClient(x, kernel *Node, stride int, same bool) *Node {
	k := x.Shape().Dimensions[0]
	conv := func(xk, kk *Node) *Node {
		c := Convolve(xk, kk).Strides(stride)
		if same {
			c = c.PadSame()
		} else {
			c = c.NoPadding()
		}
		return ExpandAxes(c.Done(), 0)
	}
	if k == 1 {
		return conv(Squeeze(x, 0), Squeeze(kernel, 0))
	}
	parts := make([]*Node, k)
	for i := range parts {
		parts[i] = conv(Squeeze(Slice(x, AxisElem(i)), 0), Squeeze(Slice(kernel, AxisElem(i)), 0))
	}
	return Concatenate(parts, 0)
}

// conv applies the next weight layer as a 2D convolution (size x size kernel, channels last) to
// x [K, B, H, W, C]. A Bayesian layer uses the model's estimator; see Estimator for LocalReparam on
// convolutions, and dense for the biases.
func (b *builder) conv(x *Node, out, size, stride int, same bool) *Node {
	in := x.Shape().Dimensions[4]
	scope, bayes := b.nextWeightLayer("conv")
	fanIn := size * size * in
	wInit, bInit := b.weightInit(fanIn, bayes)
	w := b.param(scope, "weights", []int{size, size, in, out}, wInit, bayes)
	bias := b.param(scope, "biases", []int{out}, bInit, bayes && !b.m.cfg.vblinear())
	if !bayes {
		return addBias(convPerClient(x, w.mean, stride, same), bias.mean)
	}
	switch b.m.cfg.Estimator {
	case Reparam:
		wSample := Add(w.mean, Mul(w.sigma, b.normal(size, size, in, out)))
		return addBias(convPerClient(x, wSample, stride, same), b.biasSample(bias, out))
	case LocalReparam:
		mean := addBias(convPerClient(x, w.mean, stride, same), bias.mean)
		variance := b.outputVariance(convPerClient(Square(x), w.variance, stride, same), bias)
		return Add(mean, Mul(Sqrt(variance), b.normal(mean.Shape().Dimensions[1:]...)))
	default: // Flipout
		mean := addBias(convPerClient(x, w.mean, stride, same), b.biasSample(bias, out))
		delta := Mul(w.sigma, b.normal(size, size, in, out))
		flipped := Mul(x, b.sign(x.Shape().Dimensions[1:]...))
		perturbation := convPerClient(flipped, delta, stride, same)
		perturbation = Mul(perturbation, b.sign(perturbation.Shape().Dimensions[1:]...))
		return Add(mean, perturbation)
	}
}

// maxPool2 applies 2x2 max-pooling with stride 2 to x [K, B, H, W, C] (pooling is per example, so the
// client and batch axes are merged for it).
func maxPool2(x *Node) *Node {
	d := x.Shape().Dimensions
	y := MaxPool(Reshape(x, d[0]*d[1], d[2], d[3], d[4])).Window(2).Done()
	yd := y.Shape().Dimensions
	return Reshape(y, d[0], d[1], yd[1], yd[2], yd[3])
}

// flatten reshapes x [K, B, ...] to [K, B, features].
func flatten(x *Node) *Node {
	d := x.Shape().Dimensions
	return Reshape(x, d[0], d[1], -1)
}

// relu is the ReLU activation, max(x, 0): GoMLX's activations.Relu with the zero as a scalar instead
// of a tensor of zeros (ZerosLike), the same values without materialising the zeros, forward and in
// the gradient.
func relu(x *Node) *Node { return Max(x, ScalarZero(x.Graph(), x.DType())) }

// dropout applies MC dropout to x [K, ...] when the model is an MCDropout net, in training and in
// prediction alike (Gal and Ghahramani 2016): each unit is kept with probability 1 - rate and scaled
// by 1 / (1 - rate). The mask comes from the per-client RNG streams. Other nets pass x through.
func (b *builder) dropout(x *Node) *Node {
	if b.m.cfg.Kind != MCDropout {
		return x
	}
	rate := b.m.cfg.DropoutRate
	keep := GreaterOrEqual(b.uniform(x.Shape().Dimensions[1:]...), Scalar(b.g, x.DType(), rate))
	return Mul(x, MulScalar(ConvertDType(keep, x.DType()), 1/(1-rate)))
}

// Batch normalisation constants (PyTorch's defaults).
const (
	bnEpsilon  = 1e-5
	bnMomentum = 0.1 // running = (1 - bnMomentum) * running + bnMomentum * batch
)

// batchNorm normalises x [K, B, H, W, C] per client and channel (Ioffe and Szegedy 2015). In training it
// uses the batch statistics of each client (gradients flow through them) and updates that client's
// running averages; in prediction it uses the running averages. GoMLX's batchnorm layer keeps one set of
// statistics for the whole batch, which would mix clients, so this layer is built from plain ops (which
// the pure-Go backend runs, gradients included).
func (b *builder) batchNorm(x *Node) *Node {
	scope := b.nextLayer("bn")
	d := x.Shape().Dimensions
	c := d[len(d)-1]
	scale := b.param(scope, "scale", []int{c}, oneInit, false).mean
	offset := b.param(scope, "offset", []int{c}, zeroInit, false).mean
	runMean := b.state(scope, "running_mean", []int{c}, zeroInit)
	runVar := b.state(scope, "running_var", []int{c}, oneInit)
	statDims := []int{d[0], 1, 1, 1, c}
	var mean, variance *Node
	if b.training && b.mask != nil {
		// Statistics over the real examples only (Batch.Mask): count = sum(mask) x H x W per client.
		m5 := Reshape(b.mask, d[0], d[1], 1, 1, 1)
		count := MulScalar(ReduceSum(b.mask, 1), float64(d[2]*d[3])) // [K]
		safe := Max(count, OnesLike(count))
		per := Reshape(safe, d[0], 1, 1, 1, 1)
		mean = Div(ReduceAndKeep(Mul(x, m5), ReduceSum, 1, 2, 3), per)
		variance = Div(ReduceAndKeep(Mul(Square(Sub(x, mean)), m5), ReduceSum, 1, 2, 3), per)
		correction := Reshape(Div(safe, Max(AddScalar(safe, -1), OnesLike(safe))), d[0], 1) // n / (n - 1)
		unbiased := Mul(Reshape(StopGradient(variance), d[0], c), correction)
		rm, rv := runMean.ValueGraph(b.g), runVar.ValueGraph(b.g)
		runMean.SetValueGraph(Add(MulScalar(rm, 1-bnMomentum), MulScalar(Reshape(StopGradient(mean), d[0], c), bnMomentum)))
		runVar.SetValueGraph(Add(MulScalar(rv, 1-bnMomentum), MulScalar(unbiased, bnMomentum)))
	} else if b.training {
		mean = ReduceAndKeep(x, ReduceMean, 1, 2, 3)
		variance = ReduceAndKeep(Square(Sub(x, mean)), ReduceMean, 1, 2, 3)
		n := float64(d[1] * d[2] * d[3])
		unbiased := MulScalar(Reshape(StopGradient(variance), d[0], c), n/max(1, n-1))
		rm, rv := runMean.ValueGraph(b.g), runVar.ValueGraph(b.g)
		runMean.SetValueGraph(Add(MulScalar(rm, 1-bnMomentum), MulScalar(Reshape(StopGradient(mean), d[0], c), bnMomentum)))
		runVar.SetValueGraph(Add(MulScalar(rv, 1-bnMomentum), MulScalar(unbiased, bnMomentum)))
	} else {
		mean = Reshape(runMean.ValueGraph(b.g), statDims...)
		variance = Reshape(runVar.ValueGraph(b.g), statDims...)
	}
	normalized := Div(Sub(x, mean), Sqrt(AddScalar(variance, bnEpsilon)))
	return Add(Mul(normalized, Reshape(scale, statDims...)), Reshape(offset, statDims...))
}
