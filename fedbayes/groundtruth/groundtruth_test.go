package groundtruth

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"gonum.org/v1/gonum/mat"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func sameGaussian(t *testing.T, what string, a, b *Gaussian, tol float64) {
	t.Helper()
	for i := 0; i < a.Dim(); i++ {
		if !near(a.Mean.AtVec(i), b.Mean.AtVec(i), tol) {
			t.Errorf("%s: mean[%d] %v vs %v", what, i, a.Mean.AtVec(i), b.Mean.AtVec(i))
		}
		for j := 0; j < a.Dim(); j++ {
			if !near(a.Cov.At(i, j), b.Cov.At(i, j), tol) {
				t.Errorf("%s: cov[%d][%d] %v vs %v", what, i, j, a.Cov.At(i, j), b.Cov.At(i, j))
			}
		}
	}
}

// TestGroundTruthExactEqualsCentralised checks the product of the client posteriors divided by the
// prior K-1 times against a centralised fit on all the data (QR on the augmented least-squares
// problem, another route), on every split.
func TestGroundTruthExactEqualsCentralised(t *testing.T) {
	for _, tc := range []struct {
		split       Split
		h           float64
		K, d, n     int
		corr, noise float64
	}{
		{IID, 0, 5, 3, 10, 0.5, 1},
		{CovariateShift, 1, 8, 4, 6, 0.8, 0.3},
		{TargetSkew, 1, 4, 6, 12, 0.2, 2},
		{UnequalSizes, 1, 10, 5, 7, 0.5, 1},
		{ManySmall, 1, 3, 5, 10, 0.5, 1},
		{IID, 0, 1, 2, 1, 0, 1},
	} {
		t.Run(string(tc.split), func(t *testing.T) {
			cfg := Config{Split: tc.split, Heterogeneity: tc.h, Clients: tc.K, Dims: tc.d, PerClient: tc.n, Test: 10,
				NoiseVar: tc.noise, PriorVar: 2, Correlation: tc.corr, Seed: 7}
			p, err := Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			full := make([]*Gaussian, len(p.Clients))
			for k, c := range p.Clients {
				if full[k], err = p.Model.Posterior(c); err != nil {
					t.Fatal(err)
				}
			}
			product, err := GlobalFromClients(p.Model.Prior, full)
			if err != nil {
				t.Fatal(err)
			}
			central, err := p.Model.Centralised(p.Clients)
			if err != nil {
				t.Fatal(err)
			}
			sameGaussian(t, "product vs centralised", product, central, 1e-9)
		})
	}
}

// TestGroundTruthSplits checks the sizes and the heterogeneity of each split.
func TestGroundTruthSplits(t *testing.T) {
	base := Config{Clients: 4, Dims: 2, PerClient: 10, Test: 5, NoiseVar: 1, PriorVar: 1, Correlation: 0, Seed: 3}
	for _, tc := range []struct {
		split Split
		h     float64
		sizes []int
	}{
		{IID, 0, []int{10, 10, 10, 10}},
		{UnequalSizes, 0, []int{10, 10, 10, 10}},
		// 1 each, then 36 * (1, 1/4, 1/9, 1/16) / 1.4236 = (25.29, 6.32, 2.81, 1.58): floors 25, 6, 2, 1
		// and the two largest remainders (.81, .58) one more each.
		{UnequalSizes, 1, []int{26, 7, 4, 3}},
		{ManySmall, 1, []int{4, 4, 4, 4, 4, 4, 4, 4, 4, 4}[:10]},
	} {
		cfg := base
		cfg.Split, cfg.Heterogeneity = tc.split, tc.h
		p, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Sizes()
		if tc.split == ManySmall {
			if len(got) != 40 {
				t.Errorf("%s: %d clients, want 40", tc.split, len(got))
			}
			continue
		}
		if len(got) != len(tc.sizes) {
			t.Fatalf("%s h=%v: sizes %v, want %v", tc.split, tc.h, got, tc.sizes)
		}
		for k := range got {
			if got[k] != tc.sizes[k] {
				t.Errorf("%s h=%v: sizes %v, want %v", tc.split, tc.h, got, tc.sizes)
				break
			}
		}
	}
	// Target skew at h = 1: the clients hold increasing bands of targets.
	cfg := base
	cfg.Split, cfg.Heterogeneity = TargetSkew, 1
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(p.Clients); k++ {
		if maxOf(p.Clients[k-1].Y) > minOf(p.Clients[k].Y) {
			t.Errorf("target skew h=1: client %d's largest target %v above client %d's smallest %v",
				k-1, maxOf(p.Clients[k-1].Y), k, minOf(p.Clients[k].Y))
		}
	}
}

