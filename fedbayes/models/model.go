package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/internal/catch"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
)

// Model is a network with K independent clients: every parameter has a leading client axis, every input
// batch is [K, B, ...], and the K copies are computed together in one compiled graph.
//
// A Model is not safe for concurrent use.
type Model struct {
	cfg     Config
	backend backends.Backend
	ctx     *context.Context
	k       int
	// exampleSize is the number of values of one example (product of InputShape).
	exampleSize int
	// firstBayesian is the index of the first Bayesian weight layer, or -1 if there is none.
	firstBayesian int

	specs   []*paramSpec // in creation (forward) order
	byName  map[string]*paramSpec
	rngVars []*context.Variable

	predictExec *context.Exec
	// samplesExec holds, per number of samples, the executor of predictSamplesGraph (sharedTrunk
	// models), compiled on first use.
	samplesExec map[int]*context.Exec
	// perSample turns the shared-trunk path off (the reference path of tests and benchmarks).
	perSample bool
	trainer   *Trainer
}

// paramSpec is one parameter of the posterior and the variables that hold it.
type paramSpec struct {
	name     string // posterior name, "/scope/name"
	dims     []int  // per-client shape
	gaussian bool
	// mean holds the mean (or the value of a deterministic parameter), [K, dims...].
	mean *context.Variable
	// spread holds log sigma^2 (LogVarParam) or rho (SoftplusParam); nil if deterministic.
	spread *context.Variable
	// priorMean and priorLogVar hold the per-parameter prior (Config.PriorVariables), else nil.
	priorMean, priorLogVar *context.Variable
}

// noiseScope is the scope of the learned regression noise log-variance.
const noiseScope = "noise"

// New builds a model from cfg on the process-wide backend (backend.Default), initialises its
// parameters (He-normal weights, zero biases, log sigma^2 = InitLogVar; client k from seed Seed+k), and
// returns it. Invalid configurations are reported by field name.
func New(cfg Config) (*Model, error) {
	be, err := backend.Default()
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	return NewWithBackend(be, cfg)
}

// NewWithBackend is New on a given GoMLX backend.
func NewWithBackend(be backends.Backend, cfg Config) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Model{
		cfg:           cfg,
		backend:       be,
		ctx:           context.New().Checked(false),
		k:             cfg.Clients,
		exampleSize:   1,
		firstBayesian: -1,
		byName:        map[string]*paramSpec{},
	}
	for _, d := range cfg.InputShape {
		m.exampleSize *= d
	}
	if cfg.Kind == Bayesian {
		m.firstBayesian = 0
		if cfg.BayesianLayers > 0 {
			m.firstBayesian = numWeightLayers(cfg) - cfg.BayesianLayers
		}
	}
	m.rngVars = make([]*context.Variable, m.k)
	for k := range m.rngVars {
		m.rngVars[k] = m.ctx.In("rng").VariableWithValue(fmt.Sprintf("client_%03d", k), mustRNGState(m.cfg.Seed+int64(k))).SetTrainable(false)
	}
	var err error
	m.predictExec, err = context.NewExec(be, m.ctx, m.predictGraph)
	if err != nil {
		return nil, fmt.Errorf("models: creating the prediction executor: %w", err)
	}
	// One prediction on a zero example creates and initialises every variable.
	zeros := tensors.FromShape(shapes.Make(dtypes.Float32, append([]int{1}, cfg.InputShape...)...))
	if err := catch.Do(func() { m.predictExec.MustExec(zeros) }); err != nil {
		return nil, fmt.Errorf("models: building %s (%s, %d clients): %w", cfg.Arch, cfg.Kind, m.k, err)
	}
	slices.SortFunc(m.specs, func(a, b *paramSpec) int { return strings.Compare(a.name, b.name) })
	if err := m.ResetNoise(); err != nil {
		return nil, err
	}
	return m, nil
}

// mustRNGState is graph.RNGStateFromSeed for seeds (it only fails on a broken tensor allocation).
func mustRNGState(seed int64) *tensors.Tensor {
	t, err := RNGStateFromSeed(seed)
	if err != nil {
		panic(err)
	}
	return t
}

// ResetNoise restarts every client's sampling stream (MC dropout masks, weight noise) from its seed,
// Seed+k, as right after New.
func (m *Model) ResetNoise() error {
	for k, v := range m.rngVars {
		if err := v.SetValue(mustRNGState(m.cfg.Seed + int64(k))); err != nil {
			return fmt.Errorf("models: resetting the noise of client %d: %w", k, err)
		}
	}
	return nil
}

// Config returns the model's configuration with defaults filled in.
func (m *Model) Config() Config { return m.cfg }

// Clients returns K, the number of clients the model holds.
func (m *Model) Clients() int { return m.k }

// Backend returns the GoMLX backend the model computes on.
func (m *Model) Backend() backends.Backend { return m.backend }

// ParamNames returns the names of the posterior's parameters, sorted (layers are named "lNN_kind", so
// this is forward order, biases before weights within a layer).
func (m *Model) ParamNames() []string {
	names := make([]string, len(m.specs))
	for i, s := range m.specs {
		names[i] = s.name
	}
	return names
}

