package reproduce

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestDecayFactor checks the momentum recurrence by hand for two steps: buf1 = wd, theta1 = 1 - lr wd;
// buf2 = rho wd + wd theta1, theta2 = theta1 - lr buf2.
func TestDecayFactor(t *testing.T) {
	lr, rho, wd := 0.1, 0.5, 0.2
	t1 := 1 - lr*wd
	t2 := t1 - lr*(rho*wd+wd*t1)
	if got := decayFactor(2, lr, rho, wd); math.Abs(got-t2) > 1e-15 {
		t.Errorf("decayFactor(2) = %v, want %v", got, t2)
	}
	if got := decayFactor(0, lr, rho, wd); got != 1 {
		t.Errorf("decayFactor(0) = %v, want 1", got)
	}
}

// TestFrozenSpreadHand checks the predictions on a case small enough to work out by hand: 4 weights,
// two equal clients of 10 examples, batch 10, one epoch, one round, lr 0.5, no momentum, wd 0.1:
// theta = -9 (1 - 0.05) = -8.55; AALV spread sqrt(4 e^-8.55); c = (1 - 1/2)(1/2) = 1/4, so GAA gives
// sqrt(4 e^-8 1.25) at the floor and sqrt(4 e^-8 / 0.75) held.
func TestFrozenSpreadHand(t *testing.T) {
	f := FrozenSpread{Weights: 4, ClientSizes: []int{10, 10}, Rounds: 1, Epochs: 1, BatchSize: 10,
		LearningRate: 0.5, WeightDecay: 0.1, InitLogVar: -9}
	p, err := f.Predict()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name      string
		got, want float64
	}{
		{"AALV", p.AALV, math.Sqrt(4 * math.Exp(-8.55))},
		{"c", p.C, 0.25},
		{"GAA floor", p.GAAFloor, math.Sqrt(4 * math.Exp(-8) * 1.25)},
		{"GAA held", p.GAAHeld, math.Sqrt(4 * math.Exp(-8) / 0.75)},
		// q = 1/2, one round: v (1 - 1/4) / (1/2) = 1.5 v, the two-client EAA case of package aggregate.
		{"EAA held", p.EAAHeld, math.Sqrt(4 * math.Exp(-8) * 1.5)},
	}
	for _, w := range want {
		if math.Abs(w.got-w.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", w.name, w.got, w.want)
		}
	}
	// Size weights with sizes 10 and 30: E[n^2]/E[n]^2 = 500/400, c = (1/2)(1.25/2) = 0.3125.
	f.ClientSizes, f.SizeWeights = []int{10, 30}, true
	if p, err = f.Predict(); err != nil || math.Abs(p.C-0.3125) > 1e-12 {
		t.Errorf("size-weighted c = %v (%v), want 0.3125", p.C, err)
	}
	for _, bad := range []FrozenSpread{{}, {Weights: 1}, {Weights: 1, ClientSizes: []int{0}, Rounds: 1, Epochs: 1, BatchSize: 1},
		{Weights: 1, ClientSizes: []int{1}, Rounds: 1, Epochs: 1, BatchSize: 1, Active: 2}} {
		if _, err := bad.Predict(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
}

// TestTable4Prediction checks the finding built from the frozen-variance prediction at the paper's
// budget: every AALV and GAA cell of Table 4 within 10 %, and the FMNIST 10-client AALV value against a
// closed form: 94 steps an epoch (6,000 / 64), 940 a round, theta_50 = -9 g^50 with g ~ exp(-940 lr wd
// / (1 - rho)) up to the momentum's start-up, so the spread is about sqrt(41,640 e^{-9 e^{-0.047}}) = 2.79.
func TestTable4Prediction(t *testing.T) {
	_, f := ozerTable4Block()
	if f.Verdict != Holds || !strings.HasPrefix(f.Evidence, "12 of 12") {
		t.Errorf("Table 4 prediction: %s, %s", f.Verdict, f.Evidence)
	}
	p, err := ozerFrozen("c10", 60000, 41640)
	if err != nil {
		t.Fatal(err)
	}
	approx := math.Sqrt(41640 * math.Exp(-9*math.Exp(-0.047)))
	if math.Abs(p.AALV/approx-1) > 0.01 {
		t.Errorf("AALV FMNIST 10 clients: %v, closed-form approximation %v", p.AALV, approx)
	}
}

// TestBFLPSpreadFinding checks the measured-against-predicted finding on fake runs of the reduced
// 10-client non-IID BFL-P preset (4,000 examples: 400 a client, 7 steps a round, 5 rounds): frozen
// spreads near sqrt(41,640) e^-4.5 = 2.267 (AALV) and 3.90-3.92 (GAA) hold; the default mode's
// learned spreads do not.
func TestBFLPSpreadFinding(t *testing.T) {
	for _, c := range []struct {
		aalv, gaa float64
		want      Verdict
	}{
		{2.27, 3.91, Holds},
		{1.38, 0.005, Fails},
		{2.27, 0.005, Partly},
	} {
		runs := ozerRuns(map[string]float64{"FED": 0.5, "FEDAVG": 0.5, "EAA": 0.5, "PPA": 0.5, "GAA": 0.5, "AALV": 0.5, "CF": 0.5},
			map[string]float64{"AALV": c.aalv, "GAA": c.gaa})
		f, ok := ozerBFLPSpread(Reduced, "c10-dirichlet", runSet(runs))
		if !ok || f.Verdict != c.want {
			t.Errorf("AALV %v GAA %v: %v %s (%s), want %s", c.aalv, c.gaa, ok, f.Verdict, f.Evidence, c.want)
		}
	}
	if _, ok := ozerBFLPSpread(Reduced, "c10-dirichlet", nil); ok {
		t.Error("no runs: want no finding")
	}
}

// TestBFLPTable4Finding checks the measured-against-Table-4 finding on fake 10-client runs, with the
// paper-budget spot checks passed in: Table 4's own spreads hold; with the medium budget's measured
// ones (EAA 9.55, AALV 2.28, PPA 5.04) GAA's and AALV's frozen spreads are set aside whichever way
// they fall, CF (1.4368, its frozen prediction from the recorded client weights, recordedCFWeights) is
// set aside with them, and EAA's and PPA's misses are the budget's (the paper-budget spot checks land within 10 %): not
// testable here, saying why and citing the 1-seed runs; where a paper-budget run misses too (EAA
// 12.0, −22 %), the misses count and the finding is not made not testable; with GAA's variances moved
// too (off by 20 %) nothing is set aside and the misses count; a GAA off by 20 % is blamed on the
// client sizes.
func TestBFLPTable4Finding(t *testing.T) {
	acc := map[string]float64{"FED": 0.5, "FEDAVG": 0.5, "EAA": 0.5, "PPA": 0.5, "GAA": 0.5, "AALV": 0.5, "CF": 0.5}
	spots := ozerPaperBudgetSpread["c10"]
	missing := spots
	missing.spread = map[string]float64{"EAA": 12.0, "PPA": 18.86}
	medium := map[string]float64{"EAA": 9.55, "GAA": 3.92, "AALV": 2.28, "PPA": 5.04, "CF": 1.4368}
	for _, c := range []struct {
		name   string
		spread map[string]float64
		spots  paperBudgetRuns
		want   Verdict
		why    []string
		caveat string
		notWhy string
		// cfFrozen: CF's spread is its frozen prediction from the recorded weights (1.4368) within 10 %.
		cfFrozen bool
	}{
		{"paper", map[string]float64{"EAA": 15.48, "GAA": 3.93, "AALV": 2.81, "PPA": 18.40, "CF": 1.40}, spots, Holds, nil, "", "", true},
		{"medium", medium, spots, NotTestable,
			[]string{"Paper-budget spot checks", "EAA 15.55 (+0.5 % from Table 4) and PPA 18.86 (+2.5 % from Table 4)", "seed 0, n = 1 each",
				"binary at f6fd731", "AALV's frozen spread", "EAA's and PPA's variances"},
			"misses attributed to the budget by 1-seed paper-budget runs (EAA 15.55 and PPA 18.86 at T = 50, E = 10; seed 0, n = 1 each; binary at f6fd731", "", true},
		{"medium, a paper-budget run misses", medium, missing, Fails, []string{"EAA's and PPA's variances"},
			"the misses of PPA attributed to the budget", "the effect starts beyond the budget", true},
		{"medium, GAA moved", map[string]float64{"EAA": 9.55, "GAA": 3.93 * 1.2, "AALV": 2.28, "PPA": 5.04, "CF": 1.39}, spots, Partly,
			[]string{"AALV's frozen spread", "client sizes"}, "", "", true},
		{"gaa", map[string]float64{"EAA": 15.48, "GAA": 3.93 * 1.2, "AALV": 2.81, "PPA": 18.40, "CF": 1.40}, spots, Partly,
			[]string{"client sizes"}, "", "", true},
		{"none", map[string]float64{"EAA": 1, "GAA": 1, "AALV": 1, "PPA": 1, "CF": 10}, spots, Fails, nil, "", "", false},
	} {
		f, ok := ozerBFLPTable4With(Medium, "c10-dirichlet", withCFWeights(ozerRuns(acc, c.spread), recordedCFWeights), c.spots)
		if !ok || f.Verdict != c.want {
			t.Errorf("%s: %v %s (%s), want %s", c.name, ok, f.Verdict, f.Evidence, c.want)
		}
		if frozen := strings.Contains(f.Evidence, "is within 10 % of 1"); frozen != c.cfFrozen {
			t.Errorf("%s: CF frozen %v, want %v (%s)", c.name, frozen, c.cfFrozen, f.Evidence)
		}
		for _, w := range c.why {
			if !strings.Contains(f.Why, w) {
				t.Errorf("%s: why %q lacks %q", c.name, f.Why, w)
			}
		}
		if c.notWhy != "" && strings.Contains(f.Why, c.notWhy) {
			t.Errorf("%s: why %q says %q", c.name, f.Why, c.notWhy)
		}
		if !strings.Contains(f.Caveat, c.caveat) {
			t.Errorf("%s: caveat %q lacks %q", c.name, f.Caveat, c.caveat)
		}
		if c.want == Holds && f.Why != "" {
			t.Errorf("%s: holds but explains %q", c.name, f.Why)
		}
	}
	if _, ok := ozerBFLPTable4(Medium, "c10-dirichlet", nil); ok {
		t.Error("no runs: want no finding")
	}
}

// recordedCFWeights are the final-round client weights of the committed medium-budget run
// ozer2022-fmnist-c10-dirichlet-bflp-medium-FVBWA-CF-seed0 (docs/reproduction/records/medium/000.tar.gz),
// whose measured final spread is recordedCFSpread.
var recordedCFWeights = []float64{0.07928333333333333, 0.11699999999999999, 0.04293333333333333, 0.10576666666666666,
	0.10483333333333335, 0.12868333333333334, 0.11183333333333333, 0.14778333333333332, 0.06618333333333333, 0.09570000000000001}

const recordedCFSpread = 1.4367794539601475

// withCFWeights gives the final round of every FVBWA-CF run the client weights w.
func withCFWeights(runs []results.Run, w []float64) runSet {
	for i, r := range runs {
		if r.Meta.Labels["variant"] == "FVBWA-CF" && len(r.Rows) > 0 {
			last := &runs[i].Rows[len(r.Rows)-1]
			last.ClientWeights = w
			last.Clients = make([]int, len(w))
		}
	}
	return runSet(runs)
}

// TestCFHeldSpread checks CF's frozen-variance spread by hand (4 weights, weights {1, 3}: w_max = 3/4,
// √(4 e⁻⁸ · 3/4)), against a recorded run (10 Dirichlet clients, w_max = 0.14778: √(41,640 e⁻⁸ ·
// 0.14778) = 1.43678, its measured spread to 1e-6), and its errors.
func TestCFHeldSpread(t *testing.T) {
	if got, err := cfHeldSpread(4, []float64{1, 3}); err != nil || math.Abs(got-math.Sqrt(4*math.Exp(-8)*0.75)) > 1e-12 {
		t.Errorf("hand case: %v (%v)", got, err)
	}
	if got, err := cfHeldSpread(41640, recordedCFWeights); err != nil || math.Abs(got/recordedCFSpread-1) > 1e-6 {
		t.Errorf("recorded run: predicted %v (%v), measured %v", got, err, recordedCFSpread)
	}
	for _, bad := range []struct {
		weights int
		w       []float64
	}{{0, []float64{1}}, {4, nil}, {4, []float64{0, 0}}, {4, []float64{-1, 2}}, {4, []float64{math.NaN()}}, {4, []float64{math.Inf(1)}}} {
		if _, err := cfHeldSpread(bad.weights, bad.w); err == nil {
			t.Errorf("%d weights, %v: want an error", bad.weights, bad.w)
		}
	}
}

// TestCFFrozen checks the per-run prediction of CF's spread: hand-made runs with the recorded weights
// and the recorded spread are frozen; 30 % above it they are not; without recorded weights CF is
// counted and the reason names the missing weights.
func TestCFFrozen(t *testing.T) {
	acc := map[string]float64{"CF": 0.5}
	for _, c := range []struct {
		name   string
		spread float64
		w      []float64
		want   bool
		why    string
	}{
		{"recorded", recordedCFSpread, recordedCFWeights, true, "seed 0 1.4368 predicted"},
		{"moved", 1.3 * recordedCFSpread, recordedCFWeights, false, "not within 10 % of 1"},
		{"no weights", recordedCFSpread, nil, false, "no client weights"},
	} {
		got, why := cfFrozen(41640, withCFWeights(ozerRuns(acc, map[string]float64{"CF": c.spread}), c.w))
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: %v (%s), want %v and %q", c.name, got, why, c.want, c.why)
		}
	}
	// Seeds at 0.95, 1 and 1.05 of the prediction: their mean is 1, but the 95 % interval
	// (1 ± 4.30 · 0.05/√3 = 0.876-1.124) reaches past 10 %, so CF is counted; a check on the mean
	// alone would set it aside.
	runs := withCFWeights(ozerRuns(acc, map[string]float64{"CF": recordedCFSpread}), recordedCFWeights)
	factor := map[int64]float64{0: 0.95, 1: 1, 2: 1.05}
	for i, r := range runs {
		if r.Meta.Labels["variant"] == "FVBWA-CF" {
			last := &runs[i].Rows[len(r.Rows)-1]
			last.Metrics[results.Spread] = factor[r.Meta.Seed] * recordedCFSpread
		}
	}
	if got, why := cfFrozen(41640, runs); got || !strings.Contains(why, "not within 10 % of 1") {
		t.Errorf("seeds at 0.95, 1, 1.05 of the prediction: frozen %v (%s), want counted", got, why)
	}
}
