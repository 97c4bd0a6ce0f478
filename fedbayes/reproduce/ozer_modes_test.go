package reproduce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// modeRuns makes one run per seed of a variant with the given accuracies (one per seed) and spread.
func modeRuns(variant string, accs []float64, spread float64) runSet {
	var rs runSet
	for seed, a := range accs {
		m := map[string]float64{results.Accuracy: a, results.ECE: 0.05, results.NLL: 0.4}
		if spread > 0 {
			m[results.Spread] = spread
		}
		rs = append(rs, fakeRun("x-"+variant, int64(seed), map[string]string{"variant": variant}, m))
	}
	return rs
}

func TestModeComparison(t *testing.T) {
	// Paired by seed (df 2), Holm over the two rows of each metric. FVBWA-GAA: text {79, 80, 81} %,
	// BFL-P {84, 86, 85} %: differences {5, 6, 4}, Δ +5.00 ± 0.58, t = 8.66, p = .013, Holm x 2 =
	// .026: †. FVBWA-AALV: BFL-P {80, 81, 83} %: differences {1, 1, 2}, Δ +1.33 ± 0.33, t = 4, p =
	// .057: no †. ECE, NLL and spread do not vary over the seeds: not testable. FED: only in the text
	// mode, left out.
	text := append(append(modeRuns("FVBWA-GAA", []float64{0.79, 0.80, 0.81}, 2), modeRuns("FVBWA-AALV", []float64{0.79, 0.80, 0.81}, 2)...),
		modeRuns("FED", []float64{0.7, 0.7, 0.7}, 0)...)
	bflp := append(modeRuns("FVBWA-GAA", []float64{0.84, 0.86, 0.85}, 4), modeRuns("FVBWA-AALV", []float64{0.80, 0.81, 0.83}, 2)...)
	got := modeComparison(text, bflp, ozerRows, "BFL-P")
	for _, want := range []string{
		"| FVBWA-GAA | 3 / 3 | +5.00 ± 0.58 † | +0.00 (not testable) | +0.000 (not testable) | +2.000 (not testable) |",
		"| FVBWA-AALV | 3 / 3 | +1.33 ± 0.33 | +0.00 (not testable) | +0.000 (not testable) | +0.000 (not testable) |",
		"Acc (%): higher in BFL-P mode in 1 of 2 rows, lower in 0, no significant difference in 1 (mean Δ +3.17).",
		"spread ‖σ‖₂: higher in BFL-P mode in 0 of 2 rows, lower in 0, no significant difference in 0, not testable in 2 (mean Δ +1.000).",
		"Holm-corrected over the rows of each metric, at level 0.05",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("modeComparison lacks %q; got:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| FED |") {
		t.Errorf("a row run in one mode only is shown:\n%s", got)
	}
	if s := modeComparison(text, nil, ozerRows, "BFL-P"); s != "" {
		t.Errorf("no BFL-P runs: got %q, want no block", s)
	}
}

func TestModeShiftTest(t *testing.T) {
	text := modeRuns("R", []float64{0.50, 0.51, 0.49}, 0)
	for _, c := range []struct {
		name string
		code []float64
		sig  bool
	}{
		// Differences {.03, .04, .02}: t = 5.2, p = .035 (df 2).
		{"up", []float64{0.53, 0.55, 0.51}, true},
		// Differences {.02, -.01, .01}: t = .76, p = .53.
		{"noise", []float64{0.52, 0.50, 0.50}, false},
		// Differences {-.1, -.11, -.09}: t = -17.3.
		{"down", []float64{0.40, 0.40, 0.40}, true},
	} {
		r, err := (modeShift{text, modeRuns("R", c.code, 0), results.Accuracy}).test()
		if err != nil || r.Significant(Level) != c.sig || r.Test != stats.Paired {
			t.Errorf("%s: %v %v; want significant %v (paired)", c.name, r, err, c.sig)
		}
	}
	if _, err := (modeShift{text, text, results.Accuracy}).test(); !errors.Is(err, stats.ErrNotTestable) {
		t.Errorf("identical modes: %v; want not testable", err)
	}
}

// TestOzerSectionComparesModes checks that the 000 section shows the mode comparison of a setting
// exactly when both of its modes have complete runs, and judges the accuracy findings in BFL-P mode
// (the 10-client ones here) exactly when that mode has runs.
func TestOzerSectionComparesModes(t *testing.T) {
	acc := map[string]float64{"FED": 0.8, "FEDAVG": 0.8, "EAA": 0.82, "GAA": 0.83, "AALV": 0.83, "PPA": 0.8, "CF": 0.83}
	spread := map[string]float64{"EAA": 10, "GAA": 4, "AALV": 3, "PPA": 12, "CF": 1.5}
	text := ozerPresetMode("c10-iid", false).Name(Medium)
	code := ozerPresetMode("c10-iid", true).Name(Medium)
	for _, c := range []struct {
		name     string
		complete map[string][]results.Run
		want     bool
	}{
		{"both modes", map[string][]results.Run{text: ozerRuns(acc, spread), code: ozerRuns(acc, spread)}, true},
		{"text only", map[string][]results.Run{text: ozerRuns(acc, spread)}, false},
	} {
		s, err := ozerSection(Medium, paperRuns{complete: c.complete})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(s.Blocks, "\n"), "**What BFL-P's code changes** (10 clients, all active, IID)")
		if got != c.want {
			t.Errorf("%s: mode comparison shown = %v, want %v", c.name, got, c.want)
		}
		var bflp []string
		for _, f := range s.Findings {
			if strings.HasSuffix(f.Claim, "(BFL-P mode)") && !slices.Equal(f.Presets, []string{ozerCalibrationName}) {
				bflp = append(bflp, f.Claim)
			}
		}
		want := map[bool]int{true: 3, false: 0}[c.want]
		if len(bflp) != want {
			t.Errorf("%s: BFL-P-mode findings %q, want %d (the 10-client ones: accuracy, ECE, NLL)", c.name, bflp, want)
		}
		for _, claim := range bflp {
			if !strings.HasPrefix(claim, "With 10 clients, GAA, AALV and CF beat FED and FEDAVG") {
				t.Errorf("%s: BFL-P-mode finding %q; want only the 10-client ones", c.name, claim)
			}
		}
	}
}

