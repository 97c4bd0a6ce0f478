package aggregate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// toy is the example of Jamoussi et al. (BA-BFL), Fig. 1: N(0,1) and N(2,0.25), equal weights.
var toy = []Gaussian{{0, 1}, {2, 0.25}}

func TestScalarToyExample(t *testing.T) {
	prev := Gaussian{Mean: 1, Var: 2}
	tests := []struct {
		rule      Rule
		mean, vr  float64
		tol       float64
		reasoning string
	}{
		{EAA, 1, 0.625, 1e-15, "(1+0.25)/2"},
		{GAA, 1, 0.3125, 1e-15, "(1+0.25)/4"},
		{AALV, 1, 0.5, 1e-15, "exp((0+log 0.25)/2)"},
		{LP, 1, 1.625, 1e-15, "0.625 + (1+1)/2"},
		{Conflation, 1.6, 0.2, 1e-15, "precisions 1, 4: (0+8)/5, 1/5"},
		{CF, 1.6, 0.2, 1e-15, "0.5 / (0.5+2)"},
		{RKLB, 1.6, 0.4, 1e-15, "1 / (0.5+2)"},
		{WB, 1, 0.5625, 1e-15, "(0.5*1 + 0.5*0.5)^2"},
		{DWC, 7.5 / 4.5, 2.0 / 9, 1e-15, "prior N(1,2): P = 5 - 0.5, mean (8 - 0.5)/4.5"},
		{FedAvg, 1, 0, 1e-15, "point mass at the mean"},
		{PPA, 1, 1.625, 0.05, "sampled: LP's moments within sampling error"},
	}
	for _, tc := range tests {
		opt := Options{Previous: &prev, PopulationSize: 200000, Seed: 7}
		got, err := Scalar(tc.rule, toy, []float64{0.5, 0.5}, opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		t.Logf("toy %-10s mean %.6f variance %.6f   (%s)", tc.rule, got.Mean, got.Var, tc.reasoning)
		if !near(got.Mean, tc.mean, tc.tol) || !near(got.Var, tc.vr, tc.tol) {
			t.Errorf("%s: got N(%v, %v), want N(%v, %v)", tc.rule, got.Mean, got.Var, tc.mean, tc.vr)
		}
	}
}

func randomClients(rng *rand.Rand, K int) ([]Gaussian, []float64) {
	c := make([]Gaussian, K)
	raw := make([]float64, K)
	for k := range c {
		c[k] = Gaussian{Mean: rng.NormFloat64() * 3, Var: math.Exp(rng.Float64()*27.6 - 18.4)} // 1e-8 .. 1e4
		raw[k] = 0.1 + rng.Float64()
	}
	w, _ := NormalizeWeights(raw)
	return c, w
}

func TestScalarProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		K := 2 + trial%7
		c, w := randomClients(rng, K)
		get := func(r Rule, w []float64) Gaussian {
			g, err := Scalar(r, c, w, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		eaa, gaa, lp := get(EAA, w), get(GAA, w), get(LP, w)
		if !(gaa.Var < eaa.Var) {
			t.Errorf("trial %d: GAA variance %v not below EAA's %v", trial, gaa.Var, eaa.Var)
		}
		if lp.Var < eaa.Var {
			t.Errorf("trial %d: LP variance %v below EAA's %v", trial, lp.Var, eaa.Var)
		}
		cf := get(CF, w)
		kMax := 0
		for k := range w {
			if w[k] > w[kMax] {
				kMax = k
			}
		}
		if cf.Var > c[kMax].Var*(1+1e-12) {
			t.Errorf("trial %d: CF variance %v above the max-weight client's %v", trial, cf.Var, c[kMax].Var)
		}
		eq := EqualWeights(K)
		conf, cfEq, rklb := get(Conflation, nil), get(CF, eq), get(RKLB, eq)
		if cfEq != conf {
			t.Errorf("trial %d: CF with equal weights %v != Conflation %v", trial, cfEq, conf)
		}
		if !near(rklb.Mean, conf.Mean, 1e-12) || !near(rklb.Var, float64(K)*conf.Var, 1e-12) {
			t.Errorf("trial %d: RKLB equal weights %v; want Conflation's mean and K x its variance (%v)", trial, rklb, conf)
		}
		same := make([]Gaussian, K)
		for k := range same {
			same[k] = c[0]
		}
		if g, _ := Scalar(WB, same, w, Options{}); !near(g.Mean, c[0].Mean, 1e-12) || !near(g.Var, c[0].Var, 1e-12) {
			t.Errorf("trial %d: WB of identical Gaussians %v, want %v", trial, g, c[0])
		}
	}
}

func TestScalarSingleClientIsIdentity(t *testing.T) {
	c := []Gaussian{{Mean: -1.25, Var: 3e-7}}
	prev := Gaussian{Mean: 5, Var: 2}
	for _, r := range Rules() {
		got, err := Scalar(r, c, []float64{1}, Options{Previous: &prev, PopulationSize: 100000, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		wantVar := c[0].Var
		if r == FedAvg {
			wantVar = 0
		}
		tol := 1e-12
		if r == PPA {
			tol = 0.02
		}
		if !near(got.Mean, c[0].Mean, tol) || !near(got.Var, wantVar, tol) {
			t.Errorf("%s: K=1 gives %v, want %v", r, got, c[0])
		}
	}
}

func TestScalarPPASeed(t *testing.T) {
	c, w := randomClients(rand.New(rand.NewPCG(3, 4)), 5)
	a, _ := Scalar(PPA, c, w, Options{Seed: 11})
	b, _ := Scalar(PPA, c, w, Options{Seed: 11})
	d, _ := Scalar(PPA, c, w, Options{Seed: 12})
	if a != b || a == d {
		t.Errorf("PPA: seed 11 twice gave %v and %v; seed 12 gave %v", a, b, d)
	}
}

func TestDWCPolicies(t *testing.T) {
	// Clients less certain than the previous global: P = 1/2 + 1/2 - 1/0.5 = -1.
	clients := []Gaussian{{0, 2}, {1, 2}}
	prev := Gaussian{Mean: 3, Var: 0.5}
	tests := []struct {
		policy  DWCPolicy
		want    Gaussian
		wantErr string
	}{
		{DWCKeepPrevious, prev, ""},
		{DWCUseConflation, Gaussian{0.5, 1}, ""},
		{DWCFail, Gaussian{}, "not positive"},
	}
	for _, tc := range tests {
		got, err := Scalar(DWC, clients, nil, Options{Previous: &prev, DWCPolicy: tc.policy})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", tc.policy, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !near(got.Mean, tc.want.Mean, 1e-15) || !near(got.Var, tc.want.Var, 1e-15) {
			t.Errorf("%v: got %v (%v), want %v", tc.policy, got, err, tc.want)
		}
	}
}

func TestScalarBadInput(t *testing.T) {
	prev := Gaussian{0, 1}
	tests := []struct {
		name    string
		rule    Rule
		clients []Gaussian
		weights []float64
		opt     Options
		want    string
	}{
		{"unknown rule", "Median", toy, nil, Options{}, `unknown rule "Median"`},
		{"negative weight", EAA, toy, []float64{1.5, -0.5}, Options{}, "client 1: weight -0.5 is negative"},
		{"NaN weight", EAA, toy, []float64{math.NaN(), 0.5}, Options{}, "client 0: weight is NaN"},
		{"sum not one", EAA, toy, []float64{1, 1}, Options{}, "sum to 2, not 1"},
		{"wrong count", EAA, toy, []float64{1}, Options{}, "1 weights for 2 clients"},
		{"zero variance", GAA, []Gaussian{{0, 1}, {0, 0}}, nil, Options{}, "client 1: variance 0 is not positive"},
		{"negative variance", GAA, []Gaussian{{0, -1}, {0, 1}}, nil, Options{}, "client 0: variance -1 is not positive"},
		{"NaN mean", LP, []Gaussian{{0, 1}, {math.NaN(), 1}}, nil, Options{}, "client 1: mean is NaN"},
		{"Inf variance", LP, []Gaussian{{0, math.Inf(1)}}, nil, Options{}, "client 0: variance is +Inf"},
		{"DWC without previous", DWC, toy, nil, Options{}, "needs the previous global"},
		{"DWC bad previous", DWC, toy, nil, Options{Previous: &Gaussian{0, 0}}, "previous global: variance 0"},
		{"no clients", EAA, nil, nil, Options{}, "no clients"},
		{"negative population", PPA, toy, nil, Options{PopulationSize: -3}, "negative"},
	}
	_ = prev
	for _, tc := range tests {
		_, err := Scalar(tc.rule, tc.clients, tc.weights, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if g, err := Scalar(EAA, toy, []float64{1, 1}, Options{Normalize: true}); err != nil || g.Var != 0.625 {
		t.Errorf("Normalize: got %v, %v", g, err)
	}
}

func TestMixtureDensity(t *testing.T) {
	// Integrates to one, and its moments are LP's (Fischer et al. (2024), Eqs. 13-14).
	w := []float64{0.3, 0.7}
	lp, _ := Scalar(LP, toy, w, Options{})
	var m0, m1, m2 float64
	const h = 1e-3
	for x := -15.0; x <= 15; x += h {
		p := MixtureDensity(toy, w, x) * h
		m0 += p
		m1 += p * x
		m2 += p * x * x
	}
	if !near(m0, 1, 1e-9) || !near(m1, lp.Mean, 1e-9) || !near(m2-m1*m1, lp.Var, 1e-8) {
		t.Errorf("mixture moments %v %v %v, want 1, %v, %v", m0, m1, m2-m1*m1, lp.Mean, lp.Var)
	}
	if p := MixtureDensity(toy, nil, 0); !near(p, 0.5*toy[0].Density(0)+0.5*toy[1].Density(0), 1e-15) {
		t.Errorf("equal-weight density %v", p)
	}
	if p := MixtureDensity(toy, []float64{1}, 0); !math.IsNaN(p) {
		t.Errorf("mismatched weights gave %v, want NaN", p)
	}
}

func TestWeighting(t *testing.T) {
	if w, err := SizeWeights([]int{100, 300}); err != nil || w[0] != 0.25 || w[1] != 0.75 {
		t.Errorf("SizeWeights: %v %v", w, err)
	}
	if _, err := SizeWeights([]int{0, 0}); err == nil {
		t.Error("SizeWeights of empty sets: no error")
	}
	if _, err := SizeWeights([]int{3, -1}); err == nil || !strings.Contains(err.Error(), "client 1") {
		t.Errorf("SizeWeights negative: %v", err)
	}
	// Hand computation, Fischer et al. (2024), Eq. 20 on three clients.
	c := []Gaussian{{0, 1}, {1, 1}, {3, 1}}
	// KL between unit-variance Gaussians is d^2/2: maxima 4.5, 2, 4.5.
	w, err := MaxDiscrepancyWeightsScalar(c)
	g := []float64{1 / 4.5, 1 / 2.0, 1 / 4.5}
	s := g[0] + g[1] + g[2]
	for k := range w {
		if err != nil || !near(w[k], g[k]/s, 1e-14) {
			t.Errorf("max discrepancy weights %v (%v), want %v", w, err, []float64{g[0] / s, g[1] / s, g[2] / s})
			break
		}
	}
	// Eq. 21: KL from the previous global N(0,1): 0.5, 4.5 for clients 1, 2 and 0 for client 0, so
	// client 0 (no divergence) takes all the weight.
	w, err = FixedPointWeightsScalar(c, Gaussian{0, 1})
	if err != nil || w[0] != 1 || w[1] != 0 || w[2] != 0 {
		t.Errorf("fixed-point weights with a zero divergence: %v %v", w, err)
	}
	w, err = FixedPointWeightsScalar(c[1:], Gaussian{0, 1})
	if err != nil || !near(w[0], 0.9, 1e-14) || !near(w[1], 0.1, 1e-14) {
		t.Errorf("fixed-point weights: %v %v, want 0.9, 0.1", w, err)
	}
	if k := KL(Gaussian{1, 2}, Gaussian{0, 1}); !near(k, 0.5*(math.Log(0.5)+3-1), 1e-15) {
		t.Errorf("KL = %v", k)
	}
}
