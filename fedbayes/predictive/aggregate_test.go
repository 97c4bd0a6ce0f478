package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestClassAggregateHandComputed(t *testing.T) {
	c1 := []float32{0.6, 0.3, 0.1}
	c2 := []float32{0.5, 0.2, 0.3}
	tests := []struct {
		name    string
		weights []float64
		prior   []float32
		beta    float64
		want    []float64
	}{
		// p ∝ p1 p2 / prior = [0.3/0.5, 0.06/0.25, 0.03/0.25] = [0.6, 0.24, 0.12], sum 0.96.
		{"bcm with prior", nil, []float32{0.5, 0.25, 0.25}, 1, []float64{0.625, 0.25, 0.125}},
		// Uniform prior: p ∝ [0.30, 0.06, 0.03] = [10, 2, 1] / 13.
		{"bcm uniform prior", nil, nil, 1, []float64{10. / 13, 2. / 13, 1. / 13}},
		{"bcm explicit uniform", nil, []float32{1. / 3, 1. / 3, 1. / 3}, 1, []float64{10. / 13, 2. / 13, 1. / 13}},
		// Mixture 3:1: 0.75 c1 + 0.25 c2.
		{"mixture weighted", []float64{3, 1}, nil, 0, []float64{0.575, 0.275, 0.15}},
		{"mixture equal", nil, []float32{0.5, 0.25, 0.25}, 0, []float64{0.55, 0.25, 0.2}},
	}
	for _, tc := range tests {
		a, err := NewClassAggregate([][]float32{c1, c2}, tc.weights, tc.prior, 3)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := a.Beta(tc.beta)
		for c, w := range tc.want {
			if !near(float64(got[c]), w, 1e-6) {
				t.Errorf("%s: class %d: got %v, want %v", tc.name, c, got[c], w)
			}
		}
	}
}

// TestBetaInterpolation checks Eq. 4.8 against a direct float64 evaluation, and that beta = 0 is the
// mixture and beta = 1 the product (also approached continuously).
func TestBetaInterpolation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const K, N, C = 4, 7, 5
	clients := make([][]float32, K)
	for k := range clients {
		clients[k] = randomRows(rng, N, C)
	}
	prior := randomRows(rng, N, C)
	weights := []float64{1, 2, 3, 4}
	a, err := NewClassAggregate(clients, weights, prior, C)
	if err != nil {
		t.Fatal(err)
	}
	prod, mix := a.Product(), a.Mixture()
	for _, beta := range []float64{0, 1e-9, 0.3, 0.5, 0.8, 1 - 1e-9, 1} {
		got := a.Beta(beta)
		for n := 0; n < N; n++ {
			ref := make([]float64, C)
			var s float64
			for c := 0; c < C; c++ {
				p := 1.0
				m := 0.0
				for k := 0; k < K; k++ {
					p *= float64(clients[k][n*C+c])
					m += weights[k] / 10 * float64(clients[k][n*C+c])
				}
				p /= math.Pow(float64(prior[n*C+c]), K-1)
				ref[c] = math.Pow(p, beta) * math.Pow(m, 1-beta)
				s += ref[c]
			}
			for c := 0; c < C; c++ {
				if !near(float64(got[n*C+c]), ref[c]/s, 2e-6) {
					t.Errorf("beta %v, example %d, class %d: got %v, want %v", beta, n, c, got[n*C+c], ref[c]/s)
				}
				if beta < 1e-6 && !near(float64(got[n*C+c]), float64(mix[n*C+c]), 1e-6) {
					t.Errorf("beta %v: not the mixture at example %d class %d", beta, n, c)
				}
				if beta > 1-1e-6 && !near(float64(got[n*C+c]), float64(prod[n*C+c]), 1e-6) {
					t.Errorf("beta %v: not the product at example %d class %d", beta, n, c)
				}
			}
		}
	}
}

// TestProductLogSpace: 2,000 clients whose probabilities underflow a direct product (0.4^1000 *
// 0.6^1000 is about 1e-620) still give the exact answer, here uniform by symmetry.
func TestProductLogSpace(t *testing.T) {
	clients := make([][]float32, 2000)
	for k := range clients {
		if k%2 == 0 {
			clients[k] = []float32{0.4, 0.6}
		} else {
			clients[k] = []float32{0.6, 0.4}
		}
	}
	// A prior far from uniform enters with exponent 1 - K = -1999.
	a, err := NewClassAggregate(clients, nil, []float32{0.5, 0.5}, 2)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Product()
	if !near(float64(p[0]), 0.5, 1e-6) || !near(float64(p[1]), 0.5, 1e-6) {
		t.Errorf("product %v, want [0.5 0.5]", p)
	}
	nll, err := a.NLL(0.7, []int32{1})
	if err != nil || math.IsNaN(nll) || !near(nll, math.Log(2), 1e-9) {
		t.Errorf("NLL %v (%v), want log 2", nll, err)
	}
	// A class ruled out by one client (probability 0) stays finite through the floor.
	b, err := NewClassAggregate([][]float32{{0, 1}, {0.5, 0.5}}, nil, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if q := b.Product(); !(q[0] < 1e-11) || !near(float64(q[1]), 1, 1e-9) {
		t.Errorf("product with a zero: %v", q)
	}
}

func TestClassAggregateErrors(t *testing.T) {
	ok := []float32{0.5, 0.5}
	tests := []struct {
		clients [][]float32
		weights []float64
		prior   []float32
		C       int
		want    string
	}{
		{nil, nil, nil, 2, "no client"},
		{[][]float32{ok}, nil, nil, 1, "numClasses"},
		{[][]float32{ok, {0.5, 0.5, 0.5, 0.5}}, nil, nil, 2, "client 1 has 4"},
		{[][]float32{ok, {0.7, 0.7}}, nil, nil, 2, "client 1, example 0: probabilities sum"},
		{[][]float32{ok, {float32(math.NaN()), 1}}, nil, nil, 2, "client 1, example 0, class 0"},
		{[][]float32{ok, ok}, []float64{1}, nil, 2, "1 weights for 2"},
		{[][]float32{ok, ok}, []float64{1, -1}, nil, 2, "client 1 is -1"},
		{[][]float32{ok, ok}, []float64{0, 0}, nil, 2, "positive sum"},
		{[][]float32{ok, ok}, nil, []float32{1}, 2, "prior has 1"},
		{[][]float32{ok, ok}, nil, []float32{0.9, 0.9}, 2, "prior, example 0"},
	}
	for _, tc := range tests {
		_, err := NewClassAggregate(tc.clients, tc.weights, tc.prior, tc.C)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.clients, err, tc.want)
		}
	}
	a, _ := NewClassAggregate([][]float32{ok}, nil, nil, 2)
	if _, err := a.NLL(0.5, []int32{2}); err == nil || !strings.Contains(err.Error(), "label 2 of example 0") {
		t.Errorf("bad label: %v", err)
	}
	if _, err := a.NLL(math.NaN(), []int32{1}); err == nil {
		t.Errorf("NaN beta accepted")
	}
}

