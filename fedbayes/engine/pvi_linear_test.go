package engine

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/groundtruth"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/results"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"gonum.org/v1/gonum/mat"
)

// linearSpec is Bayesian linear regression on the Boston housing set (13 standardised features,
// standardised target) through the engine: an MLP without hidden layers (model.hidden [], one
// Bayesian dense layer with identity output, y = xᵀw + b), mean-field Gaussian weights and bias under
// the model's N(0, 1) prior, the engine's Gaussian likelihood with its noise variance learned per
// client, 3 clients under covariate shift (half the examples sorted by the first feature, Hasan
// (2023), Sec. 3.3.2). Each client's local VI is the engine's own: the ELBO with the local
// reparameterisation estimator, 100 full-batch steps a round (batch 256 holds a client's 135
// examples), the means by SGD with momentum, the log-variances by Adam (fresh every round).
func linearSpec(rounds int) *Spec {
	return &Spec{
		Name:        "linear",
		Dataset:     DatasetSpec{Name: "boston"},
		Partition:   PartitionSpec{Method: "heterogeneity", Clients: 3, H: 0.5},
		Model:       ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{}},
		Aggregation: AggregationSpec{Rule: "pvi", Weighting: "size"},
		Training: TrainingSpec{Rounds: rounds, LocalEpochs: 100, BatchSize: 256, LearningRate: 0.01, Momentum: 0.9,
			VarianceOptimizer: "adam", VarianceLR: 0.02},
		Evaluation: EvaluationSpec{Samples: 2},
		Seeds:      []int64{1},
	}
}

// linearGlobal reads a global posterior of linearSpec's model as a diagonal Gaussian in the lab's
// order (the features' weights, then the bias). It fails when the model is not linear.
func linearGlobal(t *testing.T, g *posterior.Posterior) groundtruth.Diagonal {
	t.Helper()
	var gauss []posterior.Param
	var names []string
	for _, p := range g.Params {
		names = append(names, p.Name)
		if p.IsGaussian() {
			gauss = append(gauss, p)
		}
	}
	if len(gauss) != 2 || !strings.HasSuffix(gauss[0].Name, "/biases") || !strings.HasSuffix(gauss[1].Name, "/weights") {
		t.Fatalf("the global is not one Bayesian dense layer (weights and biases): %v", names)
	}
	var q groundtruth.Diagonal
	for _, p := range []posterior.Param{gauss[1], gauss[0]} {
		m := tensors.MustCopyFlatData[float32](p.Mean)
		lv := tensors.MustCopyFlatData[float32](p.LogVar)
		for i := range m {
			q.Mean, q.Var = append(q.Mean, float64(m[i])), append(q.Var, math.Exp(float64(lv[i])))
		}
	}
	return q
}

// linearData returns the engine's clients of a run of s in the lab's form: their standardised
// examples with a column of ones for the bias, with the model's N(0, 1) prior.
func linearData(t *testing.T, s *Spec) ([]groundtruth.Data, *groundtruth.Gaussian) {
	t.Helper()
	c := s.WithDefaults()
	prob, err := newProblem(c, c.Seeds[0], &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(prob.part.Clients))
	for k := range ids {
		ids[k] = k
	}
	sets, err := prob.clientSets(ids)
	if err != nil {
		t.Fatal(err)
	}
	F := prob.exampleSize
	var clients []groundtruth.Data
	for _, set := range sets {
		x := mat.NewDense(set.Len(), F+1, nil)
		y := make([]float64, set.Len())
		for i := range set.Len() {
			for j := range F {
				x.Set(i, j, float64(set.X[i*F+j]))
			}
			x.Set(i, F, 1)
			y[i] = float64(set.Targets[i])
		}
		clients = append(clients, groundtruth.Data{X: x, Y: y})
	}
	cov := mat.NewSymDense(F+1, nil)
	for i := range F + 1 {
		cov.SetSym(i, i, 1) // models.DefaultPriorStd², on the bias too
	}
	prior, err := groundtruth.NewGaussian(make([]float64, F+1), cov)
	if err != nil {
		t.Fatal(err)
	}
	return clients, prior
}

// elboNoise is the noise variance that maximises a client's ELBO at the diagonal Gaussian q: the
// expected squared residual E_q[(y − xᵀw)²] = (y − xᵀm)² + Σ_j x_j² v_j, averaged over its examples
// (the learned noise variance's stationary point).
func elboNoise(c groundtruth.Data, q groundtruth.Diagonal) float64 {
	ss := 0.0
	for i := range c.N() {
		f, v := 0.0, 0.0
		for j := range q.Mean {
			x := c.X.At(i, j)
			f, v = f+x*q.Mean[j], v+x*x*q.Var[j]
		}
		ss += (c.Y[i]-f)*(c.Y[i]-f) + v
	}
	return ss / float64(c.N())
}

