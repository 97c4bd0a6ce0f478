package reproduce

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
)

// TestHasanFormerRunsLeftOutWithANote checks that runs the former one-round runner wrote for a 003
// preset (settings NAME-hH-METHOD, label method) are not counted as the engine preset's runs and
// are named in one note that says why.
func TestHasanFormerRunsLeftOutWithANote(t *testing.T) {
	dir := t.TempDir()
	name := hasanPreset.Name(Reduced)
	for _, m := range []string{"fedavg", "bcm"} {
		setting := name + "-h0.3-" + m
		meta, err := results.NewMeta(setting, map[string]string{"method": m, "h": "0.3", "dataset": "fashion-mnist"}, 1, map[string]any{"h": 0.3}, cleanInfo())
		if err != nil {
			t.Fatal(err)
		}
		writeOneRound(t, filepath.Join(dir, "003", results.RunName(setting, 1)), meta)
	}
	runs, _, notes, err := loadRuns(dir, hasanPaper(), Reduced)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs[name]) != 0 {
		t.Errorf("%d former runs counted as the engine preset's", len(runs[name]))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "left out 2 runs of "+name+" by the former one-round runner") {
		t.Errorf("notes %q; want one note on the 2 former runs", notes)
	}
}

// TestFrictionNote checks that the 003 section says which cSGHMC friction its runs sampled with when it
// is not the presets' (Zhang et al.'s), and says nothing when it is.
func TestFrictionNote(t *testing.T) {
	run := func(friction float64) results.Run {
		spec := fmt.Sprintf(`{"training": {"sampler": {"method": "csghmc", "friction": %g}}}`, friction)
		return results.Run{Meta: results.Meta{Setting: "fmnist-medium-bcm-0", Spec: []byte(spec)}}
	}
	if got := frictionNote(runSet{run(predictive.ZhangFriction)}); got != "" {
		t.Errorf("runs at the presets' friction: note %q, want none", got)
	}
	got := frictionNote(runSet{run(0.1), run(predictive.ZhangFriction), run(0.1)})
	if !strings.Contains(got, "friction 0.1 (their recorded specs); the presets now use 0.9") {
		t.Errorf("runs at friction 0.1: note %q", got)
	}
}

// hasanRun is one finished one-round run of a 003 row at h with the given test accuracy.
func hasanRun(variant, h string, seed int64, acc float64) results.Run {
	return results.Run{Meta: results.Meta{Labels: map[string]string{"variant": variant, "h": h}, Seed: seed},
		Rows: []results.Row{{Round: 1, Metrics: map[string]float64{results.Accuracy: acc}}}}
}

// hasanRuns returns 5 seeds of the row at every h with accuracy acc(h) plus a seed-to-seed spread of up
// to 0.3 points, which k (one per row) makes differ between rows.
func hasanRuns(variant string, k int, acc func(h string) float64) runSet {
	var rs runSet
	for _, h := range hasanH {
		for s := int64(1); s <= 5; s++ {
			rs = append(rs, hasanRun(variant, h, s, acc(h)+0.003*math.Sin(float64(s*int64(k)))))
		}
	}
	return rs
}

