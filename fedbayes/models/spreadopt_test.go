package models

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// TestSpreadOptimizerFirstStep checks OptimizerConfig.SpreadOptimizer against hand-computed first
// steps: Adam's first update is lr g / (|g| + eps), so every log sigma^2 whose gradient is not tiny
// moves by the spread learning rate (here 0.01, scaled by SetLearningRate's factor 2), while the means
// take exactly plain SGD's step (their gradient does not depend on the spreads' optimizer).
func TestSpreadOptimizerFirstStep(t *testing.T) {
	for _, vp := range []VarParam{LogVarParam, SoftplusParam} {
		cfg := Config{Options: Options{Arch: ArchMLP, Hidden: []int{5}, Kind: Bayesian, VarParam: vp}, InputShape: []int{4}, NumClasses: 3,
			Clients: 2, Seed: 4, DType: dtypes.Float64}
		x, y := synthetic(8, 2, 6, 4, 3)
		batch := Batch{X: x, Labels: y, DatasetSizes: []int{6, 6}}
		plain, hybrid := newModel(t, cfg), newModel(t, cfg)
		before, _ := hybrid.Posterior()
		tp, err := plain.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.05, Momentum: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		th, err := hybrid.NewTrainer(OptimizerConfig{Kind: SGD, LearningRate: 0.1, Momentum: 0.9, SpreadOptimizer: Adam, SpreadLearningRate: 0.02})
		if err != nil {
			t.Fatal(err)
		}
		if err := th.SetLearningRate(0.05); err != nil { // halves both rates
			t.Fatal(err)
		}
		for _, tr := range []*Trainer{tp, th} {
			if _, err := tr.Step(batch); err != nil {
				t.Fatal(err)
			}
		}
		pp, _ := plain.Posterior()
		ph, _ := hybrid.Posterior()
		moved := 0
		for i := range ph.Params {
			a, b, c := &pp.Params[i], &ph.Params[i], &before.Params[i]
			ma, mb := flat32(t, a.Mean), flat32(t, b.Mean)
			for e := range ma {
				if ma[e] != mb[e] {
					t.Fatalf("%s %s mean [%d]: plain SGD %v, with Adam spreads %v", vp, b.Name, e, ma[e], mb[e])
				}
			}
			if !b.IsGaussian() {
				continue
			}
			lv0, lv1 := flat32(t, c.LogVar), flat32(t, b.LogVar)
			for e := range lv1 {
				d := float64(lv1[e]) - float64(lv0[e])
				if vp == SoftplusParam { // rho moves by 0.01; log sigma^2 = 2 log softplus(rho) by 2 sigmoid(rho)/softplus(rho) times that
					rho := rhoFromLogVar(float64(lv0[e]))
					d /= 2 / (1 + math.Exp(-rho)) / math.Log1p(math.Exp(rho))
				}
				if math.Abs(math.Abs(d)-0.01) > 3e-4 {
					t.Errorf("%s %s log-variance [%d] moved by %v, want 0.01 in size", vp, b.Name, e, d)
				} else {
					moved++
				}
			}
		}
		if moved == 0 {
			t.Fatalf("%s: no Gaussian parameters", vp)
		}
	}
}

// TestSpreadOptimizerErrors: invalid combinations are errors naming the field.
func TestSpreadOptimizerErrors(t *testing.T) {
	for _, tc := range []struct {
		oc   OptimizerConfig
		want string
	}{
		{OptimizerConfig{Kind: Adam, LearningRate: 1e-3, SpreadOptimizer: Adam, SpreadLearningRate: 1e-2}, "SpreadLearningRate: 0.01 set without a separate SpreadOptimizer"},
		{OptimizerConfig{Kind: Adam, LearningRate: 1e-3, SpreadOptimizer: SGD}, "SpreadOptimizer: \"sgd\""},
		{OptimizerConfig{Kind: SGD, LearningRate: 1e-2, SpreadOptimizer: Adam}, ""},
		{OptimizerConfig{Kind: SGD, LearningRate: 1e-2, SpreadOptimizer: "rmsprop"}, "SpreadOptimizer: \"rmsprop\""},
		{OptimizerConfig{Kind: SGD, LearningRate: 1e-2, SpreadLearningRate: 1e-3}, "SpreadLearningRate: 0.001 set without"},
		{OptimizerConfig{Kind: SGD, LearningRate: 1e-2, SpreadOptimizer: Adam, SpreadLearningRate: -1}, "SpreadLearningRate: -1"},
	} {
		err := tc.oc.validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.oc, err, tc.want)
		}
	}
}