func TestOzerInitShift(t *testing.T) {
	// FED: 70 % in every seed's text run, 65 % in BFL-P mode: Δ = -5.00, not testable (no spread over
	// seeds), printed with SE 0. The variational rows: GAA +5.00 and AALV +1.00.
	text := append(append(modeRuns("FVBWA-GAA", []float64{0.79, 0.80, 0.81}, 2), modeRuns("FVBWA-AALV", []float64{0.79, 0.80, 0.81}, 2)...),
		modeRuns("FED", []float64{0.7, 0.7, 0.7}, 0)...)
	bflp := append(append(modeRuns("FVBWA-GAA", []float64{0.84, 0.85, 0.86}, 4), modeRuns("FVBWA-AALV", []float64{0.80, 0.81, 0.82}, 2)...),
		modeRuns("FED", []float64{0.65, 0.65, 0.65}, 0)...)
	got := ozerInitShift(text, bflp)
	for _, want := range []string{"FED's Δ Acc of -5.00 ± 0.00 points", "the 2 variational rows", "move by +1.00 to +5.00 points"} {
		if !strings.Contains(got, want) {
			t.Errorf("ozerInitShift lacks %q; got %q", want, got)
		}
	}
	if s := ozerInitShift(text, bflp.where("variant", "FVBWA-GAA")); s != "" {
		t.Errorf("FED in one mode only: got %q, want nothing", s)
	}
}

// TestOzerReach checks the sentence on where a 10-client preset's rows end against the 85 % its
// budget was chosen for, and that the 100-client presets get none.
func TestOzerReach(t *testing.T) {
	rows := func(acc map[string]float64) runSet {
		var rs runSet
		for v, a := range acc {
			for seed := int64(0); seed < 3; seed++ {
				rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v}, map[string]float64{results.Accuracy: a + jitter(seed, v)}))
			}
		}
		return rs
	}
	for _, tc := range []struct {
		set  string
		acc  map[string]float64
		want string
	}{
		{"c10-iid", map[string]float64{"FED": 0.751, "FVBWA-GAA": 0.832}, "the rows end at 75.1–83.2 % accuracy (means over seeds): no row reaches the 85 %"},
		{"c10-dirichlet", map[string]float64{"FED": 0.84, "FVBWA-GAA": 0.86}, "not every row reaches the 85 %"},
		{"c10-iid", map[string]float64{"FED": 0.86, "FVBWA-GAA": 0.87}, "every row reaches the 85 %"},
		{"c100-iid", map[string]float64{"FED": 0.86}, ""},
		{"c10-iid", nil, ""},
	} {
		got := ozerReach(tc.set, rows(tc.acc))
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("ozerReach(%s, %v) = %q, want %q", tc.set, tc.acc, got, tc.want)
		}
	}
	init, err := ozerInit(Medium)
	if err != nil {
		t.Fatal(err)
	}
	if want := "initial log-variance (-6) is ours, and the variances train with adam at learning rate 0.001"; !strings.Contains(init, want) {
		t.Errorf("ozerInit = %q, want it to say %q (read from the preset)", init, want)
	}
}