// NumParams counts one client's trainable scalar parameters: the means of Gaussian weights and their
// spreads, and deterministic parameters (batch-norm running statistics, which are not trained, are
// left out). A Bayesian layer has twice the count of its deterministic version (Ozer et al. (2022),
// appendix).
func (m *Model) NumParams() int {
	n := 0
	for _, s := range m.specs {
		if !s.mean.Trainable {
			continue
		}
		size := shapes.Make(m.cfg.DType, s.dims...).Size()
		n += size
		if s.gaussian {
			n += size
		}
	}
	return n
}

// spec returns the parameter scope/name, creating its variables on first use.
func (m *Model) spec(scope, name string, dims []int, init initSpec, gaussian, trainable bool) *paramSpec {
	full := "/" + scope + "/" + name
	if s, ok := m.byName[full]; ok {
		return s
	}
	ctx := m.ctx.In(scope)
	shape := shapes.Make(m.cfg.DType, append([]int{m.k}, dims...)...)
	s := &paramSpec{name: full, dims: slices.Clone(dims), gaussian: gaussian}
	s.mean = ctx.WithInitializer(m.initializer(full, init)).VariableWithShape(name, shape).SetTrainable(trainable)
	if gaussian {
		spreadName, v := name+"_logvar", m.cfg.InitLogVar
		if m.cfg.VarParam == SoftplusParam {
			spreadName, v = name+"_rho", rhoFromLogVar(v)
		}
		spreadInit := initSpec{kind: initConst, value: v}
		if m.cfg.vblinear() { // BFL-P's VBLinear: log sigma^2 ~ N(-9, 0.001^2).
			spreadInit = initSpec{kind: initNormal, value: v, std: BFLPInitLogVarStd}
		}
		s.spread = ctx.WithInitializer(m.initializer(full+"_logvar", spreadInit)).
			VariableWithShape(spreadName, shape).SetTrainable(true)
		if m.cfg.PriorVariables {
			s.priorMean = ctx.WithInitializer(initializers.Zero).VariableWithShape(name+"_prior_mean", shape).SetTrainable(false)
			s.priorLogVar = ctx.WithInitializer(m.initializer(full, initSpec{kind: initConst, value: 2 * math.Log(m.cfg.PriorStd)})).
				VariableWithShape(name+"_prior_logvar", shape).SetTrainable(false)
		}
	}
	m.specs = append(m.specs, s)
	m.byName[full] = s
	return s
}

// rhoFromLogVar inverts sigma = softplus(rho) for sigma = exp(logVar/2), in float64:
// rho = log(expm1(sigma)) = sigma + log(-expm1(-sigma)).
func rhoFromLogVar(logVar float64) float64 {
	sigma := math.Exp(logVar / 2)
	return sigma + math.Log(-math.Expm1(-sigma))
}

// logVarFromRho returns 2 log softplus(rho) with softplus's clamp, in float64.
func logVarFromRho(rho float64) float64 {
	var sp float64
	if rho > 30 {
		sp = rho
	} else {
		sp = math.Log1p(math.Exp(rho))
	}
	sp = math.Min(math.Max(sp, math.Exp(LogVarMin/2)), math.Exp(LogVarMax/2))
	return 2 * math.Log(sp)
}

// inputs converts the network input x [K or 1, B, ...] (float32) to the model dtype, broadcasting a
// shared batch to every client.
func (m *Model) inputs(x *Node) *Node {
	x = ConvertDType(x, m.cfg.DType)
	if x.Shape().Dimensions[0] != m.k {
		d := slices.Clone(x.Shape().Dimensions)
		d[0] = m.k
		x = BroadcastToDims(x, d...)
	}
	return x
}

// predictGraph computes, for a batch x [N, InputShape...] shared by all clients, the class
// probabilities [K, N, C] (classification) or the predictive means [K, N, 1] (regression), plus the
// noise variance [K] (regression only).
func (m *Model) predictGraph(ctx *context.Context, x *Node) []*Node {
	_ = ctx
	b := m.newBuilder(x.Graph(), false)
	out := b.network(m.inputs(ExpandAxes(x, 0)))
	b.finish()
	if m.cfg.Task == Classification {
		return []*Node{ConvertDType(Softmax(out, -1), m.cfg.DType)}
	}
	return []*Node{out, Exp(b.noiseLogVar())}
}

// noiseLogVar is the regression noise log-variance per client, [K]: a learned deterministic parameter
// "/noise/logvar" (Config.LearnNoise) or the constant log NoiseVar.
func (b *builder) noiseLogVar() *Node {
	if b.m.cfg.LearnNoise {
		return Reshape(b.param(noiseScope, "logvar", nil, initSpec{kind: initConst, value: math.Log(b.m.cfg.NoiseVar)}, false).mean, b.m.k)
	}
	return BroadcastToDims(Scalar(b.g, b.m.cfg.DType, math.Log(b.m.cfg.NoiseVar)), b.m.k)
}
