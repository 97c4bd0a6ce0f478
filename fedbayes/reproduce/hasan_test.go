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

// withSpec gives every run of rs the recorded spec spec (JSON), for the sentences that read the set-up.
func withSpec(rs runSet, spec string) runSet {
	for i := range rs {
		rs[i].Meta.Spec = []byte(spec)
	}
	return rs
}

// The recorded specs of the test runs: the medium preset's local training and sampler, and the tuned
// rows' (hasanSpec reads these fields).
const (
	mediumLocalSpec = `{"dataset": {"subsample": 12000}, "training": {"local_epochs": 15, "batch_size": 32, "optimizer": "sgd", "lr": 0.05, "momentum": 0.9}}`
	mediumBCMSpec   = `{"dataset": {"subsample": 12000}, "training": {"local_epochs": 15, "batch_size": 32, "optimizer": "sgd", "lr": 0.05, "momentum": 0.9, "sampler": {"epochs": 15, "cycles": 4, "samples_per_cycle": 2}}}`
)

func tunedSpec(lr float64) string {
	return fmt.Sprintf(`{"dataset": {"subsample": 12000}, "training": {"local_epochs": 25, "batch_size": 100, "optimizer": "sgd", "lr": %g, "momentum": 0.9}}`, lr)
}

// TestHasanTunedFedAvg checks the tuned one-round FedAvg of issue 48: the table of the medium preset's
// FedAvg, each tuned row and the thesis's (with each row's drop from h = 0 to 0.9, none for the row
// tuned as the thesis, whose ends ran at two learning rates), the collapse finding on the tuned rows
// (Table B.2's at h = 0, B.3's at h > 0), and the FedAvg comparisons that add the tuned FedAvg to their
// checks; and that every sentence on a result follows the rows: the trend with h, the h = 0 shortfall,
// the collapse in the BCM's and FedBE's Why lines, the set-ups read from the recorded specs.
func TestHasanTunedFedAvg(t *testing.T) {
	flat := func(v float64) func(string) float64 { return func(string) float64 { return v } }
	steady := func(h string) float64 { // a FedAvg that does not collapse: 82 % at h = 0 to 70 % at h = 0.9
		return map[string]float64{"0": 0.82, "0.3": 0.815, "0.6": 0.78, "0.9": 0.70}[h]
	}
	rising := func(h string) float64 { // a FedAvg that gains with h (no "loses points")
		return map[string]float64{"0": 0.70, "0.3": 0.75, "0.6": 0.78, "0.9": 0.80}[h]
	}
	collapsing := func(h string) float64 { // the thesis's FedAvg (Tables B.5, 3.1, B.6, B.7)
		return hasanFMNIST["fedavg"][h].mean / 100
	}
	for _, tc := range []struct {
		name     string
		b2       float64 // Table B.2's row, flat over h
		b3       func(string) float64
		bcm, be  float64 // the medium preset's BCM and FedBE, flat over h
		collapse Verdict
		sentence string  // the block's sentence on the collapse
		bcmBeats Verdict // the BCM beats one-round FedAvg at h = 0.3
		fedbe    Verdict // FedBE beats one-round FedAvg on heterogeneous clients
		// what the collapse finding's Why, the BCM's and FedBE's Why lines must and must not say
		collapseWhy, notCollapseWhy, bcmWhy, notBCMWhy, beWhy, notBeWhy []string
	}{
		{name: "steady", b2: 0.69, b3: steady, bcm: 0.81, be: 0.74, collapse: Fails,
			sentence: "do not bring back its collapse on 12,000 examples (about 1/5 of the thesis's SGD steps per epoch at the same batch): tuned as the thesis, FedAvg stays above 40 % at every h > 0. That holds for this set-up only. At h = 0 Table B.2's row",
			bcmBeats: Partly, fedbe: Partly,
			collapseWhy: []string{"on 12,000 examples (about 1/5", "tuned as the thesis, FedAvg does not fall steadily with h (69.", "at Table B.3's rate alone it loses points at every step of h (82.",
				"points short of the thesis's 86.6 %", "The verdict applies to this set-up only.", "47.1 and 19.5 % (seeds 1-2)"},
			bcmWhy:   []string{"it does not collapse (its 95 % interval lies above 40 %)", "where ours does not", "the medium preset's sampler (15 × 4 × 2 epochs × cycles × samples, against the thesis's 25 × 5 × 2): not a like-for-like comparison"},
			beWhy:    []string{"does not collapse: it stays above 40 % at every h > 0", "the thesis's local training, SGD with momentum 0.9 at 0.01, batch 100, 25 epochs", "the medium preset's local training (SGD with momentum 0.9 at 0.05, batch 32, 15 epochs)", "not a like-for-like comparison"},
			notBeWhy: []string{"not decisively above"}},
		{name: "rising", b2: 0.87, b3: rising, bcm: 0.81, be: 0.74, collapse: Fails,
			sentence: "FedAvg stays above 40 % at every h > 0",
			bcmBeats: Holds, fedbe: Partly,
			collapseWhy:    []string{"at Table B.3's rate alone it does not fall steadily with h (70.", "The verdict applies to this set-up only."},
			notCollapseWhy: []string{"loses points", "points short"}},
		{name: "collapsing", b2: 0.69, b3: collapsing, bcm: 0.81, be: 0.74, collapse: Holds,
			sentence: "FedAvg falls below 40 % at h = 0.3, h = 0.6, h = 0.9.", bcmBeats: Holds, fedbe: Holds},
		{name: "collapsing, weak BCM and FedBE", b2: 0.69, b3: collapsing, bcm: 0.30, be: 0.30, collapse: Holds,
			sentence: "FedAvg falls below 40 % at h = 0.3, h = 0.6, h = 0.9.", bcmBeats: Fails, fedbe: Partly,
			bcmWhy:    []string{"it collapses below 40 % as the thesis's does", "not a like-for-like comparison"},
			notBCMWhy: []string{"does not collapse", "where ours does not"},
			beWhy:     []string{"is not decisively above 40 % at any h > 0", "not a like-for-like comparison"},
			notBeWhy:  []string{"does not collapse", "where ours does not"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			medium := append(append(withSpec(hasanRuns("fedavg", 1, flat(0.67)), mediumLocalSpec), withSpec(hasanRuns("bcm", 2, flat(tc.bcm)), mediumBCMSpec)...),
				withSpec(hasanRuns("fedbe", 3, flat(tc.be)), mediumLocalSpec)...)
			b2, b3 := withSpec(hasanRuns("fedavg-b2", 4, flat(tc.b2)), tunedSpec(0.1)), withSpec(hasanRuns("fedavg-b3", 5, tc.b3), tunedSpec(0.01))
			tuned := append(b2, b3...)
			cell := func(rs runSet, h string) string { return rs.where("h", h).summary(results.Accuracy).format(100, 2) }
			block := hasanTunedBlock(medium, tuned)
			for _, want := range []string{
				"| fedavg (`fmnist-medium`: SGD with momentum 0.9 at 0.05, batch 32, 15 epochs) | 67.",
				"| fedavg-b2 (Table B.2: SGD with momentum 0.9 at 0.1, batch 100, 25 epochs) | " + cell(b2, "0") + " |",
				"| tuned as the thesis (B.2 at h = 0, B.3 at h > 0) | " + cell(b2, "0") + " | " + cell(b3, "0.3") + " | " + cell(b3, "0.6") + " | " + cell(b3, "0.9") + " | – |",
				"| thesis (Tables B.5, 3.1, B.6, B.7) | 86.61 ± 0.09 | 37.52 ± 2.28 | 33.46 ± 1.54 | 24.01 ± 1.48 | -62.6 |",
				"hasanmohsin/betaPredBayesFL", "up to B.2.1's possible duplicates", "is ambiguous between the two MLPs",
				tc.sentence,
			} {
				if !strings.Contains(block, want) {
					t.Errorf("tuned FedAvg block lacks %q:\n%s", want, block)
				}
			}
			// The B.3 row's drop is its mean at h = 0.9 less its mean at h = 0.
			drop := fmt.Sprintf("%+.1f |", 100*(b3.where("h", "0.9").summary(results.Accuracy).Mean-b3.where("h", "0").summary(results.Accuracy).Mean))
			if row := lineWith(block, "| fedavg-b3"); !strings.HasSuffix(row, drop) {
				t.Errorf("B.3 row %q, want it to end with the drop %q", row, drop)
			}
			// The h = 0 shortfall is said only where Table B.2's row falls short of the thesis's 86.6 %.
			if short := strings.Contains(block, "points short of the thesis's 86.6 %"); short != (tc.b2 < 0.85) {
				t.Errorf("B.2 at %.2f: the block says it falls short: %v", tc.b2, short)
			}
			got := map[string]Finding{}
			for _, f := range hasanFindings(medium, tuned, "m", "t") {
				got[f.Claim] = f
			}
			collapse, ok := got["One-round FedAvg collapses on heterogeneous clients: below 40 % at every h > 0, from 86.6 % at h = 0"]
			if !ok || collapse.Verdict != tc.collapse {
				t.Errorf("collapse finding %+v, want %s", collapse, tc.collapse)
			}
			if tc.collapse == Holds && collapse.Why != "" {
				t.Errorf("collapse holds, yet its Why is %q", collapse.Why)
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
			bcm := got["At h = 0.3 the BCM beats one-round FedAvg in accuracy"]
			if bcm.Verdict != tc.bcmBeats || !strings.Contains(bcm.Evidence, "tuned FedAvg (Table B.3)") {
				t.Errorf("BCM against FedAvg at h = 0.3: %s, %q; want %s with the tuned FedAvg", bcm.Verdict, bcm.Evidence, tc.bcmBeats)
			}
			be := got["FedBE beats one-round FedAvg in accuracy on heterogeneous clients (h > 0)"]
			if be.Verdict != tc.fedbe || !strings.Contains(be.Evidence, "tuned FedAvg") {
				t.Errorf("FedBE against FedAvg: %s, %q; want %s with the tuned FedAvg", be.Verdict, be.Evidence, tc.fedbe)
			}
			for _, f := range []Finding{bcm, be} {
				if !strings.Contains(f.Judged, "seeds 1–5 (tuned FedAvg: seeds 1–5)") {
					t.Errorf("%q judged %q, want the tuned runs' seeds named", f.Claim, f.Judged)
				}
			}
			for _, c := range []struct {
				name           string
				why            string
				want, wantNone []string
			}{{"collapse", collapse.Why, tc.collapseWhy, tc.notCollapseWhy}, {"BCM", bcm.Why, tc.bcmWhy, tc.notBCMWhy}, {"FedBE", be.Why, tc.beWhy, tc.notBeWhy}} {
				for _, w := range c.want {
					if !strings.Contains(c.why, w) {
						t.Errorf("%s Why lacks %q: %q", c.name, w, c.why)
					}
				}
				for _, w := range c.wantNone {
					if strings.Contains(c.why, w) {
						t.Errorf("%s Why says %q: %q", c.name, w, c.why)
					}
				}
			}
		})
	}
	// Without the tuned runs (the reduced and full reports) there is no collapse finding and the FedAvg
	// comparisons check the medium preset's FedAvg alone.
	medium := append(append(hasanRuns("fedavg", 1, flat(0.67)), hasanRuns("bcm", 2, flat(0.81))...), hasanRuns("fedbe", 3, flat(0.74))...)
	for _, f := range hasanFindings(medium, nil, "m", "t") {
		if strings.Contains(f.Claim, "collapses") || strings.Contains(f.Evidence, "tuned") || strings.Contains(f.Judged, "tuned") {
			t.Errorf("without tuned runs: finding %q, evidence %q, judged %q", f.Claim, f.Evidence, f.Judged)
		}
	}
}

// TestHasanBCMNarrowLead checks that the BCM's "most accurate" Why names the leads its checks did not
// decide, with their size, and no lead they did decide.
func TestHasanBCMNarrowLead(t *testing.T) {
	flat := func(v float64) func(string) float64 { return func(string) float64 { return v } }
	rs := append(append(hasanRuns("bcm", 2, flat(0.81)), hasanRuns("fedbe", 3, flat(0.74))...), hasanRuns("oneshot", 6, flat(0.8095))...)
	for _, f := range hasanFindings(rs, nil, "m", "t") {
		if !strings.HasPrefix(f.Claim, "The BCM is the most accurate") {
			continue
		}
		if f.Verdict != Partly || !strings.Contains(f.Why, "its lead is not decisive at: h=0: oneshot < BCM (the BCM's lead +0.") || strings.Contains(f.Why, "fedbe <") {
			t.Errorf("BCM most accurate: %s, Why %q", f.Verdict, f.Why)
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

// TestSummaryPresetsPerFinding checks that the summary table names, for each finding, the presets it
// reads (Finding.Presets), with a ditto mark only where the row above read the same, and "–" for a
// finding computed without runs.
func TestSummaryPresetsPerFinding(t *testing.T) {
	sec := &Section{Findings: []Finding{
		{Claim: "a", Verdict: Holds, Presets: []string{"m"}},
		{Claim: "b", Verdict: Holds, Presets: []string{"m"}},
		{Claim: "c", Verdict: Holds, Presets: []string{"m", "t"}},
		{Claim: "d", Verdict: Holds, Presets: []string{}},
	}}
	var b strings.Builder
	writeHeader(&b, []*Paper{hasanPaper()}, []*Section{sec}, ReportOptions{Budget: Medium}, nil, nil, "", wallTime{})
	for _, want := range []string{"| 003 | `m` | a |", "| 003 | 〃 | b |", "| 003 | `m`, `t` | c |", "| 003 | – | d |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