// TestHasanTunedFedAvg checks the tuned one-round FedAvg of issue 48: the table of the medium preset's
// FedAvg, each tuned row and the thesis's (with each row's drop from h = 0 to 0.9), the collapse
// finding on the tuned rows (Table B.2's at h = 0, B.3's at h > 0), and the FedAvg comparisons that
// add the tuned FedAvg to their checks.
func TestHasanTunedFedAvg(t *testing.T) {
	flat := func(v float64) func(string) float64 { return func(string) float64 { return v } }
	medium := append(append(hasanRuns("fedavg", 1, flat(0.67)), hasanRuns("bcm", 2, flat(0.81))...), hasanRuns("fedbe", 3, flat(0.74))...)
	steady := func(h string) float64 { // a FedAvg that does not collapse: 82 % at h = 0 to 70 % at h = 0.9
		return map[string]float64{"0": 0.82, "0.3": 0.815, "0.6": 0.78, "0.9": 0.70}[h]
	}
	collapsing := func(h string) float64 { // the thesis's FedAvg (Tables B.5, 3.1, B.6, B.7)
		return hasanFMNIST["fedavg"][h].mean / 100
	}
	for _, tc := range []struct {
		name     string
		b3       func(string) float64
		collapse Verdict
		sentence string  // the block's sentence on the collapse
		bcmBeats Verdict // the BCM beats one-round FedAvg at h = 0.3
		fedbe    Verdict // FedBE beats one-round FedAvg on heterogeneous clients
	}{
		{"steady", steady, Fails, "FedAvg stays above 40 % at every h > 0", Partly, Partly},
		{"collapsing", collapsing, Holds, "FedAvg falls below 40 % at h = 0.3, h = 0.6, h = 0.9.", Holds, Holds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b2, b3 := hasanRuns("fedavg-b2", 4, flat(0.69)), hasanRuns("fedavg-b3", 5, tc.b3)
			tuned := append(b2, b3...)
			cell := func(rs runSet, h string) string { return rs.where("h", h).summary(results.Accuracy).format(100, 2) }
			block := hasanTunedBlock(medium, tuned)
			for _, want := range []string{
				"| fedavg (`fmnist-medium`: SGD with momentum 0.9 at 0.05, batch 32, 15 epochs) | 67.",
				"| fedavg-b2 (Table B.2: lr 0.1, batch 100, 25 epochs) | 69.",
				"| tuned as the thesis (B.2 at h = 0, B.3 at h > 0) | " + cell(b2, "0") + " | " + cell(b3, "0.3") + " | " + cell(b3, "0.6") + " | " + cell(b3, "0.9") + " |",
				"| thesis (Tables B.5, 3.1, B.6, B.7) | 86.61 ± 0.09 | 37.52 ± 2.28 | 33.46 ± 1.54 | 24.01 ± 1.48 | -62.6 |",
				"hasanmohsin/betaPredBayesFL",
				tc.sentence,
			} {
				if !strings.Contains(block, want) {
					t.Errorf("tuned FedAvg block lacks %q:\n%s", want, block)
				}
			}
			// The tuned row's drop is B.3's mean at h = 0.9 less B.2's at h = 0.
			drop := fmt.Sprintf("%+.1f |", 100*(b3.where("h", "0.9").summary(results.Accuracy).Mean-b2.where("h", "0").summary(results.Accuracy).Mean))
			if row := lineWith(block, "| tuned as the thesis"); !strings.HasSuffix(row, drop) {
				t.Errorf("tuned row %q, want it to end with the drop %q", row, drop)
			}
			got := map[string]Finding{}
			for _, f := range hasanFindings(medium, tuned, "m", "t") {
				got[f.Claim] = f
			}
			collapse, ok := got["One-round FedAvg collapses on heterogeneous clients: below 40 % at every h > 0, from 86.6 % at h = 0"]
			if !ok || collapse.Verdict != tc.collapse {
				t.Errorf("collapse finding %+v, want %s", collapse, tc.collapse)
			}
			// Each finding names the presets it reads: the collapse the tuned one, the FedAvg comparisons
			// both, the others the medium preset.
			for claim, f := range got {
				want := []string{"m"}
				switch {
				case f.Claim == collapse.Claim:
					want = []string{"t"}
				case strings.Contains(claim, "beats one-round FedAvg"):
					want = []string{"m", "t"}
				}
				if !slices.Equal(f.Presets, want) {
					t.Errorf("%q reads %q, want %q", claim, f.Presets, want)
				}
			}
			if f := got["At h = 0.3 the BCM beats one-round FedAvg in accuracy"]; f.Verdict != tc.bcmBeats || !strings.Contains(f.Evidence, "tuned FedAvg (Table B.3)") {
				t.Errorf("BCM against FedAvg at h = 0.3: %s, %q; want %s with the tuned FedAvg", f.Verdict, f.Evidence, tc.bcmBeats)
			}
			if f := got["FedBE beats one-round FedAvg in accuracy on heterogeneous clients (h > 0)"]; f.Verdict != tc.fedbe || !strings.Contains(f.Evidence, "tuned FedAvg") {
				t.Errorf("FedBE against FedAvg: %s, %q; want %s with the tuned FedAvg", f.Verdict, f.Evidence, tc.fedbe)
			}
		})
	}
	// Without the tuned runs (the reduced and full reports) there is no collapse finding and the FedAvg
	// comparisons check the medium preset's FedAvg alone.
	for _, f := range hasanFindings(medium, nil, "m", "t") {
		if strings.Contains(f.Claim, "collapses") || strings.Contains(f.Evidence, "tuned") {
			t.Errorf("without tuned runs: finding %q, evidence %q", f.Claim, f.Evidence)
		}
	}
}

// lineWith returns the first line of text that starts with prefix, "" when none does.
func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
