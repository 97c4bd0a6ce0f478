package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/internal/catch"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// OptimizerKind names an optimizer.
type OptimizerKind string

const (
	// SGD is stochastic gradient descent with optional momentum and L2 weight decay (PyTorch's rule).
	SGD OptimizerKind = "sgd"
	// Adam is the update of GoMLX's optimizers.Adam (same formula, decoupled weight decay (AdamW) if
	// WeightDecay > 0) with one step count per client, so that clients that skip steps (Batch.Active)
	// keep their own bias correction.
	Adam OptimizerKind = "adam"
)

// OptimizerConfig configures a Trainer's optimizer.
type OptimizerConfig struct {
	// Kind is SGD or Adam (required).
	Kind OptimizerKind
	// LearningRate is the initial learning rate (required, positive); see Trainer.SetLearningRate.
	LearningRate float64
	// Momentum is SGD's momentum, in [0, 1).
	Momentum float64
	// WeightDecay is the weight decay (>= 0) applied to every trainable variable, means and spreads alike.
	WeightDecay float64
	// Beta1, Beta2 and Epsilon are Adam's; 0 means GoMLX's defaults 0.9, 0.999 and 1e-7.
	Beta1, Beta2, Epsilon float64
	// ProxMu (>= 0) adds FedProx's proximal term ProxMu/2 ||w - c||^2 to every client's loss (Li et al.
	// 2020, Eq. 2), c being the centre recorded by Trainer.SetProxCenter (the global model a round
	// starts from). It acts on every trainable variable, means and spreads alike; 0 means none.
	ProxMu float64
	// SpreadOptimizer, when Adam, trains the spread parameters of Gaussian weights (log sigma^2 or rho)
	// with Adam (Kingma and Ba 2015) at SpreadLearningRate while the means and deterministic parameters
	// keep Kind's update; it needs Kind SGD, and changes nothing for a model without Gaussian weights. "" (or Kind) trains every parameter with Kind. Under SGD
	// at the papers' rates the gradient of log sigma^2 (the KL's (sigma^2 - 1)/(2|D_k|), about 1e-4,
	// plus a data term smaller still) moves it by about 0.002 a round, so the variances keep their
	// initial value; Adam's step does not scale with the gradient (docs/models.md, measured).
	SpreadOptimizer OptimizerKind
	// SpreadLearningRate is the spread parameters' learning rate with SpreadOptimizer (0 means
	// DefaultSpreadLearningRate). Trainer.SetLearningRate scales it by the same factor as the
	// learning rate, so a schedule acts on both.
	SpreadLearningRate float64
}

// DefaultSpreadLearningRate is the spread parameters' learning rate with OptimizerConfig.SpreadOptimizer
// Adam: Adam's default step size (Kingma and Ba 2015, Algorithm 1).
const DefaultSpreadLearningRate = 1e-3

func (oc OptimizerConfig) validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("models: OptimizerConfig.%s: %s", field, fmt.Sprintf(format, args...))
	}
	if oc.Kind != SGD && oc.Kind != Adam {
		return bad("Kind", "%q; want %q or %q", oc.Kind, SGD, Adam)
	}
	if !(oc.LearningRate > 0) || math.IsInf(oc.LearningRate, 0) {
		return bad("LearningRate", "%v; must be positive and finite", oc.LearningRate)
	}
	if !(oc.Momentum >= 0 && oc.Momentum < 1) {
		return bad("Momentum", "%v; must be in [0, 1)", oc.Momentum)
	}
	switch oc.SpreadOptimizer {
	case "", oc.Kind:
	case Adam:
		if oc.Kind != SGD {
			return bad("SpreadOptimizer", "%q with Kind %q; a separate spread optimizer needs Kind %q", oc.SpreadOptimizer, oc.Kind, SGD)
		}
	default:
		return bad("SpreadOptimizer", "%q; want %q, %q or empty", oc.SpreadOptimizer, Adam, oc.Kind)
	}
	if !(oc.SpreadLearningRate >= 0) || math.IsInf(oc.SpreadLearningRate, 0) {
		return bad("SpreadLearningRate", "%v; must be non-negative and finite", oc.SpreadLearningRate)
	}
	if oc.SpreadLearningRate != 0 && (oc.SpreadOptimizer == "" || oc.SpreadOptimizer == oc.Kind) {
		return bad("SpreadLearningRate", "%v set without a separate SpreadOptimizer", oc.SpreadLearningRate)
	}
	if oc.Momentum != 0 && oc.Kind != SGD {
		return bad("Momentum", "set for %q; it applies to %q (use Beta1 for Adam)", oc.Kind, SGD)
	}
	if !(oc.WeightDecay >= 0) || math.IsInf(oc.WeightDecay, 0) {
		return bad("WeightDecay", "%v; must be non-negative and finite", oc.WeightDecay)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"Beta1", oc.Beta1}, {"Beta2", oc.Beta2}} {
		if !(f.v >= 0 && f.v < 1) {
			return bad(f.name, "%v; must be in [0, 1) (0 means the default)", f.v)
		}
	}
	if !(oc.Epsilon >= 0) {
		return bad("Epsilon", "%v; must be non-negative", oc.Epsilon)
	}
	if !(oc.ProxMu >= 0) || math.IsInf(oc.ProxMu, 0) {
		return bad("ProxMu", "%v; must be non-negative and finite", oc.ProxMu)
	}
	return nil
}

