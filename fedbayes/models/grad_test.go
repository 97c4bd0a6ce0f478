package models

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestELBOGradientFiniteDifferences compares the autodiff gradient of the summed per-client ELBO with
// central finite differences, in float64, on a tiny Bayesian MLP with frozen sampling noise.
func TestELBOGradientFiniteDifferences(t *testing.T) {
	tests := []Config{
		{Options: Options{Estimator: Reparam}},
		{Options: Options{Estimator: LocalReparam, VarParam: SoftplusParam}},
		{Options: Options{Estimator: Flipout}, PriorVariables: true},
		{Options: Options{Estimator: LocalReparam, KLWeight: 3}, Task: Regression, LearnNoise: true},
	}
	for _, cfg := range tests {
		cfg.Arch, cfg.InputShape, cfg.Hidden, cfg.Kind = ArchMLP, []int{3}, []int{4}, Bayesian
		cfg.InitLogVar, cfg.Clients, cfg.Seed, cfg.DType = -1, 2, 9, dtypes.Float64
		if cfg.Task != Regression {
			cfg.NumClasses = 3
		}
		name := fmt.Sprintf("%s/%s/%s", cfg.Estimator, cfg.VarParam, cfg.Task)
		m := newModel(t, cfg)
		var vars []*context.Variable
		for _, s := range m.specs {
			vars = append(vars, s.mean)
			if s.gaussian {
				vars = append(vars, s.spread)
			}
		}
		exec, err := context.NewExec(m.backend, m.ctx, func(ctx *context.Context, x, y, n *Node) []*Node {
			b := m.newBuilder(x.Graph(), true)
			b.freezeRNG = true
			out := b.network(m.inputs(x))
			loss := ReduceAllSum(Add(b.nll(out, y), Div(MulScalar(b.kl, m.cfg.KLWeight), n)))
			nodes := make([]*Node, len(vars))
			for i, v := range vars {
				nodes[i] = v.ValueGraph(x.Graph())
			}
			return append([]*Node{loss}, Gradient(loss, nodes...)...)
		})
		if err != nil {
			t.Fatal(err)
		}
		x, labels := synthetic(4, 2, 5, 3, 3)
		var y *tensors.Tensor
		if cfg.Task == Regression {
			targets := make([]float32, len(labels))
			for i, l := range labels {
				targets[i] = float32(l) * 0.5
			}
			y = tensors.FromFlatDataAndDimensions(targets, 2, 5)
		} else {
			y = tensors.FromFlatDataAndDimensions(labels, 2, 5)
		}
		xt := tensors.FromFlatDataAndDimensions(x, 2, 5, 3)
		n := tensors.FromValue([]float64{20, 7})
		run := func() []*tensors.Tensor {
			outs, err := exec.Exec(xt, y, n)
			if err != nil {
				t.Fatal(err)
			}
			return outs
		}
		grads := run()[1:]
		const h = 1e-6
		for i, v := range vars {
			g, _ := tensors.CopyFlatData[float64](grads[i])
			orig, _ := readVar(v)
			// A few coordinates per variable, in both clients.
			for _, j := range []int{0, len(orig) / 2, len(orig) - 1} {
				eval := func(delta float64) float64 {
					p := append([]float64(nil), orig...)
					p[j] += delta
					if err := v.SetValue(m.tensorOf(p, v.Shape().Dimensions)); err != nil {
						t.Fatal(err)
					}
					return run()[0].Value().(float64)
				}
				fd := (eval(h) - eval(-h)) / (2 * h)
				if math.Abs(fd-g[j]) > 1e-5*math.Max(1, math.Abs(fd)) {
					t.Errorf("%s: d loss / d %s[%d]: autodiff %.9g, finite differences %.9g", name, v.ScopeAndName(), j, g[j], fd)
				}
			}
			if err := v.SetValue(m.tensorOf(orig, v.Shape().Dimensions)); err != nil {
				t.Fatal(err)
			}
		}
	}
}