func TestGaussAggregateHandComputed(t *testing.T) {
	// Clients N(1, 1) and N(3, 0.5), prior N(0, 4): precision 1 + 2 - 1/4 = 2.75,
	// mean (1 + 6 - 0) / 2.75. Equal mixture: mean 2, variance 0.5 (1 + 1) + 0.5 (0.5 + 1) = 1.75.
	means := [][]float32{{1}, {3}}
	vars := [][]float32{{1}, {0.5}}
	a, err := NewGaussAggregate(means, vars, nil, []float32{0}, []float32{4})
	if err != nil {
		t.Fatal(err)
	}
	pb := 0.5*2.75 + 0.5/1.75
	tests := []struct {
		beta       float64
		mean, vari float64
	}{
		{1, 7 / 2.75, 1 / 2.75},
		{0, 2, 1.75},
		{0.5, (0.5*2.75*(7/2.75) + 0.5/1.75*2) / pb, 1 / pb},
	}
	for _, tc := range tests {
		m, v := a.Beta(tc.beta)
		if !near(float64(m[0]), tc.mean, 1e-6) || !near(float64(v[0]), tc.vari, 1e-6) {
			t.Errorf("beta %v: N(%v, %v), want N(%v, %v)", tc.beta, m[0], v[0], tc.mean, tc.vari)
		}
	}
	// Without a prior correction, and with 3:1 weights (raw form of Eq. 4.7 as reference).
	b, err := NewGaussAggregate(means, vars, []float64{3, 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, v := b.Product()
	if !near(float64(m[0]), 7.0/3, 1e-6) || !near(float64(v[0]), 1.0/3, 1e-6) {
		t.Errorf("flat-prior product N(%v, %v), want N(7/3, 1/3)", m[0], v[0])
	}
	mm := 0.75*1 + 0.25*3
	m, v = b.Mixture()
	if want := 0.75*(1+1) + 0.25*(0.5+9) - mm*mm; !near(float64(m[0]), mm, 1e-6) || !near(float64(v[0]), want, 1e-6) {
		t.Errorf("mixture N(%v, %v), want N(%v, %v)", m[0], v[0], mm, want)
	}
	// NLL at beta = 1 by hand.
	nll, err := a.NLL(1, []float32{2})
	want := 0.5 * (math.Log(2*math.Pi/2.75) + (2-7/2.75)*(2-7/2.75)*2.75)
	if err != nil || !near(nll, want, 1e-9) {
		t.Errorf("NLL %v (%v), want %v", nll, err, want)
	}
}

func TestGaussAggregateErrors(t *testing.T) {
	one := [][]float32{{1}}
	tests := []struct {
		means, vars [][]float32
		pm, pv      []float32
		want        string
	}{
		{nil, nil, nil, nil, "no client"},
		{one, [][]float32{{0}}, nil, nil, "client 0, example 0: variance 0"},
		{[][]float32{{1}, {1, 2}}, [][]float32{{1}, {1, 2}}, nil, nil, "client 1 has 2 means"},
		{one, one, []float32{0}, nil, "1 prior means but 0"},
		{one, one, []float32{0, 0}, []float32{1, 1}, "2 prior means"},
		// Two clients of variance 1 and a prior of variance 0.4: precision 2 - 2.5 < 0.
		{[][]float32{{1}, {1}}, [][]float32{{1}, {1}}, []float32{0}, []float32{0.4}, "example 0: BCM precision"},
	}
	for _, tc := range tests {
		_, err := NewGaussAggregate(tc.means, tc.vars, nil, tc.pm, tc.pv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.means, err, tc.want)
		}
	}
}

// randomRows returns n random probability rows of c classes.
func randomRows(rng *rand.Rand, n, c int) []float32 {
	out := make([]float32, n*c)
	for i := 0; i < n; i++ {
		var s float64
		row := make([]float64, c)
		for j := range row {
			row[j] = 0.05 + rng.Float64()
			s += row[j]
		}
		for j := range row {
			out[i*c+j] = float32(row[j] / s)
		}
	}
	return out
}