// Trainer runs compiled training steps of all K clients of a model at once. The step minimises the sum
// over clients of each client's ELBO loss, so each client's gradient is exactly its own loss's gradient,
// and the element-wise optimizer updates keep clients independent.
//
// A model has one active Trainer: NewTrainer replaces the previous one, whose Step then fails.
type Trainer struct {
	m    *Model
	oc   OptimizerConfig
	opt  optimizers.Interface
	exec *context.Exec
	// execAll is the step for batches where every client is active (K > 1): the same graph without
	// the masking of inactive clients (a Where over every parameter and optimizer state, which then
	// always keeps the update), compiled on first use.
	execAll *context.Exec
	scope   string // absolute scope of the optimizer's state
}

// StepStats are one step's per-client losses (before the update), each of length K.
type StepStats struct {
	// Loss is the ELBO loss NLL + KLWeight * KL / |D_k| (the NLL alone for non-Bayesian nets).
	Loss []float64
	// NLL is the mean negative log-likelihood of the batch.
	NLL []float64
	// KL is the closed-form KL(q || prior) summed over the Gaussian weights (0 for non-Bayesian nets).
	KL []float64
}

// Batch is one training batch for all K clients.
type Batch struct {
	// X holds the inputs, row-major [K, B, InputShape...].
	X []float32
	// Labels are the class labels [K, B] (classification).
	Labels []int32
	// Targets are the regression targets [K, B] (regression).
	Targets []float32
	// DatasetSizes are the |D_k| of the ELBO's KL / |D_k| term (Ozer et al. (2022), Eq. 3), length K.
	DatasetSizes []int
	// Mask, if not nil, weighs each example [K, B]: 1 for a real example, 0 for padding (a client's
	// last, partial batch of an epoch). The NLL is the mean over the examples with mask 1, and batch
	// norm's batch statistics use only them. Values must be 0 or 1, with at least one 1 per active
	// client.
	Mask []float32
	// Active, if not nil, says per client [K] whether it takes this step. An inactive client's
	// parameters, optimizer state (momentum, Adam moments and step count), batch-norm statistics and
	// noise stream are left exactly as they were, so clients can run different numbers of steps in one
	// computation. nil means every client is active.
	Active []bool
}

// NewTrainer creates the model's training step with the given optimizer. Optimizer state starts at zero.
func (m *Model) NewTrainer(oc OptimizerConfig) (*Trainer, error) {
	if err := oc.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{m: m, oc: oc}
	switch oc.Kind {
	case SGD:
		sgd := &momentumSGD{learningRate: oc.LearningRate, momentum: oc.Momentum, weightDecay: oc.WeightDecay, proxMu: oc.ProxMu}
		if oc.SpreadOptimizer == Adam {
			lr := oc.SpreadLearningRate
			if lr == 0 {
				lr = DefaultSpreadLearningRate
			}
			sgd.spreadAdam, sgd.spreadLRScale, sgd.spreads = newClientAdam(oc, m.k), lr/oc.LearningRate, map[*context.Variable]bool{}
			for _, s := range m.specs {
				if s.spread != nil {
					sgd.spreads[s.spread] = true
				}
			}
		}
		t.opt = sgd
		t.scope = context.ScopeSeparator + sgdScope
	case Adam:
		t.opt = newClientAdam(oc, m.k)
		t.scope = context.ScopeSeparator + clientAdamScope
	}
	var err error
	t.exec, err = context.NewExec(m.backend, m.ctx, t.stepGraph)
	if err != nil {
		return nil, fmt.Errorf("models: creating the training step: %w", err)
	}
	if m.k > 1 {
		t.execAll, err = context.NewExec(m.backend, m.ctx, t.stepGraphAllActive)
		if err != nil {
			return nil, fmt.Errorf("models: creating the training step: %w", err)
		}
	}
	m.trainer = t
	if err := t.SetLearningRate(oc.LearningRate); err != nil {
		return nil, err
	}
	if err := t.ResetOptimizer(); err != nil {
		return nil, err
	}
	return t, nil
}

