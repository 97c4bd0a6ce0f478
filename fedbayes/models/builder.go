package models

import (
	"fmt"
	"hash/fnv"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// builder carries the state of one graph while a model's network is built in it.
//
// Every tensor of the network has the client axis K first. Random numbers come from one RNG state per
// client, so client k draws exactly the numbers a one-client model with seed Seed+k draws, whatever K is.
type builder struct {
	m        *Model
	g        *Graph
	training bool // batch norm: batch statistics and running-average updates
	// mask weighs the examples of a training batch [K, B] (1 real, 0 padding); nil means all real.
	mask *Node
	// freezeRNG leaves the client RNG states unchanged, so the graph computes a deterministic function of
	// the parameters (used by the numerical checks).
	freezeRNG bool

	rng         []*Node // current RNG state of each client
	kl          *Node   // [K] sum of the KL terms of the Gaussian weights built so far
	layer       int     // index of the next named layer (weight or batch norm)
	weightLayer int     // index of the next weight layer
}

func (m *Model) newBuilder(g *Graph, training bool) *builder {
	b := &builder{m: m, g: g, training: training}
	b.rng = make([]*Node, m.k)
	for k, v := range m.rngVars {
		b.rng[k] = v.ValueGraph(g)
	}
	b.kl = Zeros(g, shapes.Make(m.cfg.DType, m.k))
	return b
}

// finish stores the advanced RNG states.
func (b *builder) finish() {
	if b.freezeRNG {
		return
	}
	for k, v := range b.m.rngVars {
		v.SetValueGraph(b.rng[k])
	}
}

// random draws per-client values of shape [K, dims...] with draw (RandomNormal or RandomUniform).
func (b *builder) random(draw func(state *Node, shape shapes.Shape) (*Node, *Node), dims ...int) *Node {
	shape := shapes.Make(b.m.cfg.DType, dims...)
	parts := make([]*Node, b.m.k)
	for k := range parts {
		var v *Node
		b.rng[k], v = draw(b.rng[k], shape)
		parts[k] = ExpandAxes(v, 0)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return Concatenate(parts, 0)
}

// normal draws standard normal noise of shape [K, dims...].
func (b *builder) normal(dims ...int) *Node { return b.random(RandomNormal, dims...) }

// uniform draws U[0, 1) noise of shape [K, dims...].
func (b *builder) uniform(dims ...int) *Node { return b.random(RandomUniform, dims...) }

// sign draws independent random signs (+1 or -1, each with probability 1/2) of shape [K, dims...].
func (b *builder) sign(dims ...int) *Node {
	u := b.uniform(dims...)
	return Where(LessThan(u, Scalar(b.g, u.DType(), 0.5)), OnesLike(u), Neg(OnesLike(u)))
}

// nextWeightLayer names the next weight layer and says whether it is Bayesian.
func (b *builder) nextWeightLayer(kind string) (scope string, bayesian bool) {
	scope = fmt.Sprintf("l%02d_%s", b.layer, kind)
	b.layer++
	bayesian = b.m.firstBayesian >= 0 && b.weightLayer >= b.m.firstBayesian
	b.weightLayer++
	return
}

// nextLayer names the next parameterised layer that is not a weight layer (batch norm).
func (b *builder) nextLayer(kind string) string {
	scope := fmt.Sprintf("l%02d_%s", b.layer, kind)
	b.layer++
	return scope
}

// initKind says how a variable is initialised.
type initKind int

const (
	initZero initKind = iota
	initOne
	initHe      // N(0, 2 / fanIn), He et al. (2015), as GoMLX's initializers.HeFn
	initConst   // a constant
	initNormal  // N(value, std^2)
	initUniform // U(-std, std)
)

// initSpec is the initialisation of a parameter's mean (or value).
type initSpec struct {
	kind  initKind
	fanIn int     // initHe
	value float64 // initConst, initNormal's mean
	std   float64 // initNormal's standard deviation, initUniform's bound
}

var (
	zeroInit = initSpec{kind: initZero}
	oneInit  = initSpec{kind: initOne}
)

func heInit(fanIn int) initSpec { return initSpec{kind: initHe, fanIn: fanIn} }

// weightInit is the initialisation of a weight layer's weights (or of their means) and biases for fan-in
// fanIn: He-normal weights and zero biases, or under CompatBFLP and CompatBABFL N(0, 1/fanIn) means and zero biases for
// a Bayesian layer (BFL-P's VBLinear.reset_parameters) and PyTorch's default U(-1/sqrt(fanIn),
// 1/sqrt(fanIn)) weights and biases for a deterministic layer (nn.Linear and nn.Conv2d).
func (b *builder) weightInit(fanIn int, bayes bool) (weights, biases initSpec) {
	if !b.m.cfg.vblinear() {
		return heInit(fanIn), zeroInit
	}
	bound := 1 / math.Sqrt(math.Max(1, float64(fanIn)))
	if bayes {
		return initSpec{kind: initNormal, std: bound}, zeroInit
	}
	u := initSpec{kind: initUniform, std: bound}
	return u, u
}

// weight holds the graph values of one parameter: mean (or the deterministic value), and for a Gaussian
// parameter its standard deviation, variance and log-variance, all [K, dims...].
type weight struct {
	mean, sigma, variance, logVar *Node
}

// param returns the graph values of the parameter scope/name of per-client shape dims, creating its
// variables (and registering it for the posterior) the first time. For a Gaussian parameter it also adds
// its KL term to b.kl.
func (b *builder) param(scope, name string, dims []int, init initSpec, gaussian bool) weight {
	m := b.m
	spec := m.spec(scope, name, dims, init, gaussian, true)
	w := weight{mean: spec.mean.ValueGraph(b.g)}
	if !gaussian {
		return w
	}
	spread := spec.spread.ValueGraph(b.g)
	switch m.cfg.VarParam {
	case LogVarParam:
		lo, hi := m.cfg.logVarRange()
		w.logVar = ClipScalar(spread, lo, hi)
		w.sigma = Exp(MulScalar(w.logVar, 0.5))
		w.variance = Exp(w.logVar)
	case SoftplusParam:
		w.sigma = ClipScalar(Softplus(spread), math.Exp(LogVarMin/2), math.Exp(LogVarMax/2))
		w.variance = Square(w.sigma)
		w.logVar = Log(w.variance)
	}
	var priorMean, priorLogVar *Node
	if spec.priorMean != nil {
		priorMean, priorLogVar = spec.priorMean.ValueGraph(b.g), spec.priorLogVar.ValueGraph(b.g)
	} else {
		priorMean = ScalarZero(b.g, m.cfg.DType)
		priorLogVar = Scalar(b.g, m.cfg.DType, 2*math.Log(m.cfg.PriorStd))
	}
	b.kl = Add(b.kl, klGraph(w.mean, w.logVar, w.variance, priorMean, priorLogVar))
	return w
}

// state returns a non-trainable per-client variable (batch-norm running statistics), registered in the
// posterior as a deterministic parameter.
func (b *builder) state(scope, name string, dims []int, init initSpec) *context.Variable {
	return b.m.spec(scope, name, dims, init, false, false).mean
}

// seedFor mixes a seed with a parameter name, so that every parameter of every client has its own
// initialisation stream.
func seedFor(seed int64, name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum64() ^ uint64(seed)*0x9E3779B97F4A7C15)
}

// initializer returns the GoMLX variable initializer of a parameter with the client axis: client k's
// slice is drawn from its own stream seeded by (Seed+k, name).
func (m *Model) initializer(name string, init initSpec) context.VariableInitializer {
	return func(g *Graph, shape shapes.Shape) *Node {
		switch init.kind {
		case initZero:
			return Zeros(g, shape)
		case initOne:
			return Ones(g, shape)
		case initConst:
			return BroadcastToShape(Scalar(g, shape.DType, init.value), shape)
		}
		perClient := shapes.Make(shape.DType, shape.Dimensions[1:]...)
		parts := make([]*Node, m.k)
		for k := range parts {
			state := Const(g, mustRNGState(seedFor(m.cfg.Seed+int64(k), name)))
			var v *Node
			switch init.kind {
			case initNormal:
				_, v = RandomNormal(state, perClient)
				v = AddScalar(MulScalar(v, init.std), init.value)
			case initUniform:
				_, v = RandomUniform(state, perClient)
				v = MulScalar(AddScalar(MulScalar(v, 2), -1), init.std)
			default: // initHe
				_, v = RandomNormal(state, perClient)
				v = MulScalar(v, math.Sqrt(2/math.Max(1, float64(init.fanIn))))
			}
			parts[k] = ExpandAxes(v, 0)
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return Concatenate(parts, 0)
	}
}
