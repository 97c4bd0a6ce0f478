package reproduce

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestFrozenVariances checks varianceRulesCoincide on two rows' final spreads by seed.
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
		frozen, why := varianceRulesCoincide(runs(c.a, c.b), "A", "B")
		if frozen != c.frozen || frozen != (why != "") {
			t.Errorf("%s: frozen %v (%q), want %v", c.name, frozen, why, c.frozen)
		}
		if frozen && (!strings.Contains(why, "give the same model") || strings.Contains(why, "budget")) {
			t.Errorf("%s: reason %q must say that the rules give the same model and not blame the budget", c.name, why)
		}
	}
}

// TestCoincideReason checks that the reason given for rules that coincide follows what the runs'
// records show: the recorded posterior health where it is there, else the spread's trajectory.
func TestCoincideReason(t *testing.T) {
	// health is a row's posterior-health metrics: share moved and mean shift of the global variances,
	// share at a clamp, and the clients' local movement and disagreement.
	health := func(spread, moved, localMoved, localShift, disagreement float64) map[string]float64 {
		return map[string]float64{results.Spread: spread, results.SpreadStart: 10.19, results.VarMoved: moved, results.VarShift: 5 * moved,
			results.VarClamped: 0, results.VarLocalMoved: localMoved, results.VarLocalShift: localShift, results.VarDisagreement: disagreement}
	}
	run := func(rows ...map[string]float64) results.Run {
		r := fakeRun("x-A", 0, map[string]string{"variant": "A"}, rows[0])
		for i, m := range rows[1:] {
			r.Rows = append(r.Rows, results.Row{Round: i + 2, Metrics: m})
		}
		return r
	}
	for _, c := range []struct {
		name string
		run  results.Run
		want string
	}{
		{"recorded: frozen", run(health(1.378, 0, 0, 0.0016, 2e-6), health(1.389, 0, 0, 0.0016, 2e-6)), "the posteriors did not learn ("},
		{"recorded: uniform (the new defaults, 10 IID clients)", run(health(12, 0.9, 0.99, 0.09, 0.0028), health(15.98, 0.999, 0.99, 0.09, 0.0028)),
			"the variances learned but alike on every client ("},
		{"not recorded", run(map[string]float64{results.Spread: 1.378}, map[string]float64{results.Spread: 1.389}),
			"the clients' variances were equal (the records predate the posterior-health measures, so whether they stayed at their initial value or moved alike is not recorded; the spread went from 1.378 in the first recorded round to 1.389"},
	} {
		if got := coincideReason(runSet{c.run}); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: reason %q, want it to start with %q", c.name, got, c.want)
		}
	}
}

// TestPosteriorsDidNotLearn checks the test of the findings that compare variational nets with other
// nets: rows whose variance rules coincide count as not learned when the recorded health says the
// variances stayed put or is not recorded, and as learned (testable) when it says they moved alike
// on every client.
func TestPosteriorsDidNotLearn(t *testing.T) {
	health := func(spread, moved, localMoved, disagreement float64) map[string]float64 {
		return map[string]float64{results.Spread: spread, results.SpreadStart: 10.19, results.VarMoved: moved, results.VarShift: 5 * moved,
			results.VarClamped: 0, results.VarLocalMoved: localMoved, results.VarLocalShift: 0.09, results.VarDisagreement: disagreement}
	}
	rows := func(m map[string]float64) runSet {
		var rs runSet
		for _, v := range []string{"A", "B"} {
			for seed := int64(0); seed < 3; seed++ {
				rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v}, m))
			}
		}
		return rs
	}
	for _, c := range []struct {
		name      string
		rs        runSet
		notLearnt bool
	}{
		{"frozen", rows(health(1.389, 0, 0, 2e-6)), true},
		{"moved alike on every client", rows(health(15.98, 0.999, 0.99, 0.0028)), false},
		{"not recorded", rows(map[string]float64{results.Spread: 1.389}), true},
	} {
		if coincide, _ := varianceRulesCoincide(c.rs, "A", "B"); !coincide {
			t.Fatalf("%s: the rows must coincide for this test", c.name)
		}
		got, why := posteriorsDidNotLearn(c.rs, "A", "B")
		if got != c.notLearnt || got != (why != "") {
			t.Errorf("%s: did not learn = %v (%q), want %v", c.name, got, why, c.notLearnt)
		}
	}
}