func maxOf(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	return m
}

func minOf(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		m = math.Min(m, v)
	}
	return m
}

// TestGroundTruthTwoClientsByHand checks every distance on a one-parameter case computed by hand:
// prior N(0, 1), clients N(1, 1/2) and N(2, 1/4). The exact global has precision 2 + 4 - 1 = 5 and
// mean (2*1 + 4*2) / 5 = 2: N(2, 0.2).
func TestGroundTruthTwoClientsByHand(t *testing.T) {
	clients := []Diagonal{{Mean: []float64{1}, Var: []float64{0.5}}, {Mean: []float64{2}, Var: []float64{0.25}}}
	prior := Diagonal{Mean: []float64{0}, Var: []float64{1}}
	exact, err := NewGaussian([]float64{2}, mat.NewSymDense(1, []float64{0.2}))
	if err != nil {
		t.Fatal(err)
	}
	test := Data{X: mat.NewDense(1, 1, []float64{1}), Y: []float64{2}}
	aggs, err := ApplyRules(clients, []int{1, 3}, prior, RuleOptions{Weightings: []Weighting{Equal}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	byLabel := map[string]Diagonal{}
	for _, a := range aggs {
		byLabel[a.Label()] = a.Q
	}
	for _, tc := range []struct {
		label      string
		mean, v    float64 // the rule's aggregate, by hand (docs/aggregation.md)
		klQP, klPQ float64
		w2         float64
	}{
		// Each row: KL(q||p) = (log(0.2/v) + (v + (m-2)^2)/0.2 - 1)/2,
		// KL(p||q) = (log(v/0.2) + (0.2 + (m-2)^2)/v - 1)/2, W2 = sqrt((m-2)^2 + (sqrt v - sqrt 0.2)^2),
		// evaluated on a calculator.
		// EAA: N(1.5, (0.5 + 0.25)/2).
		{"EAA/equal", 1.5, 0.375, 0.7481956703, 0.4143043297, 0.526571403},
		// GAA: N(1.5, (0.5 + 0.25)/4).
		{"GAA/equal", 1.5, 0.1875, 0.6260192606, 0.6677307394, 0.5002016247},
		// Conflation: precision 2 + 4, mean (2*1 + 4*2)/6.
		{"Conflation", 10.0 / 6, 1.0 / 6, 0.2856052228, 0.3421725549, 0.3356030484},
		// DWC with the prior as previous global: exactly N(2, 0.2).
		{"DWC", 2, 0.2, 0, 0, 0},
	} {
		q, ok := byLabel[tc.label]
		if !ok {
			t.Fatalf("no aggregate %s", tc.label)
		}
		if !near(q.Mean[0], tc.mean, 1e-12) || !near(q.Var[0], tc.v, 1e-12) {
			t.Errorf("%s: N(%v, %v), want N(%v, %v)", tc.label, q.Mean[0], q.Var[0], tc.mean, tc.v)
		}
		d, err := Compare(q, exact, 1, test)
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(d.KLToTruth), tc.klQP, 1e-9) || !near(float64(d.KLFromTruth), tc.klPQ, 1e-9) || !near(d.W2, tc.w2, 1e-7) {
			t.Errorf("%s: KL(q||p) %.7g KL(p||q) %.7g W2 %.7g, want %.7g %.7g %.7g", tc.label,
				float64(d.KLToTruth), float64(d.KLFromTruth), d.W2, tc.klQP, tc.klPQ, tc.w2)
		}
		if pp := d.PerParam[0]; !near(float64(pp.KLToTruth), float64(d.KLToTruth), 1e-12) ||
			!near(float64(pp.KLFromTruth), float64(d.KLFromTruth), 1e-12) || !near(pp.W2, d.W2, 1e-7) {
			t.Errorf("%s: one parameter: per-parameter %+v differs from the total %+v", tc.label, d.PerParam[0], d)
		}
		if !near(d.VarRatio, tc.v/0.2, 1e-12) || !near(d.MeanError, math.Abs(tc.mean-2), 1e-12) ||
			!near(d.MeanErrorSD, math.Abs(tc.mean-2)/math.Sqrt(0.2), 1e-12) {
			t.Errorf("%s: var ratio %v, mean error %v (%v sd)", tc.label, d.VarRatio, d.MeanError, d.MeanErrorSD)
		}
		// Predictive at x = 1, y = 2: N(m, v + 1).
		s2 := tc.v + 1
		nll := 0.5*math.Log(2*math.Pi*s2) + (2-tc.mean)*(2-tc.mean)/(2*s2)
		if !near(d.Predictive.NLL, nll, 1e-12) || d.Predictive.Coverage90 != 1 {
			t.Errorf("%s: predictive %+v, want NLL %v and coverage 1", tc.label, d.Predictive, nll)
		}
	}
}

// TestGroundTruthFullCovarianceByHand checks KL and W2 between N(0, I) and N(0, C), C = [[1, .5],
// [.5, 1]]: KL(I || C) = (tr C^-1 - 2 + log det C)/2 = (8/3 - 2 + log 0.75)/2; C's eigenvalues are 1.5
// and 0.5, so W2^2 = 4 - 2 (sqrt 1.5 + sqrt 0.5).
func TestGroundTruthFullCovarianceByHand(t *testing.T) {
	c := mat.NewSymDense(2, []float64{1, 0.5, 0.5, 1})
	p, err := NewGaussian([]float64{0, 0}, c)
	if err != nil {
		t.Fatal(err)
	}
	q := Diagonal{Mean: []float64{0, 0}, Var: []float64{1, 1}}
	qg, err := q.Full()
	if err != nil {
		t.Fatal(err)
	}
	kl, err := KL(qg, p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (8.0/3 - 2 + math.Log(0.75)) / 2; !near(kl, want, 1e-12) {
		t.Errorf("KL(I || C) = %v, want %v", kl, want)
	}
	kl2, _ := KL(p, qg) // (tr C - 2 - log det C)/2
	if want := -math.Log(0.75) / 2; !near(kl2, want, 1e-12) {
		t.Errorf("KL(C || I) = %v, want %v", kl2, want)
	}
	w, err := W2([]float64{0, 0}, qg.Cov, []float64{0, 0}, c)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Sqrt(4 - 2*(math.Sqrt(1.5)+math.Sqrt(0.5))); !near(w, want, 1e-12) {
		t.Errorf("W2 = %v, want %v", w, want)
	}
	// Mean-field VI keeps 1/L_ii = 1 - 0.25 = 0.75; moment matching the marginals 1.
	vi, err := MeanFieldVI(p)
	if err != nil {
		t.Fatal(err)
	}
	if !near(vi.Var[0], 0.75, 1e-12) || !near(vi.Var[1], 0.75, 1e-12) || MeanFieldMoment(p).Var[0] != 1 {
		t.Errorf("mean-field VI variances %v, want 0.75", vi.Var)
	}
}

// TestGroundTruthPointMass checks FedAvg: infinite KL both ways, a finite W2 (its standard
// deviation is 0), and the predictive with the noise alone.
func TestGroundTruthPointMass(t *testing.T) {
	exact, _ := NewGaussian([]float64{2}, mat.NewSymDense(1, []float64{0.2}))
	test := Data{X: mat.NewDense(1, 1, []float64{1}), Y: []float64{2}}
	d, err := Compare(Diagonal{Mean: []float64{1.5}, Var: []float64{0}}, exact, 1, test)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(float64(d.KLToTruth), 1) || !math.IsInf(float64(d.KLFromTruth), 1) {
		t.Errorf("point mass: KL %v %v, want +Inf", d.KLToTruth, d.KLFromTruth)
	}
	if want := math.Sqrt(0.25 + 0.2); !near(d.W2, want, 1e-12) {
		t.Errorf("point mass: W2 %v, want %v", d.W2, want)
	}
	b, err := json.Marshal(d)
	if err != nil || !strings.Contains(string(b), `"kl_q_p":"+Inf"`) {
		t.Errorf("JSON of a point mass: %s (%v)", b, err)
	}
	var back Distances
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(float64(back.KLToTruth), 1) {
		t.Errorf("JSON round trip: %+v (%v)", back, err)
	}
}

// TestGroundTruthDWCVariance checks a property of the linear problem: DWC with the prior as previous
// global gives the global mean-field VI's variances exactly (the diagonal of the global precision is
// the sum of the clients' diagonals minus K-1 times the prior's).
func TestGroundTruthDWCVariance(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Split, cfg.Heterogeneity, cfg.Test = CovariateShift, 1, 10
	res, err := Run(cfg, RuleOptions{Rules: []aggregate.Rule{aggregate.DWC}})
	if err != nil {
		t.Fatal(err)
	}
	vi := res.References[0]
	if vi.Label != RefMeanFieldVI || len(res.Rules) != 1 {
		t.Fatalf("unexpected result layout: %s, %d rules", vi.Label, len(res.Rules))
	}
	for i, v := range res.Rules[0].Q.Var {
		if !near(v, vi.Q.Var[i], 1e-9) {
			t.Errorf("DWC variance[%d] %v, global mean-field VI %v", i, v, vi.Q.Var[i])
		}
	}
}

// TestGroundTruthSameSeed checks that the same seed gives the same result, bit for bit, and another
// seed another.
func TestGroundTruthSameSeed(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Split, cfg.Heterogeneity, cfg.Test = TargetSkew, 0.5, 50
	run := func(seed uint64) []byte {
		c := cfg
		c.Seed = seed
		r, err := Run(c, RuleOptions{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := run(1), run(1), run(2)
	if !bytes.Equal(a, b) {
		t.Error("same seed, different results")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds, same results")
	}
}

// TestGroundTruthBadInput checks that bad configurations and inputs are errors, not panics.
func TestGroundTruthBadInput(t *testing.T) {
	ok := DefaultConfig()
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"split", func(c *Config) { c.Split = "dirichlet" }, "unknown split"},
		{"heterogeneity", func(c *Config) { c.Heterogeneity = 1.5 }, "heterogeneity"},
		{"nan heterogeneity", func(c *Config) { c.Heterogeneity = math.NaN() }, "heterogeneity"},
		{"clients", func(c *Config) { c.Clients = 0 }, "clients"},
		{"dims", func(c *Config) { c.Dims = 0 }, "dims"},
		{"noise", func(c *Config) { c.NoiseVar = 0 }, "noise"},
		{"prior", func(c *Config) { c.PriorVar = math.Inf(1) }, "prior"},
		{"correlation", func(c *Config) { c.Correlation = 1 }, "correlation"},
		{"too much data", func(c *Config) { c.Clients, c.PerClient = 10000, 1_000_000 }, "at most 10000000 examples"},
		{"likelihood", func(c *Config) { c.Likelihood = "poisson" }, "unknown likelihood"},
		{"many small", func(c *Config) { c.Split, c.Heterogeneity, c.PerClient = ManySmall, 1, 3 }, "at least 10 examples"},
	} {
		c := ok
		tc.edit(&c)
		if _, err := Run(c, RuleOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	prior := Diagonal{Mean: []float64{0}, Var: []float64{1}}
	if _, err := ApplyRules(nil, nil, prior, RuleOptions{}); err == nil {
		t.Error("no clients: no error")
	}
	if _, err := ApplyRules([]Diagonal{{Mean: []float64{0}, Var: []float64{-1}}}, []int{1}, prior, RuleOptions{}); err == nil {
		t.Error("negative variance: no error")
	}
	if _, err := ApplyRules([]Diagonal{{Mean: []float64{0, 1}, Var: []float64{1, 1}}}, []int{1}, prior, RuleOptions{}); err == nil {
		t.Error("dimension mismatch: no error")
	}
	if _, err := (LinearModel{Prior: nil, NoiseVar: 1}).Posterior(Data{}); err == nil {
		t.Error("no prior: no error")
	}
	g, _ := NewGaussian([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if _, err := (LinearModel{Prior: g, NoiseVar: 1}).Posterior(Data{X: mat.NewDense(1, 1, []float64{math.NaN()}), Y: []float64{1}}); err == nil {
		t.Error("NaN input: no error")
	}
	if _, err := NewGaussian([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 2, 2, 1})); err == nil {
		t.Error("indefinite covariance: no error")
	}
}