// newClientAdam is the per-client Adam of oc's betas, epsilon (0: GoMLX's defaults), weight decay
// and proximal term, for k clients.
func newClientAdam(oc OptimizerConfig, k int) *clientAdam {
	b1, b2, eps := oc.Beta1, oc.Beta2, oc.Epsilon
	if b1 == 0 {
		b1 = 0.9
	}
	if b2 == 0 {
		b2 = 0.999
	}
	if eps == 0 {
		eps = 1e-7
	}
	return &clientAdam{learningRate: oc.LearningRate, beta1: b1, beta2: b2, epsilon: eps, weightDecay: oc.WeightDecay,
		proxMu: oc.ProxMu, clients: k}
}

// stepGraph builds one training step: inputs x [K, B, ...], targets y [K, B], sizes n [K], the example
// mask [K, B] and the active clients [K] (bool). After the optimizer's update, every variable it (or
// the network: noise streams, batch-norm statistics) changed keeps its old value for inactive clients.
func (t *Trainer) stepGraph(ctx *context.Context, x, y, n, mask, active *Node) []*Node {
	return t.buildStep(ctx, x, y, n, mask, active, t.m.k > 1)
}

// stepGraphAllActive is stepGraph for batches where every client is active: active is not used.
func (t *Trainer) stepGraphAllActive(ctx *context.Context, x, y, n, mask, active *Node) []*Node {
	return t.buildStep(ctx, x, y, n, mask, active, false)
}

// buildStep builds stepGraph; keep says whether inactive clients keep their variables (masking).
func (t *Trainer) buildStep(ctx *context.Context, x, y, n, mask, active *Node, keep bool) []*Node {
	m := t.m
	g := x.Graph()
	b := m.newBuilder(g, true)
	b.mask = ConvertDType(mask, m.cfg.DType)
	out := b.network(m.inputs(x))
	nll := b.nllMasked(out, y, b.mask)
	loss := Add(nll, Div(MulScalar(b.kl, m.cfg.KLWeight), n))
	b.finish()
	t.opt.UpdateGraph(ctx, g, ReduceAllSum(loss))
	if keep {
		// With one client, batchMasks requires it to be active: the masking Wheres (one pass over
		// every parameter and optimizer state per step) would always keep the update. The same holds
		// for any K when every client is active (stepGraphAllActive).
		m.keepInactive(ctx, g, active)
	}
	return []*Node{loss, nll, b.kl}
}

// nll is the mean negative log-likelihood per client, [K], of outputs out [K, B, C] for targets y [K, B].
func (b *builder) nll(out, y *Node) *Node { return b.nllMasked(out, y, nil) }

// nllMasked is nll averaged over the examples whose mask [K, B] is 1 (all examples if mask is nil).
func (b *builder) nllMasked(out, y, mask *Node) *Node {
	dtype := b.m.cfg.DType
	var perExample *Node // [K, B]
	if b.m.cfg.Task == Classification {
		logp := LogSoftmax(out, -1)
		perExample = Neg(ReduceSum(Mul(logp, OneHot(y, b.m.cfg.NumClasses, dtype)), -1))
	} else {
		// Gaussian likelihood: 1/2 [log 2 pi + log s_n^2 + (y - f(x))^2 / s_n^2].
		mu := Squeeze(out, 2)
		lv := ExpandAxes(b.noiseLogVar(), 1)
		r := Sub(ConvertDType(y, dtype), mu)
		perExample = MulScalar(Add(AddScalar(lv, math.Log(2*math.Pi)), Mul(Square(r), Exp(Neg(lv)))), 0.5)
	}
	if mask == nil {
		return ReduceMean(perExample, 1)
	}
	count := ReduceSum(mask, 1)
	return Div(ReduceSum(Mul(perExample, mask), 1), Max(count, OnesLike(count)))
}

