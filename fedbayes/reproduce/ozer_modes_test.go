package reproduce

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
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
	// Three seeds 0.01 apart: standard deviation 0.01, SE 0.01/√3 = 0.00577, combined SE √2 · 0.00577 =
	// 0.816 points. FVBWA-GAA: 80 % against 85 %: Δ = +5.00 > 2 · 0.816, beyond the noise.
	// FVBWA-AALV: 80 % against 81 %: Δ = +1.00 < 1.63, within it.
	// FED: only in the text mode, left out.
	text := append(append(modeRuns("FVBWA-GAA", []float64{0.79, 0.80, 0.81}, 2), modeRuns("FVBWA-AALV", []float64{0.79, 0.80, 0.81}, 2)...),
		modeRuns("FED", []float64{0.7, 0.7, 0.7}, 0)...)
	bflp := append(modeRuns("FVBWA-GAA", []float64{0.84, 0.85, 0.86}, 4), modeRuns("FVBWA-AALV", []float64{0.80, 0.81, 0.82}, 2)...)
	got := modeComparison(text, bflp, ozerRows, "BFL-P")
	for _, want := range []string{
		"| FVBWA-GAA | 3 / 3 | +5.00 ± 0.82 † | +0.00 ± 0.00 | +0.000 ± 0.000 | +2.000 ± 0.000 † |",
		"| FVBWA-AALV | 3 / 3 | +1.00 ± 0.82 | +0.00 ± 0.00 | +0.000 ± 0.000 | +0.000 ± 0.000 |",
		"Acc (%): higher in BFL-P mode in 1 of 2 rows, lower in 0, within the noise in 1 (mean Δ +3.00).",
		"spread ‖σ‖₂: higher in BFL-P mode in 1 of 2 rows, lower in 0, within the noise in 1 (mean Δ +1.000).",
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

func TestModeShiftSignificant(t *testing.T) {
	mk := func(mean, se float64) stat {
		return stat{results.Summary{Mean: mean, SE: se, N: 3}}
	}
	for _, c := range []struct {
		name       string
		text, bflp stat
		want       bool
	}{
		{"beyond 2 SE", mk(0.5, 0.01), mk(0.53, 0.01), true},    // 0.03 > 2·0.01414
		{"within 2 SE", mk(0.5, 0.01), mk(0.52, 0.01), false},   // 0.02 < 0.0283
		{"down beyond 2 SE", mk(0.5, 0.0), mk(0.4, 0.01), true}, // 0.1 > 0.02
		{"missing", stat{}, mk(0.4, 0.01), false},
	} {
		if got := (modeShift{c.text, c.bflp}).significant(); got != c.want {
			t.Errorf("%s: significant = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestOzerSectionComparesModes checks that the 000 section shows the mode comparison of a setting
// exactly when both of its modes have complete runs, and judges the accuracy findings in BFL-P mode
// (the 10-client one here) exactly when that mode has runs.
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
			if strings.HasSuffix(f.Claim, "(BFL-P mode)") {
				bflp = append(bflp, f.Claim)
			}
		}
		if want := map[bool]int{true: 1, false: 0}[c.want]; len(bflp) != want ||
			want == 1 && !strings.HasPrefix(bflp[0], "With 10 clients, GAA, AALV and CF beat FED and FEDAVG") {
			t.Errorf("%s: BFL-P-mode findings %q, want %d (the 10-client one)", c.name, bflp, want)
		}
	}
}

func TestOzerInitShift(t *testing.T) {
	// FED: 70 % in both seeds' text runs, 65 % in BFL-P mode: Δ = -5.00, SE 0 (no spread over seeds).
	// The variational rows: GAA +5.00 and AALV +1.00 (as in TestModeComparison).
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
