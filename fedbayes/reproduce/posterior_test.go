package reproduce

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestFrozenVariances checks the frozen-variance detection on two rows' final spreads by seed.
func TestFrozenVariances(t *testing.T) {
	runs := func(a, b []float64) runSet {
		var rs runSet
		for seed, v := range a {
			rs = append(rs, fakeRun("x-A", int64(seed), map[string]string{"variant": "A"}, map[string]float64{results.Spread: v}))
		}
		for seed, v := range b {
			rs = append(rs, fakeRun("x-B", int64(seed), map[string]string{"variant": "B"}, map[string]float64{results.Spread: v}))
		}
		return rs
	}
	for _, c := range []struct {
		name   string
		a, b   []float64
		frozen bool
	}{
		// The medium 10-client IID runs: EAA 1.3892 against AALV 1.3892 to 7e-7.
		{"equal to 1e-6", []float64{1.389199, 1.3895, 1.3890}, []float64{1.389198, 1.3895001, 1.3890}, true},
		{"one seed 0.2 % apart", []float64{1.3892, 1.3895, 1.3890}, []float64{1.3892, 1.3895, 1.3918}, false},
		// Learned variances: EAA's arithmetic mean above AALV's geometric one.
		{"learned", []float64{2.1, 2.2, 2.0}, []float64{1.9, 2.0, 1.8}, false},
		{"no seed in common", []float64{1.3892}, nil, false},
		{"zero spread", []float64{0, 0}, []float64{0, 0}, false},
	} {
		frozen, why := frozenVariances(runs(c.a, c.b), "A", "B")
		if frozen != c.frozen || frozen != (why != "") {
			t.Errorf("%s: frozen %v (%q), want %v", c.name, frozen, why, c.frozen)
		}
		if frozen && (!strings.HasPrefix(why, "the posteriors did not learn") || strings.Contains(why, "budget")) {
			t.Errorf("%s: reason %q must say the posteriors did not learn and not blame the budget", c.name, why)
		}
	}
}
