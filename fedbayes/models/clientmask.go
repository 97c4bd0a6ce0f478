package models

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// batchMasks validates Batch.Mask and Batch.Active and returns them as tensors [K, B] (float32) and
// [K] (bool), filling in the defaults (every example real, every client active).
func batchMasks(batch Batch, k, bs int) (mask, active *tensors.Tensor, err error) {
	m := batch.Mask
	if m == nil {
		m = make([]float32, k*bs)
		for i := range m {
			m[i] = 1
		}
	} else if len(m) != k*bs {
		return nil, nil, fmt.Errorf("models: len(Batch.Mask) = %d, want K x B = %d x %d", len(m), k, bs)
	}
	a := batch.Active
	if a == nil {
		a = make([]bool, k)
		for i := range a {
			a[i] = true
		}
	} else if len(a) != k {
		return nil, nil, fmt.Errorf("models: len(Batch.Active) = %d, want one per client (%d)", len(a), k)
	}
	any := false
	for c := 0; c < k; c++ {
		real := 0
		for i, v := range m[c*bs : (c+1)*bs] {
			if v != 0 && v != 1 {
				return nil, nil, fmt.Errorf("models: Batch.Mask: client %d, example %d: %v; must be 0 or 1", c, i, v)
			}
			if v == 1 {
				real++
			}
		}
		if a[c] && real == 0 {
			return nil, nil, fmt.Errorf("models: Batch.Mask: client %d is active but has no example with mask 1", c)
		}
		any = any || a[c]
	}
	if !any {
		return nil, nil, fmt.Errorf("models: Batch.Active: no client is active")
	}
	return tensors.FromFlatDataAndDimensions(m, k, bs), tensors.FromFlatDataAndDimensions(a, k), nil
}

// keepInactive makes every per-client variable changed in g (parameters, optimizer state, batch-norm
// statistics: leading axis K; and the per-client noise streams) keep its value from before the step for
// the clients whose active [K] entry is false. Variables without a client axis (the global step, the
// learning rate) are left as the step set them.
func (m *Model) keepInactive(ctx *context.Context, g *Graph, active *Node) {
	rng := make(map[*context.Variable]int, len(m.rngVars))
	for k, v := range m.rngVars {
		rng[v] = k
	}
	for v := range ctx.IterVariables() {
		if !v.ChangedInGraph(g) {
			continue
		}
		old := g.GetParameterByName(v.ParameterName())
		if old == nil {
			panicf("models: internal error: no parameter node for the changed variable %s", v.ScopeAndName())
		}
		updated := v.ValueGraph(g)
		if k, ok := rng[v]; ok {
			on := Reshape(Slice(active, AxisElem(k))) // scalar
			v.SetValueGraph(Where(BroadcastToDims(on, updated.Shape().Dimensions...), updated, old))
			continue
		}
		dims := v.Shape().Dimensions
		if len(dims) == 0 || dims[0] != m.k {
			continue
		}
		v.SetValueGraph(Where(active, updated, old))
	}
}

// SetNoiseSeeds restarts the noise stream (weight noise, MC-dropout masks) of each client k from
// seeds[k], one seed per client. A federated engine seeds a client's stream by (run seed, round,
// client id), so that a client draws the same numbers whether it trains alone (K = 1) or with others.
func (m *Model) SetNoiseSeeds(seeds []int64) error {
	if len(seeds) != m.k {
		return fmt.Errorf("models: SetNoiseSeeds: %d seeds for %d clients", len(seeds), m.k)
	}
	for k, v := range m.rngVars {
		if err := v.SetValue(mustRNGState(seeds[k])); err != nil {
			return fmt.Errorf("models: SetNoiseSeeds: client %d: %w", k, err)
		}
	}
	return nil
}

// proxScope holds the centres of the FedProx proximal term.
const proxScope = "prox_center"

// proxCenterVar returns the variable holding the proximal centre of the trainable variable v.
func proxCenterVar(ctx *context.Context, v *context.Variable) *context.Variable {
	return ctx.InAbsPath(context.ScopeSeparator+proxScope+v.Scope()).
		VariableWithShape(v.Name()+"_center", v.Shape()).SetTrainable(false)
}

// proxGradient returns grad + mu (w - c), the gradient with FedProx's proximal term mu/2 ||w - c||^2
// (Li et al. 2020, Eq. 2), or grad when mu is 0.
func proxGradient(ctx *context.Context, g *Graph, v *context.Variable, w, grad *Node, mu float64) *Node {
	if mu == 0 {
		return grad
	}
	c := proxCenterVar(ctx, v).ValueGraph(g)
	return Add(grad, MulScalar(Sub(w, c), mu))
}

// SetProxCenter records the current value of every trainable variable as the centre of the proximal
// term (OptimizerConfig.ProxMu): call it after loading the global model at the start of a round.
func (t *Trainer) SetProxCenter() error {
	if t.oc.ProxMu == 0 {
		return fmt.Errorf("models: SetProxCenter: the trainer has no proximal term (OptimizerConfig.ProxMu is 0)")
	}
	ctx := t.m.ctx
	for _, s := range t.m.specs {
		for _, v := range []*context.Variable{s.mean, s.spread} {
			if v == nil || !v.Trainable {
				continue
			}
			val, err := v.Value()
			if err == nil {
				val, err = val.LocalClone()
			}
			if err != nil {
				return fmt.Errorf("models: SetProxCenter: %s: %w", v.ScopeAndName(), err)
			}
			c := ctx.InAbsPath(context.ScopeSeparator + proxScope + v.Scope())
			name := v.Name() + "_center"
			if cv := c.GetVariableByScopeAndName(c.Scope(), name); cv != nil {
				err = cv.SetValue(val)
			} else {
				c.VariableWithValue(name, val).SetTrainable(false)
			}
			if err != nil {
				return fmt.Errorf("models: SetProxCenter: %s: %w", v.ScopeAndName(), err)
			}
		}
	}
	return nil
}