// TestOzerEffectiveSpread checks the floor of the spread a BFL-P net samples with, by hand, and that
// Table 4's CF and AALV lie below it (raw values) and GAA above it.
func TestOzerEffectiveSpread(t *testing.T) {
	// √41640 · e⁻⁴ = 204.059 · 0.0183156 = 3.7374.
	if got := effectiveFloor(41640); math.Abs(got-3.7374) > 1e-3 {
		t.Errorf("effectiveFloor(41640) = %.4f, want 3.7374", got)
	}
	floor := effectiveFloor(ozerTable4Data[0].weights)
	for _, clients := range []string{"c10", "c100"} {
		sp := ozerSpread[clients]
		if !(sp["CF"].mean < floor && sp["AALV"].mean < floor && sp["GAA"].mean > floor) {
			t.Errorf("%s: CF %.2f, AALV %.2f, GAA %.2f against the floor %.2f", clients, sp["CF"].mean, sp["AALV"].mean, sp["GAA"].mean, floor)
		}
	}
	if got := ozerEffectiveSpread(); !strings.Contains(got, "| 10 | 1.40 | 2.81 | 3.93 | 3.74 | 3.93 |") || !strings.Contains(got, "CF = AALV < GAA, within 5 %") {
		t.Errorf("effective-spread block:\n%s", got)
	}
}

// TestOzerCalibrationFinding checks the 10-client calibration claim on synthetic runs of its claim
// preset: Table 1's numbers hold, equal ones are inconclusive, and no runs are not run.
func TestOzerCalibrationFinding(t *testing.T) {
	rows := func(ece, nll map[string]float64) runSet {
		var rs runSet
		for v := range ece {
			for seed := int64(0); seed < 3; seed++ {
				rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v},
					map[string]float64{results.ECE: ece[v] + jitter(seed, v+"ece"), results.NLL: nll[v] + jitter(seed, v+"nll")}))
			}
		}
		return rs
	}
	paper := rows(map[string]float64{"FED": 0.0799, "FVBWA-GAA": 0.0637, "FVBWA-EAA": 0.0307}, map[string]float64{"FED": 0.64, "FVBWA-GAA": 0.47, "FVBWA-EAA": 0.30})
	flat := rows(map[string]float64{"FED": 0.05, "FVBWA-GAA": 0.05, "FVBWA-EAA": 0.05}, map[string]float64{"FED": 0.4, "FVBWA-GAA": 0.4, "FVBWA-EAA": 0.4})
	for _, tc := range []struct {
		name string
		rs   runSet
		want Verdict
	}{{"paper", paper, Holds}, {"flat", flat, Inconclusive}, {"no runs", nil, NotRun}} {
		f := ozerCalibrationFinding(tc.rs)
		if f.Verdict != tc.want || !slices.Equal(f.Presets, []string{ozerCalibrationName}) {
			t.Errorf("%s: %s (%s), presets %v; want %s", tc.name, f.Verdict, f.Evidence, f.Presets, tc.want)
		}
	}
}

// TestOzerCollapseFinding checks the 100-client collapse claim on synthetic runs of its claim
// preset, 40 evaluations each: judged on the last presets.CollapseTail, not on the final round nor
// the early ones.
func TestOzerCollapseFinding(t *testing.T) {
	rows := func(late map[string]float64) runSet {
		var rs runSet
		for v, a := range late {
			for seed := int64(0); seed < 3; seed++ {
				r := fakeRun("x-"+v, seed, map[string]string{"variant": v}, nil)
				r.Rows = nil
				for i := 1; i <= 40; i++ {
					acc := 0.85 + jitter(seed, fmt.Sprint(v, i)) // every rule alike early
					if i > 40-presets.CollapseTail {
						acc = a + jitter(seed, fmt.Sprint(v, i))
					}
					if i == 40 {
						acc = 0.6 // a swing of the last round, alike for every rule
					}
					r.Rows = append(r.Rows, results.Row{Round: 10 * i, Metrics: map[string]float64{results.Accuracy: acc, results.Spread: float64(i)}})
				}
				rs = append(rs, r)
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		rs   runSet
		want Verdict
	}{
		{"paper", rows(map[string]float64{"FVBWA-GAA": 0.87, "FVBWA-EAA": 0.80, "FVBWA-PPA": 0.77}), Holds},
		{"no fall", rows(map[string]float64{"FVBWA-GAA": 0.85, "FVBWA-EAA": 0.85, "FVBWA-PPA": 0.85}), Inconclusive},
		{"no runs", nil, NotRun},
	} {
		f := ozerCollapseFinding(tc.rs)
		if f.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, f.Verdict, f.Evidence, tc.want)
		}
		// The courses are evidence whatever the verdict.
		if tc.rs != nil && !strings.Contains(f.Evidence, "FVBWA-PPA peaks at round") {
			t.Errorf("%s: the evidence has no course of PPA: %s", tc.name, f.Evidence)
		}
	}
}
