package reproduce

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestFischerPriorFinding checks that the prior finding compares the two priors of the prior preset
// when it ran both (the medium budget, one learning rate), and the prior preset with the E = 1 runs
// otherwise.
func TestFischerPriorFinding(t *testing.T) {
	rules := []string{"NWA-TrainSize", "WS-TrainSize", "LP-TrainSize", "WC-TrainSize", "Conflation"}
	runs := func(labels map[string]string, acc float64) runSet {
		var rs runSet
		for _, r := range rules {
			for seed := int64(0); seed < 3; seed++ {
				l := map[string]string{"variant": r}
				for k, v := range labels {
					l[k] = v
				}
				rs = append(rs, fakeRun("x-"+r, seed, l, map[string]float64{results.Accuracy: acc + jitter(seed, r+labels["prior"])}))
			}
		}
		return rs
	}
	find := func(e1, prior runSet) Finding {
		for _, f := range fischerFindings(func(p Preset) runSet {
			switch p {
			case fischerE1Preset:
				return e1
			case fischerPriorPreset:
				return prior
			}
			return nil
		}, nil) {
			if strings.HasPrefix(f.Claim, "Making the previous global posterior") {
				return f
			}
		}
		t.Fatal("no prior finding")
		return Finding{}
	}
	// E = 1 runs at the fixed-prior reference's level: the reference trained, and when both priors
	// ran they are compared within the prior preset.
	e1 := runs(map[string]string{"partition": "iid"}, 0.62)
	both := append(runs(map[string]string{"prior": "fixed"}, 0.62), runs(map[string]string{"prior": "previous-global"}, 0.62)...)
	if f := find(e1, both); f.Verdict != Inconclusive || !strings.Contains(f.Source, "paired by seed") {
		t.Errorf("both priors alike: %s (%s; %s), want inconclusive, judged within the prior preset", f.Verdict, f.Evidence, f.Source)
	}
	hurt := append(runs(map[string]string{"prior": "fixed"}, 0.62), runs(map[string]string{"prior": "previous-global"}, 0.45)...)
	if f := find(e1, hurt); f.Verdict != Holds {
		t.Errorf("updated prior lower: %s (%s), want holds", f.Verdict, f.Evidence)
	}
	// E = 1 runs far above the fixed-prior reference (another learning rate): the reference did not
	// train, so a harm cannot show and every check is set aside.
	if f := find(runs(map[string]string{"partition": "iid"}, 0.9), hurt); f.Verdict != NotTestable || f.Aside == 0 || !strings.Contains(f.Why, "barely trained") {
		t.Errorf("untrained reference: %s, %d set aside (%s), want not testable with its reason", f.Verdict, f.Aside, f.Why)
	}
	e1 = runs(map[string]string{"partition": "iid"}, 0.9)
	if f := find(e1, runs(map[string]string{"prior": "previous-global"}, 0.45)); f.Verdict != Holds || strings.Contains(f.Source, "paired by seed") {
		t.Errorf("updated prior only, against the E = 1 runs: %s (%s)", f.Verdict, f.Evidence)
	}
}

// TestFischerParityContrast checks that the E = 5 parity finding states the same checks on the
// E = 1 runs, and says so when parity holds there too (the paper says it does not).
func TestFischerParityContrast(t *testing.T) {
	rules := []string{"NWA-TrainSize", "WS-TrainSize", "LP-TrainSize", "WC-TrainSize", "Conflation"}
	runs := func(acc float64) runSet {
		var rs runSet
		for _, r := range rules {
			for seed := int64(0); seed < 3; seed++ {
				// The spreads differ by rule, so the variance rules do not coincide.
				rs = append(rs, fakeRun("x-"+r, seed, map[string]string{"variant": r, "partition": "iid"},
					map[string]float64{results.Accuracy: acc + jitter(seed, r), results.Spread: float64(len(r)) * (1 + jitter(seed, r+"s"))}))
			}
		}
		return rs
	}
	e1, e5 := runs(0.77), runs(0.80)
	for _, f := range fischerFindings(func(p Preset) runSet {
		switch p {
		case fischerE1Preset:
			return e1
		case fischerE5Preset:
			return e5
		}
		return nil
	}, nil) {
		if !strings.HasPrefix(f.Claim, "With E = 5") {
			continue
		}
		if f.Verdict != Holds || !strings.Contains(f.Evidence, "The same checks on the E = 1 runs: holds") ||
			!strings.Contains(f.Evidence, "parity does not depend on the local epochs here") {
			t.Errorf("E = 5 parity: %s (%s)", f.Verdict, f.Evidence)
		}
		return
	}
	t.Fatal("no E = 5 finding")
}
