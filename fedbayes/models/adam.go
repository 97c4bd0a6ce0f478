package models

import (
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/initializers"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// clientAdamScope holds the per-client Adam state: the moments of every variable and the step counts.
const clientAdamScope = "client_adam"

// clientAdam is Adam (Kingma and Ba 2015) with the update of GoMLX's optimizers.Adam in v0.26.0
// (applyAdamGraph: m1 = b1 m1 + (1 - b1) g; m2 = b2 m2 + (1 - b2) g^2; step = lr m1/(1 - b1^t) /
// (sqrt(m2/(1 - b2^t)) + eps) + lr wd w, the last term being decoupled weight decay), except that the
// step count t is a vector with one entry per client instead of one scalar. Clients that skip steps
// (Batch.Active) then keep their own bias correction, and a client trained alone in a one-client model
// gets exactly the same updates.
type clientAdam struct {
	learningRate, beta1, beta2, epsilon, weightDecay float64
	// proxMu is FedProx's proximal coefficient (OptimizerConfig.ProxMu).
	proxMu float64
	// clients is K.
	clients int
}

// UpdateGraph implements optimizers.Interface.
func (o *clientAdam) UpdateGraph(ctx *context.Context, g *Graph, loss *Node) {
	vars, grads := trainableGradients(ctx, g, loss, "Adam")
	dtype := loss.DType()
	lr := optimizers.LearningRateVar(ctx, dtype, o.learningRate).ValueGraph(g)
	_ = optimizers.IncrementGlobalStepGraph(ctx, g, dtype)
	st := o.newState(ctx, g, dtype, clientAdamScope)
	for i, v := range vars {
		o.update(st, v, grads[i], lr)
	}
}

// adamState is one step's shared part of a per-client Adam update: its state scope and the bias
// corrections of the step counts.
type adamState struct {
	ctx              *context.Context
	g                *Graph
	scope            string
	beta1, beta2     *Node
	debias1, debias2 *Node // [K]
}

// newState increments the per-client step counts kept in scope (an absolute path without its leading
// separator) and returns the step's bias corrections.
func (o *clientAdam) newState(ctx *context.Context, g *Graph, dtype dtypes.DType, scope string) adamState {
	stepVar := ctx.InAbsPath(context.ScopeSeparator+scope).WithInitializer(initializers.Zero).
		VariableWithShape("step", shapes.Make(dtype, o.clients)).SetTrainable(false)
	step := OnePlus(stepVar.ValueGraph(g)) // [K]
	stepVar.SetValueGraph(step)
	beta1 := Scalar(g, dtype, o.beta1)
	beta2 := Scalar(g, dtype, o.beta2)
	return adamState{ctx: ctx, g: g, scope: scope, beta1: beta1, beta2: beta2,
		debias1: Reciprocal(OneMinus(Pow(beta1, step))), debias2: Reciprocal(OneMinus(Pow(beta2, step)))}
}

// update applies Adam's update with learning rate lr (a scalar node) to v, whose loss gradient is grad.
func (o *clientAdam) update(st adamState, v *context.Variable, grad, lr *Node) {
	g := st.g
	w := v.ValueGraph(g)
	dtype := st.beta1.DType()
	grad = ConvertDType(proxGradient(st.ctx, g, v, w, grad, o.proxMu), dtype)
	scope := st.ctx.InAbsPath(context.ScopeSeparator + st.scope + v.Scope()).WithInitializer(initializers.Zero)
	m1Var := scope.VariableWithShape(v.Name()+"_m1", v.Shape()).SetTrainable(false)
	m2Var := scope.VariableWithShape(v.Name()+"_m2", v.Shape()).SetTrainable(false)
	m1 := Add(Mul(st.beta1, m1Var.ValueGraph(g)), Mul(OneMinus(st.beta1), grad))
	m2 := Add(Mul(st.beta2, m2Var.ValueGraph(g)), Mul(OneMinus(st.beta2), Square(grad)))
	m1Var.SetValueGraph(m1)
	m2Var.SetValueGraph(m2)
	d1, d2 := clientBroadcast(st.debias1, w.Rank()), clientBroadcast(st.debias2, w.Rank())
	dir := Div(Mul(lr, Mul(m1, d1)), AddScalar(Sqrt(Mul(m2, d2)), o.epsilon))
	if o.weightDecay > 0 {
		dir = Add(dir, Mul(lr, MulScalar(w, o.weightDecay)))
	}
	v.SetValueGraph(Sub(w, dir))
}

// clientBroadcast reshapes a per-client vector [K] to [K, 1, ...] of the given rank, to broadcast over a
// variable with a leading client axis.
func clientBroadcast(x *Node, rank int) *Node {
	dims := make([]int, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = x.Shape().Dimensions[0]
	return Reshape(x, dims...)
}

// Clear implements optimizers.Interface: it deletes the moments and step counts.
func (o *clientAdam) Clear(ctx *context.Context) error {
	return ctx.InAbsPath(context.ScopeSeparator + clientAdamScope).DeleteVariablesInScope()
}