// viFixedPoint is where PVI on the engine's model ends by the lab: centralised mean-field VI
// (groundtruth.MeanFieldVI) of the exact posterior given every client's likelihood, each with the
// noise variance its ELBO takes at q (at PVI's fixed point every client's local q is the global, so
// that is the noise it learns). It returns the exact posterior's marginal standard deviations too,
// the lab's unit for mean errors.
func viFixedPoint(t *testing.T, clients []groundtruth.Data, prior *groundtruth.Gaussian, q groundtruth.Diagonal) (groundtruth.Diagonal, []float64) {
	t.Helper()
	full := make([]*groundtruth.Gaussian, len(clients))
	for k, c := range clients {
		var err error
		if full[k], err = (groundtruth.LinearModel{Prior: prior, NoiseVar: elboNoise(c, q)}).Posterior(c); err != nil {
			t.Fatal(err)
		}
	}
	exact, err := groundtruth.GlobalFromClients(prior, full)
	if err != nil {
		t.Fatal(err)
	}
	vi, err := groundtruth.MeanFieldVI(exact)
	if err != nil {
		t.Fatal(err)
	}
	sd := groundtruth.MeanFieldMoment(exact).Var
	for i := range sd {
		sd[i] = math.Sqrt(sd[i])
	}
	return vi, sd
}

// oneShot is where a one-shot rule ends by the lab under the fixed prior (groundtruth.RunRounds:
// every round's clients send the same messages, so every round's global is round one's): the rule
// (size weights) over the clients' mean-field VI posteriors under the prior, each client with the
// noise variance its own ELBO takes at its own posterior (iterated to self-consistency).
func oneShot(t *testing.T, rule aggregate.Rule, clients []groundtruth.Data, prior *groundtruth.Gaussian) groundtruth.Diagonal {
	t.Helper()
	msgs := make([]groundtruth.Diagonal, len(clients))
	sizes := make([]int, len(clients))
	for k, c := range clients {
		s2 := 1.0
		for range 50 {
			post, err := groundtruth.LinearModel{Prior: prior, NoiseVar: s2}.Posterior(c)
			if err != nil {
				t.Fatal(err)
			}
			if msgs[k], err = groundtruth.MeanFieldVI(post); err != nil {
				t.Fatal(err)
			}
			s2 = elboNoise(c, msgs[k])
		}
		sizes[k] = c.N()
	}
	aggs, err := groundtruth.ApplyRules(msgs, sizes, groundtruth.MeanFieldMoment(prior),
		groundtruth.RuleOptions{Rules: []aggregate.Rule{rule}, Weightings: []groundtruth.Weighting{groundtruth.Size}})
	if err != nil {
		t.Fatal(err)
	}
	return aggs[0].Q
}

// linearDistance is how far q is from r: the root mean square over weights of (m − m_r) / sd (sd the
// exact posterior's marginal standard deviations, as the lab's MeanErrorSD) and the largest
// |log v − log v_r|.
func linearDistance(q, r groundtruth.Diagonal, sd []float64) (meanSD, logVar float64) {
	for i := range r.Mean {
		d := (q.Mean[i] - r.Mean[i]) / sd[i]
		meanSD += d * d
		logVar = math.Max(logVar, math.Abs(math.Log(q.Var[i])-math.Log(r.Var[i])))
	}
	return math.Sqrt(meanSD / float64(len(r.Mean))), logVar
}

// Tolerances of TestPVILinearFixedPoint. The engine's clients run stochastic VI: every gradient
// carries the local reparameterisation's sampling noise, Adam moves the log-variances by up to 0.02 a
// step and jitters about their optimum, and 100 steps a round leave the flattest directions of
// Boston's collinear features short of the local optimum; the parallel schedule adds every client's
// error into the global through its site. Over seeds 1-5 the engine's PVI ended 0.04-0.11 exact
// posterior sds (root mean square) and 0.12-0.18 in log-variance (largest) from the fixed point. A
// one-shot rule's clients start every round from the rule's global, which under covariate shift is
// far from each client's own posterior, so the same 100 steps leave them further short: GAA and EAA
// ended 0.10-0.42 sds and 0.06-0.37 in log-variance from where the lab puts them, which is 0.46-1.04
// sds (both) and 1.37-1.47 in log-variance (EAA) from the fixed point.
const (
	linearMeanTol    = 0.2
	linearLogVarTol  = 0.3
	oneShotMeanTol   = 0.5
	oneShotLogVarTol = 0.45
)

