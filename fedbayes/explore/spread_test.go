package explore

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

func TestSpreadNorm(t *testing.T) {
	// Two parameters, two clients, equal weights:
	//   p0: N(0, 1), N(2, 0.25); p1: N(1, 4), N(1, 4).
	// EAA variances 0.625 and 4: norm sqrt(4.625). GAA: 0.3125 and 2: sqrt(2.3125).
	// Conflation: 0.2 and 2: sqrt(2.2). LP: 1.625 and 4: sqrt(5.625). FedAvg: 0.
	params := [][]aggregate.Gaussian{
		{{Mean: 0, Var: 1}, {Mean: 2, Var: 0.25}},
		{{Mean: 1, Var: 4}, {Mean: 1, Var: 4}},
	}
	rules := []aggregate.Rule{aggregate.EAA, aggregate.GAA, aggregate.Conflation, aggregate.LP, aggregate.FedAvg}
	got, err := SpreadNorm(params, nil, rules, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Sqrt(4.625), math.Sqrt(2.3125), math.Sqrt(2.2), math.Sqrt(5.625), 0}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("%s: %v, want %v", rules[i], got[i], want[i])
		}
	}
	if c := ClientSpreadNorm(params); math.Abs(c[0]-math.Sqrt(5)) > 1e-12 || math.Abs(c[1]-math.Sqrt(4.25)) > 1e-12 {
		t.Errorf("ClientSpreadNorm = %v, want [sqrt 5, sqrt 4.25]", c)
	}

	for _, tc := range []struct {
		name   string
		params [][]aggregate.Gaussian
		rules  []aggregate.Rule
		err    string
	}{
		{"no parameters", nil, rules, "no parameters"},
		{"ragged", [][]aggregate.Gaussian{params[0], params[0][:1]}, rules, "parameter 1 has 1 clients"},
		{"DWC without previous", params, []aggregate.Rule{aggregate.DWC}, "parameter 0, rule DWC"},
	} {
		if _, err := SpreadNorm(tc.params, nil, tc.rules, aggregate.Options{}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestSyntheticParams(t *testing.T) {
	a, err := SyntheticParams(10, 200, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SyntheticParams(10, 200, 7)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different parameters")
	}
	c, _ := SyntheticParams(10, 200, 8)
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same parameters")
	}
	for p, clients := range a {
		for k, g := range clients {
			if sd := math.Sqrt(g.Var); sd < math.Exp(-4.5) || sd > math.Exp(-2.5) {
				t.Fatalf("parameter %d client %d: standard deviation %v outside [e^-4.5, e^-2.5]", p, k, sd)
			}
		}
	}
	if _, err := SyntheticParams(0, 5, 1); err == nil {
		t.Error("K = 0 accepted")
	}
	// The ordering the notebook tells: with K = 10 equal-weight clients, conflation shrinks the
	// spread most, GAA by about sqrt(K) against EAA, and LP (hence PPA) inflates it with the
	// clients' disagreement.
	rules := []aggregate.Rule{aggregate.Conflation, aggregate.GAA, aggregate.EAA, aggregate.LP}
	n, err := SpreadNorm(a, nil, rules, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(n[0] < n[1] && n[1] < n[2] && n[2] < n[3]) {
		t.Errorf("spread norms %v not increasing over %v", n, rules)
	}
	if r := n[2] / n[1]; math.Abs(r-math.Sqrt(10)) > 1e-9 {
		t.Errorf("EAA/GAA = %v, want sqrt(10) (equal weights: variance sum w s2 vs sum w^2 s2)", r)
	}
}
