package models

import (
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// sgdScope holds the momentum buffers.
const sgdScope = "sgd_momentum"

// momentumSGD is SGD with heavy-ball momentum and L2 weight decay, with PyTorch's update rule
// (torch.optim.SGD, dampening 0): d = g + wd * w; v = mu * v + d; w = w - lr * v.
//
// GoMLX v0.26.0's StochasticGradientDescent has neither momentum nor weight decay, so this small
// optimizers.Interface adds them. It uses GoMLX's learning-rate variable and global step, so
// Trainer.SetLearningRate works the same way for it and for GoMLX's Adam. Every update is element-wise,
// so the clients stacked on the leading axis of a variable are updated independently.
type momentumSGD struct {
	learningRate, momentum, weightDecay float64
	// proxMu is FedProx's proximal coefficient (OptimizerConfig.ProxMu).
	proxMu float64
	// spreadAdam, when not nil, updates the spread variables (spreads) with Adam instead, at
	// spreadLRScale times the learning rate (OptimizerConfig.SpreadOptimizer); its state lives under
	// sgdScope/spreadAdamScope, so ResetOptimizer clears it with the momentum buffers.
	spreadAdam    *clientAdam
	spreadLRScale float64
	spreads       map[*context.Variable]bool
}

// spreadAdamScope holds, under sgdScope, the Adam state of the spread variables.
const spreadAdamScope = "spread_adam"

// UpdateGraph implements optimizers.Interface.
func (o *momentumSGD) UpdateGraph(ctx *context.Context, g *Graph, loss *Node) {
	vars, grads := trainableGradients(ctx, g, loss, "momentum SGD")
	lr := optimizers.LearningRateVar(ctx, loss.DType(), o.learningRate).ValueGraph(g)
	_ = optimizers.IncrementGlobalStepGraph(ctx, g, loss.DType())
	var st adamState
	if o.spreadAdam != nil && len(o.spreads) > 0 {
		st = o.spreadAdam.newState(ctx, g, loss.DType(), sgdScope+context.ScopeSeparator+spreadAdamScope)
	}
	for i, v := range vars {
		if o.spreads[v] {
			o.spreadAdam.update(st, v, grads[i], MulScalar(lr, o.spreadLRScale))
			continue
		}
		w := v.ValueGraph(g)
		d := proxGradient(ctx, g, v, w, grads[i], o.proxMu)
		if o.weightDecay > 0 {
			d = Add(d, MulScalar(w, o.weightDecay))
		}
		if o.momentum > 0 {
			buf := ctx.InAbsPath(context.ScopeSeparator+sgdScope+v.Scope()).WithInitializer(initializers.Zero).
				VariableWithShape(v.Name()+"_velocity", v.Shape()).SetTrainable(false)
			d = Add(MulScalar(buf.ValueGraph(g), o.momentum), d)
			buf.SetValueGraph(d)
		}
		v.SetValueGraph(Sub(w, Mul(ConvertDType(lr, w.DType()), d)))
	}
}

// Clear implements optimizers.Interface: it deletes the momentum buffers.
func (o *momentumSGD) Clear(ctx *context.Context) error {
	return ctx.InAbsPath(context.ScopeSeparator + sgdScope).DeleteVariablesInScope()
}

// trainableGradients returns the trainable variables used by graph g and the gradients of the scalar
// loss with respect to them, in the same order (the shared first step of this package's optimizers).
func trainableGradients(ctx *context.Context, g *Graph, loss *Node, optimizer string) ([]*context.Variable, []*Node) {
	if !loss.Shape().IsScalar() {
		panicf("%s needs a scalar loss, got shape %s", optimizer, loss.Shape())
	}
	grads := ctx.BuildTrainableVariablesGradientsGraph(loss)
	var vars []*context.Variable
	for v := range ctx.IterVariables() {
		if v.Trainable && v.InUseByGraph(g) {
			vars = append(vars, v)
		}
	}
	if len(vars) != len(grads) {
		panicf("%s: %d gradients for %d trainable variables", optimizer, len(grads), len(vars))
	}
	return vars, grads
}
