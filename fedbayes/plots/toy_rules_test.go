package plots

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

// The papers' case N(0,1), N(2,0.25) with equal weights, checked against hand-computed aggregates.
func TestToyRules(t *testing.T) {
	clients := []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 2, Var: 0.25}}
	w := []float64{0.5, 0.5}
	c, got, err := ToyRules("toy", "two clients", clients, w, nil, aggregate.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Gaussian1D{
		"EAA":        {1, 0.625},  // 0.5 + 0.125
		"GAA":        {1, 0.3125}, // 0.25 + 0.0625
		"AALV":       {1, 0.5},    // exp(0.5 log 1 + 0.5 log 0.25)
		"LP":         {1, 1.625},  // 0.625 + 0.5 (1 + 1)
		"WB":         {1, 0.5625}, // (0.5 + 0.25)^2
		"RKLB":       {1.6, 0.4},  // precision 0.5/1 + 0.5/0.25 = 2.5; mean (0 + 2*2)/2.5
		"CF":         {1.6, 0.2},  // w_max / 2.5
		"Conflation": {1.6, 0.2},  // 1 / (1 + 4); mean (0 + 4*2)/5
	}
	names := map[string]bool{}
	for _, g := range got {
		names[g.Name] = true
		if w, ok := want[g.Name]; ok && (math.Abs(g.Mean-w.Mean) > 1e-12 || math.Abs(g.Var-w.Var) > 1e-12) {
			t.Errorf("%s = N(%g, %g), want N(%g, %g)", g.Name, g.Mean, g.Var, w.Mean, w.Var)
		}
	}
	for n := range want {
		if !names[n] {
			t.Errorf("rule %s missing from %v", n, got)
		}
	}
	if names["FedAvg"] || names["DWC"] || !names["PPA"] {
		t.Errorf("default rules = %v: want PPA, no FedAvg, no DWC without a previous global", got)
	}
	// The drawn mixture agrees with aggregate.MixtureDensity, to the 5 significant digits stored and
	// 0 below toyTail of its peak.
	for _, s := range seriesOf(t, c) {
		if s["name"] != "mixture" {
			continue
		}
		pts := datasetPoints(t, c, s)
		peak := 0.0
		for _, p := range pts {
			peak = math.Max(peak, p[1])
		}
		for _, p := range pts {
			if ref := aggregate.MixtureDensity(clients, w, p[0]); math.Abs(p[1]-ref) > math.Max(5e-5*ref, toyTail*peak) {
				t.Fatalf("mixture at %g = %g, aggregate.MixtureDensity = %g", p[0], p[1], ref)
			}
		}
	}
	prev := aggregate.Gaussian{Mean: 0, Var: 4}
	if _, got, err := ToyRules("toy", "", clients, w, nil, aggregate.Options{Previous: &prev}); err != nil || got[len(got)-1].Name != "DWC" {
		t.Errorf("with a previous global: %v, %v; want DWC last", got, err)
	}
	if _, _, err := ToyRules("toy", "", clients, w, []aggregate.Rule{aggregate.FedAvg}, aggregate.Options{}); err == nil || !strings.Contains(err.Error(), "no density") {
		t.Errorf("explicit FedAvg: error = %v", err)
	}
	if _, _, err := ToyRules("toy", "", clients, []float64{0.5}, nil, aggregate.Options{}); err == nil {
		t.Error("one weight for two clients accepted")
	}
}