// Step runs one training step of all clients on batch and returns the per-client losses.
func (t *Trainer) Step(batch Batch) (StepStats, error) {
	m := t.m
	if m.trainer != t {
		return StepStats{}, fmt.Errorf("models: Trainer.Step: this trainer was replaced by a newer NewTrainer")
	}
	k := m.k
	if len(batch.DatasetSizes) != k {
		return StepStats{}, fmt.Errorf("models: Batch.DatasetSizes has %d entries, want one per client (%d)", len(batch.DatasetSizes), k)
	}
	sizes := make([]float64, k)
	for i, s := range batch.DatasetSizes {
		if s <= 0 {
			return StepStats{}, fmt.Errorf("models: Batch.DatasetSizes[%d] = %d; must be positive", i, s)
		}
		sizes[i] = float64(s)
	}
	if len(batch.X) == 0 || len(batch.X)%(k*m.exampleSize) != 0 {
		return StepStats{}, fmt.Errorf("models: len(Batch.X) = %d is not a positive multiple of K x example size = %d x %d",
			len(batch.X), k, m.exampleSize)
	}
	bs := len(batch.X) / (k * m.exampleSize)
	mask, active, err := batchMasks(batch, k, bs)
	if err != nil {
		return StepStats{}, err
	}
	var y *tensors.Tensor
	if m.cfg.Task == Classification {
		if len(batch.Labels) != k*bs {
			return StepStats{}, fmt.Errorf("models: len(Batch.Labels) = %d, want K x B = %d x %d", len(batch.Labels), k, bs)
		}
		for i, l := range batch.Labels {
			if l < 0 || int(l) >= m.cfg.NumClasses {
				return StepStats{}, fmt.Errorf("models: Batch.Labels: client %d, example %d: label %d outside [0, %d)",
					i/bs, i%bs, l, m.cfg.NumClasses)
			}
		}
		y = tensors.FromFlatDataAndDimensions(batch.Labels, k, bs)
	} else {
		if len(batch.Targets) != k*bs {
			return StepStats{}, fmt.Errorf("models: len(Batch.Targets) = %d, want K x B = %d x %d", len(batch.Targets), k, bs)
		}
		y = tensors.FromFlatDataAndDimensions(batch.Targets, k, bs)
	}
	x := tensors.FromFlatDataAndDimensions(batch.X, append([]int{k, bs}, m.cfg.InputShape...)...)
	n := m.tensorOf(sizes, []int{k})
	var outs []*tensors.Tensor
	exec := t.exec
	if t.execAll != nil && !slices.Contains(batch.Active, false) { // nil Active: every client active
		exec = t.execAll
	}
	if err := catch.Do(func() { outs = exec.MustExec(x, y, n, mask, active) }); err != nil {
		return StepStats{}, fmt.Errorf("models: Trainer.Step: %w", err)
	}
	var stats StepStats
	for i, dst := range []*[]float64{&stats.Loss, &stats.NLL, &stats.KL} {
		f, err := flatFloat32(outs[i])
		if err != nil {
			return StepStats{}, fmt.Errorf("models: Trainer.Step: %w", err)
		}
		*dst = make([]float64, len(f))
		for j, v := range f {
			(*dst)[j] = float64(v)
		}
		_ = outs[i].FinalizeAll()
	}
	return stats, nil
}

// SetLearningRate changes the learning rate used by the following steps (for schedules such as the
// exponential decay of Fischer et al. (2024), Section 3.3), without recompiling.
func (t *Trainer) SetLearningRate(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("models: SetLearningRate(%v): must be positive and finite", lr)
	}
	v := optimizers.LearningRateVar(t.m.ctx, t.m.cfg.DType, lr)
	if err := v.SetValue(scalarTensor(t.m.cfg.DType, lr)); err != nil {
		return fmt.Errorf("models: SetLearningRate: %w", err)
	}
	return nil
}

// ResetOptimizer zeroes the optimizer state (momentum buffers; Adam's moments and step count), for
// example at the start of a federated round after new parameters were loaded.
func (t *Trainer) ResetOptimizer() error {
	for v := range t.m.ctx.IterVariables() {
		if v.Scope() != t.scope && !strings.HasPrefix(v.Scope(), t.scope+context.ScopeSeparator) {
			continue
		}
		if !v.HasValue() {
			continue
		}
		if err := v.SetValue(tensors.FromShape(v.Shape())); err != nil {
			return fmt.Errorf("models: ResetOptimizer: %s: %w", v.ScopeAndName(), err)
		}
	}
	return nil
}

// scalarTensor makes a scalar tensor of dtype.
func scalarTensor(dtype dtypes.DType, v float64) *tensors.Tensor {
	if dtype == dtypes.Float64 {
		return tensors.FromScalar(v)
	}
	return tensors.FromScalar(float32(v))
}