// TestPVILinearFixedPoint runs the engine's PVI (default damping 2/3 for 3 clients) for 40 rounds on
// Bayesian linear regression (linearSpec) and checks that it approaches (its distance shrinking after
// 5, 15 and 40 rounds) and ends within linearMeanTol exact
// posterior sds and linearLogVarTol in log-variance of the ground-truth lab's fixed point,
// centralised mean-field VI (viFixedPoint), with a damping the lab's stability bound admits; and
// that GAA and EAA over the same 40 rounds, with the same local training, end where the lab says a
// one-shot rule stays (oneShot, within oneShotMeanTol and oneShotLogVarTol), and so far from the
// fixed point: both off in the means by more than twice PVI's tolerance, EAA's variances about K
// times too wide.
func TestPVILinearFixedPoint(t *testing.T) {
	requireSklearn(t, "boston", "boston_house_prices.csv")
	s := linearSpec(40)
	if c := s.WithDefaults(); c.Model.Hidden == nil || len(c.Model.Hidden) != 0 {
		t.Fatalf("model.hidden [] reads as %v after the spec's defaults: a linear model must stay linear", c.Model.Hidden)
	}
	s.Variants = []Variant{
		{Label: "pvi", Set: map[string]json.RawMessage{"aggregation.rule": raw("pvi")}},
		{Label: "gaa", Set: map[string]json.RawMessage{"aggregation.rule": raw("GAA")}},
		{Label: "eaa", Set: map[string]json.RawMessage{"aggregation.rule": raw("EAA")}},
		// The same PVI run stopped after 5 and 15 rounds (every round's randomness is the round's own).
		{Label: "pvi-5", Set: map[string]json.RawMessage{"aggregation.rule": raw("pvi"), "training.rounds": raw(5)}},
		{Label: "pvi-15", Set: map[string]json.RawMessage{"aggregation.rule": raw("pvi"), "training.rounds": raw(15)}},
	}
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	clients, prior := linearData(t, s)
	finals := map[string]groundtruth.Diagonal{}
	for _, r := range sum.Runs {
		if r.State != results.Completed {
			t.Fatalf("%s: %s (%s)", r.Setting, r.State, r.Reason)
		}
		finals[r.Labels["variant"]] = linearGlobal(t, finalGlobal(t, filepath.Join(dir, results.RunName(r.Setting, r.Seed))))
	}
	pvi := finals["pvi"]
	vi, sd := viFixedPoint(t, clients, prior, pvi)
	noise := 0.0
	for _, c := range clients {
		noise += elboNoise(c, pvi) / float64(len(clients))
	}
	lab := &groundtruth.Problem{Config: groundtruth.Config{Likelihood: groundtruth.Linear}, Model: groundtruth.LinearModel{Prior: prior, NoiseVar: noise}, Clients: clients}
	bound, err := groundtruth.PVIStability(lab)
	if err != nil {
		t.Fatal(err)
	}
	rho := 2.0 / float64(len(clients)) // pvi's default damping: 2 / clients per round, every client sampled
	if !(rho < bound) {
		t.Fatalf("PVI's damping %v is not below the lab's stability bound %v on this problem", rho, bound)
	}
	m, lv := linearDistance(pvi, vi, sd)
	m5, _ := linearDistance(finals["pvi-5"], vi, sd)
	m15, _ := linearDistance(finals["pvi-15"], vi, sd)
	t.Logf("PVI after 5, 15 and 40 rounds (damping %.3g, the lab's bound %.3f): %.3f, %.3f and %.3f exact sds (rms) from centralised mean-field VI, %.3f in log-variance (max) at 40",
		rho, bound, m5, m15, m, lv)
	if m > linearMeanTol || lv > linearLogVarTol {
		t.Errorf("PVI ends %.3f sds and %.3f in log-variance from the fixed point, want within %v and %v", m, lv, linearMeanTol, linearLogVarTol)
	}
	// Stochastic local VI makes the distance noisy from round to round once it is near the fixed
	// point (seed 4: 0.119, 0.154, 0.080), so only round 40 against round 5 is required.
	if !(m < m5) {
		t.Errorf("PVI's distance to the fixed point after 5, 15 and 40 rounds: %.3f, %.3f, %.3f; want it smaller at 40 than at 5", m5, m15, m)
	}
	for _, tc := range []struct {
		label string
		rule  aggregate.Rule
		// meanOff and varOff say in which the lab's rule stays off the fixed point by more than the
		// tolerances.
		meanOff, varOff bool
	}{
		{"gaa", aggregate.GAA, true, false},
		{"eaa", aggregate.EAA, true, true},
	} {
		want := oneShot(t, tc.rule, clients, prior)
		gm, glv := linearDistance(finals[tc.label], want, sd)
		wm, wlv := linearDistance(want, vi, sd)
		em, elv := linearDistance(finals[tc.label], vi, sd)
		t.Logf("%s: %.3f sds, %.3f in log-variance from the lab's %s; the lab's %s is %.3f sds, %.3f from the fixed point (the engine's %.3f, %.3f)",
			tc.rule, gm, glv, tc.rule, tc.rule, wm, wlv, em, elv)
		if gm > oneShotMeanTol || glv > oneShotLogVarTol {
			t.Errorf("%s ends %.3f sds and %.3f in log-variance from where the lab says it stays, want within %v and %v", tc.rule, gm, glv, oneShotMeanTol, oneShotLogVarTol)
		}
		if tc.meanOff && !(wm > 2*linearMeanTol && em > 2*linearMeanTol) {
			t.Errorf("%s's means: the lab's %.3f sds and the engine's %.3f from the fixed point, want both beyond %v", tc.rule, wm, em, 2*linearMeanTol)
		}
		if tc.varOff && !(wlv > 3*linearLogVarTol && elv > 3*linearLogVarTol) {
			t.Errorf("%s's variances: the lab's %.3f and the engine's %.3f in log-variance from the fixed point, want both beyond %v", tc.rule, wlv, elv, 3*linearLogVarTol)
		}
	}
}
