package reproduce

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
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
	findDiverged := func(e1, prior, diverged runSet) Finding {
		for _, f := range fischerFindings(func(p Preset) runSet {
			switch p {
			case fischerE1Preset:
				return e1
			case fischerPriorPreset:
				return prior
			}
			return nil
		}, diverged) {
			if strings.HasPrefix(f.Claim, "Making the previous global posterior") {
				return f
			}
		}
		t.Fatal("no prior finding")
		return Finding{}
	}
	find := func(e1, prior runSet) Finding { return findDiverged(e1, prior, nil) }
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
	// train. It can hide a harm, not create one: a harm shown counts, a check that shows none (the
	// updated prior above the reference) is set aside.
	far := runs(map[string]string{"partition": "iid"}, 0.9)
	if f := find(far, hurt); f.Verdict != Holds || f.Aside != 0 {
		t.Errorf("untrained reference, harm shown: %s, %d set aside (%s), want holds, none set aside", f.Verdict, f.Aside, f.Evidence)
	}
	better := append(runs(map[string]string{"prior": "fixed"}, 0.62), runs(map[string]string{"prior": "previous-global"}, 0.70)...)
	if f := find(far, better); f.Verdict != NotTestable || f.Aside == 0 || !strings.Contains(f.Why, "barely trained") {
		t.Errorf("untrained reference, no harm: %s, %d set aside (%s), want not testable with its reason", f.Verdict, f.Aside, f.Why)
	}
	// A reference 4 points below the E = 1 runs (significant, within the 10-point margin) counts as
	// trained: the updated prior above it contradicts the claim.
	if f := find(runs(map[string]string{"partition": "iid"}, 0.66), better); f.Verdict != Fails || f.Aside != 0 {
		t.Errorf("reference within the margin, no harm: %s, %d set aside (%s), want does not hold", f.Verdict, f.Aside, f.Evidence)
	}
	// WS, WC and Conflation diverge in every seed under the updated prior while their fixed-prior
	// runs (identical) train: one agreeing check, counted once, with a caveat; NWA's and LP's (one
	// comparison) above an untrained reference is set aside.
	var diverged, prior runSet
	for _, r := range rules {
		for seed := int64(0); seed < 3; seed++ {
			lf := map[string]string{"variant": r, "prior": "fixed"}
			lp := map[string]string{"variant": r, "prior": "previous-global"}
			acc := 0.48 + jitter(seed, "nwa")
			if r != "NWA-TrainSize" && r != "LP-TrainSize" {
				acc = 0.62 + jitter(seed, "ws")
				run := fakeRun("x-"+r, seed, lp, nil)
				run.Status = results.Status{State: results.Diverged, Round: 6}
				diverged = append(diverged, run)
			} else {
				prior = append(prior, fakeRun("x-"+r, seed, lp, map[string]float64{results.Accuracy: 0.55 + jitter(seed, "nwa-p")}))
			}
			prior = append(prior, fakeRun("x-"+r, seed, lf, map[string]float64{results.Accuracy: acc}))
		}
	}
	// The reference did not train and the only harm counted is the divergence: not testable here,
	// the summary naming the shortfall, the divergence (consistent with the stability bound, not its
	// cause) and NWA's change under both priors (+7.00 points: 0.55 against 0.48).
	f := findDiverged(far, prior, diverged)
	if f.Verdict != NotTestable || f.Tally != [3]int{1, 0, 0} || f.Aside != 1 || f.Caveat != f.Why {
		t.Errorf("diverged rows: %s, tally %v, %d set aside, caveat %q (%s); want not testable, [1 0 0], 1, the reason as caveat", f.Verdict, f.Tally, f.Aside, f.Caveat, f.Evidence)
	}
	for _, want := range []string{"did not train (NWA-TrainSize 42.0 points below its E = 1 run", "a convention of this report",
		"WS-TrainSize (round 6, 3 of 3 seeds), WC-TrainSize (round 6, 3 of 3 seeds), Conflation (round 6, 3 of 3 seeds), consistent with",
		"NWA-TrainSize +7.00 ± 0.00 points (updated prior − fixed prior"} {
		if !strings.Contains(f.Why, want) {
			t.Errorf("diverged rows: why lacks %q: %s", want, f.Why)
		}
	}
	// A trained reference (2 points above NWA's fixed prior): NWA's gain under the updated prior counts
	// against the harm, the divergence for it: holds in part, with the divergence caveat.
	if g := findDiverged(runs(map[string]string{"partition": "iid"}, 0.50), prior, diverged); g.Verdict != Partly || g.Aside != 0 ||
		!strings.Contains(g.Caveat, "stability bound") {
		t.Errorf("diverged rows, trained reference: %s, %d set aside, caveat %q; want holds in part, none set aside, the divergence caveat", g.Verdict, g.Aside, g.Caveat)
	}
	for _, want := range []string{"WS-TrainSize: updated prior diverged in round 6 in all 3 seeds < fixed prior 62.0", "counted once", "WS-TrainSize in round 6 (3 of 3 seeds)"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("diverged rows: evidence lacks %q: %s", want, f.Evidence)
		}
	}
	e1 = runs(map[string]string{"partition": "iid"}, 0.9)
	if f := find(e1, runs(map[string]string{"prior": "previous-global"}, 0.45)); f.Verdict != Holds || strings.Contains(f.Source, "paired by seed") {
		t.Errorf("updated prior only, against the E = 1 runs: %s (%s)", f.Verdict, f.Evidence)
	}
}

// TestFischerParityContrast checks that the E = 5 parity finding states the same checks on the E = 1
// runs and says what the pair shows (parity at both, at E = 5 only, at neither), that NWA against LP
// is a finding of its own, and that runs recording a separate optimiser on the variances give the
// parity finding the set-up caveat.
func TestFischerParityContrast(t *testing.T) {
	rules := []string{"NWA-TrainSize", "WS-TrainSize", "LP-TrainSize", "WC-TrainSize", "Conflation"}
	// runs gives every rule accuracy acc, NWA and LP gap below it, and with adam a spec that trains
	// the variances with Adam.
	runs := func(acc, gap float64, adam bool) runSet {
		var rs runSet
		for _, r := range rules {
			a := acc
			if r == "NWA-TrainSize" || r == "LP-TrainSize" {
				a -= gap
			}
			for seed := int64(0); seed < 3; seed++ {
				// The spreads differ by rule, so the variance rules do not coincide.
				run := fakeRun("x-"+r, seed, map[string]string{"variant": r, "partition": "iid"},
					map[string]float64{results.Accuracy: a + jitter(seed, r), results.Spread: float64(len(r)) * (1 + jitter(seed, r+"s"))})
				if adam {
					run.Meta.Spec = json.RawMessage(`{"training":{"lr":0.01,"variance_optimizer":"adam","variance_lr":0.001}}`)
				}
				rs = append(rs, run)
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name       string
		e1, e5     runSet
		parity     Verdict
		contrast   string
		caveat     bool
		nwaAboveLP Verdict
	}{
		{"parity at both", runs(0.77, 0, false), runs(0.80, 0, false), Holds, "parity holds at E = 1 too here", false, Holds},
		{"parity at E = 5 only", runs(0.77, 0.05, false), runs(0.80, 0, false), Holds, "parity comes with the local epochs here", false, Holds},
		{"parity at neither, Adam on the variances", runs(0.77, 0.05, true), runs(0.80, 0.08, true), Fails, "no parity at E = 1 or at E = 5 here", true, Holds},
	} {
		var parity *Finding
		fs := fischerFindings(func(p Preset) runSet {
			switch p {
			case fischerE1Preset:
				return tc.e1
			case fischerE5Preset:
				return tc.e5
			}
			return nil
		}, nil)
		for i := range fs {
			switch {
			case strings.HasPrefix(fs[i].Claim, "With E = 5 the aggregators reach parity"):
				parity = &fs[i]
			case strings.HasPrefix(fs[i].Claim, "With E = 5 NWA"):
				t.Errorf("%s: NWA against LP is a finding of its own: %q", tc.name, fs[i].Claim)
			case strings.HasPrefix(fs[i].Claim, "With E = 1, WS, WC and Conflation beat NWA"):
				// It holds where NWA trails at E = 1, and then carries the caveat when Adam trained the variances.
				if hold := fs[i].Verdict == Holds; hold != (tc.e1[0].Rows[0].Metrics[results.Accuracy] < 0.76) || (fs[i].Caveat != "") != (hold && tc.caveat) {
					t.Errorf("%s: E = 1 finding %s, caveat %q", tc.name, fs[i].Verdict, fs[i].Caveat)
				}
			}
		}
		if parity == nil {
			t.Fatalf("%s: no parity finding", tc.name)
		}
		if parity.Verdict != tc.parity || !strings.Contains(parity.Evidence, tc.contrast) || (parity.Caveat != "") != tc.caveat {
			t.Errorf("%s: parity %s, caveat %q (%s); want %s, %q, caveat %v", tc.name, parity.Verdict, parity.Caveat, parity.Evidence, tc.parity, tc.contrast, tc.caveat)
		}
		if tc.caveat && !strings.Contains(parity.Caveat, "ablation pending") {
			t.Errorf("%s: caveat %q does not say the ablation is pending", tc.name, parity.Caveat)
		}
		// NWA against LP is a note inside the finding, not counted: the tally has the 3 rules x partitions.
		note := "Note, not counted: NWA against LP"
		if !strings.Contains(parity.Evidence, note) || !strings.Contains(parity.Evidence, "close to automatic") ||
			!strings.Contains(parity.Evidence, string(tc.nwaAboveLP)+" (") || parity.Tally[0]+parity.Tally[1]+parity.Tally[2] != 3*len(tc.e5.values("partition")) {
			t.Errorf("%s: NWA ≥ LP note (want %s) or tally %v: %s", tc.name, tc.nwaAboveLP, parity.Tally, parity.Evidence)
		}
	}
}

// priorSpec is the recorded spec of the prior preset's runs, as the bound and fallback share read it.
const priorSpec = `{"dataset":{"subsample":12000},"partition":{"clients":10,"participation":1},"model":{"init_logvar":-6.048784075264793},"training":{"lr":0.001}}`

// TestStabilityBound checks the round where plain SGD on the means passes lr/(|D_k| σ²) < 2 against
// a hand computation: σ₀² = e^-6.0488 = 0.0023613, |D_k| = 12000/10 = 1200, K = 10, so round t's
// prior variance is 0.0023613/10^(t-1): round 4 gives 0.001/(1200 · 2.3613e-6) = 0.353, round 5
// 0.001/(1200 · 2.3613e-7) = 3.529 >= 2.
func TestStabilityBound(t *testing.T) {
	var s runSpec
	if err := json.Unmarshal([]byte(priorSpec), &s); err != nil {
		t.Fatal(err)
	}
	b, ok := boundOf(s)
	if !ok || b.Round != 5 || b.Examples != 1200 || b.K != 10 || math.Abs(b.At-3.529) > 0.001 || math.Abs(b.Prior-0.3529) > 0.0001 {
		t.Errorf("boundOf = %+v, %v; want round 5 at 3.529 (0.353 the round before), 1200 examples, K = 10", b, ok)
	}
	s.Model.InitLogVar = nil
	if _, ok := boundOf(s); ok {
		t.Error("a spec without init_logvar gave a bound")
	}
}

// TestDWCShare checks DWC's fallback share from a record: 79,506 fallbacks over the Gaussian weights
// counted as spread_start² / e^init_logvar = 13.7004² / 0.0023613 = 79,510, and the precondition it
// sets: more than half fell back, so the checks that read DWC's rows are set aside.
func TestDWCShare(t *testing.T) {
	run := func(variant string, fallbacks float64) results.Run {
		r := fakeRun("x-"+variant, 0, map[string]string{"variant": variant},
			map[string]float64{results.Accuracy: 0.1, results.SpreadStart: 13.700425783741458, engine.MetricDWCFallbacks: fallbacks})
		r.Meta.Spec = json.RawMessage(priorSpec)
		return r
	}
	share, ok := dwcShare(run("DWC", 79506))
	if !ok || math.Abs(share-79506.0/79510) > 1e-12 {
		t.Errorf("dwcShare = %v, %v; want 79506/79510", share, ok)
	}
	if p := dwcActing(runSet{run("DWC", 79506)}, []string{"DWC"}); p.met || !strings.Contains(p.why, "99.99–99.99 %") {
		t.Errorf("mostly fallen back: %+v, want not met with the share", p)
	}
	if p := dwcActing(runSet{run("DWC", 100)}, []string{"DWC"}); !p.met {
		t.Errorf("0.1 %% fallen back: %+v, want met", p)
	}
	if _, ok := dwcShare(fakeRun("x", 0, nil, map[string]float64{engine.MetricDWCFallbacks: 3})); ok {
		t.Error("a run without a spec gave a share")
	}
}

// TestFinalRoundBeside checks that a windowed finding states the final round's verdict beside its
// window's, and flags in the caveat a final round that decides otherwise.
func TestFinalRoundBeside(t *testing.T) {
	var rs runSet
	for seed := int64(0); seed < 3; seed++ {
		for _, v := range []string{"a", "b"} {
			acc := 0.5 + jitter(seed, v)
			if v == "b" {
				acc += 0.1
			}
			rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v}, map[string]float64{results.Accuracy: acc}))
		}
	}
	text, caveat := finalRoundText(rs, [][2]string{{"a", "b"}}, colAcc, "the last 5 rounds", Holds)
	if !strings.Contains(text, "the final round alone gives holds") || caveat != "" {
		t.Errorf("text %q, caveat %q; want holds and no caveat", text, caveat)
	}
	if _, caveat := finalRoundText(rs, [][2]string{{"a", "b"}}, colAcc, "the last 5 rounds", Inconclusive); caveat != "by the final round alone: holds" {
		t.Errorf("caveat %q, want the final round's verdict", caveat)
	}
}

// TestEqualVariancesCriterion checks the one criterion both variance preconditions read
// (clientVariancesAlike): spreads within the 0.1 % tolerance are alike; a 1 % gap without recorded
// health differs, and so does one of 480 %; a 1 % gap whose runs record clients within 0.1 of each
// other in log σ² (uniform) is near-equal, and then the spread-order precondition and the
// equal-variances precondition are both not met, so no precondition says "differ" where the other
// says "alike".
func TestEqualVariancesCriterion(t *testing.T) {
	set := func(a, b string, ratio, disagreement float64) runSet {
		var rs runSet
		for seed := int64(0); seed < 3; seed++ {
			for _, v := range []struct {
				name   string
				spread float64
			}{{a, 10}, {b, 10 * ratio}} {
				m := map[string]float64{results.Spread: v.spread}
				if disagreement >= 0 {
					m[results.SpreadStart], m[results.VarMoved], m[results.VarShift], m[results.VarClamped] = 5, 1, 5, 0
					m[results.VarLocalMoved], m[results.VarLocalShift], m[results.VarDisagreement] = 0.5, 0.1, disagreement
				}
				rs = append(rs, fakeRun("x-"+v.name, seed, map[string]string{"variant": v.name}, m))
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name       string
		ratio, dis float64
		alike      bool
		want       string
	}{
		{"equal", 1.0005, -1, true, "end at the same learned spread"},
		{"slight, no health", 1.01, -1, false, "no run records its posterior health; FVBWA-EAA and FVBWA-AALV end 0.99 % apart in spread over 3 seeds"},
		{"far, no health", 1 / 5.8, -1, false, "end 480.00 % apart"},
		{"slight, uniform", 1.01, 0.03, true, "near-equal (within 0.1 in log σ², a convention of this report) in all 6 runs of FVBWA-EAA and FVBWA-AALV with recorded health"},
		{"slight, learned", 1.01, 0.5, false, "differed in 6 of 6 runs"},
	} {
		rs := set("FVBWA-EAA", "FVBWA-AALV", tc.ratio, tc.dis)
		eq, order := equalVariances([]runSet{rs}, "FVBWA-EAA", "FVBWA-AALV"), clientVariancesDiffer(rs)
		if eq.met == tc.alike || order.met == tc.alike || !strings.Contains(eq.why, tc.want) || !strings.Contains(order.why, tc.want) {
			t.Errorf("%s: equal-variances met %v (%q), spread order met %v (%q); want met %v with %q", tc.name, eq.met, eq.why, order.met, order.why, !tc.alike, tc.want)
		}
		if strings.Contains(eq.why, "slightly") || strings.Contains(order.why, "too little") {
			t.Errorf("%s: unbacked wording in %q / %q", tc.name, eq.why, order.why)
		}
	}
}

// TestFischerDWCFinding checks the DWC finding on hand-made records: one Holm family over all its
// checks, and DWC's precondition scoped to each setting (a preset and a partition): the fixed-prior
// setting, where DWC fell back in 99.99 % of the parameters (79,506 of 79,510 weights, TestDWCShare),
// is set aside; the global-model setting is set aside where no client variance moved
// (var_local_moved 0), and judged, a contradiction there counted, where they moved without fallback.
func TestFischerDWCFinding(t *testing.T) {
	parts := []string{"iid", "shards-2"}
	const fixedSpec = `{"dataset":{"subsample":12000},"partition":{"clients":10,"participation":1},"model":{"init_logvar":-6.048784075264793},"training":{"lr":0.001,"variance_optimizer":"adam","variance_lr":0.001}}`
	const globalSpec = `{"dataset":{"subsample":12000},"partition":{"clients":10,"participation":1},"model":{"init_logvar":-6.048784075264793},"training":{"lr":0.001,"prior":"previous-global"}}`
	// runs makes three seeds of the Table 4 rows per partition, with accuracy acc[partition][row],
	// fallbacks falls in every DWC run, and local training moving a share moved of the clients'
	// variances (var_local_moved; 0: unmoved, the spread where it started).
	runs := func(spec string, acc map[string]map[string]float64, falls, moved float64) runSet {
		var rs runSet
		for _, part := range parts {
			for _, row := range []string{"DWC", "DWC-pretrain", "WS-pretrain"} {
				for seed := int64(0); seed < 3; seed++ {
					m := map[string]float64{results.Accuracy: acc[part][row] + jitter(seed, part+row), results.SpreadStart: 13.700425783741458,
						results.Spread: 13.7004, results.VarMoved: 0, results.VarShift: 0.002, results.VarClamped: 0,
						results.VarLocalMoved: moved, results.VarLocalShift: 2e-5 + moved, results.VarDisagreement: 1e-5 + moved}
					if row != "WS-pretrain" {
						m[engine.MetricDWCFallbacks] = falls
					}
					r := fakeRun("x-"+part+"-"+row, seed, map[string]string{"variant": row, "partition": part}, m)
					r.Meta.Spec = json.RawMessage(spec)
					rs = append(rs, r)
				}
			}
		}
		return rs
	}
	claim := map[string]float64{"DWC": 0.40, "DWC-pretrain": 0.60, "WS-pretrain": 0.61}   // both checks agree
	against := map[string]float64{"DWC": 0.40, "DWC-pretrain": 0.30, "WS-pretrain": 0.61} // both contradict
	find := func(fixed, global runSet) Finding {
		return fischerDWCFinding(func(p Preset) runSet {
			switch p {
			case fischerDWCPreset:
				return fixed
			case fischerDWCGlobalPreset:
				return global
			}
			return nil
		})
	}
	fellBack := runs(fixedSpec, map[string]map[string]float64{"iid": claim, "shards-2": claim}, 79506, 0.5)
	// The global-model setting's variances unmoved: every check set aside, each setting's reason
	// naming its mechanism, and the set-aside checks' numbers kept (one Holm family: the fixed-prior
	// partitions' identical samples count once, so 6 distinct comparisons).
	f := find(fellBack, runs(globalSpec, map[string]map[string]float64{"iid": claim, "shards-2": against}, 0, 0))
	if f.Verdict != NotTestable || f.Aside != 8 {
		t.Errorf("variances unmoved: %s, %d aside; want not testable here, all 8 set aside (%s)", f.Verdict, f.Aside, f.Evidence)
	}
	for _, want := range []string{"Precondition not met at fixed prior, variances on adam at lr 0.001, iid", "more than half of the parameters",
		"Precondition not met at global-model prior, every parameter on SGD, shards-2", "no client variance moved: in all 6 runs of DWC and DWC-pretrain",
		"moved none of the clients' log σ²", "μ₀ + Σ_k(μ_k − μ₀)", "Holm over the 6 distinct comparisons", "of which 6 agree, 2 contradict", "The other set-aside checks: global-model prior, every parameter on SGD, shards-2: DWC < DWC + pre-training: Δ +10.00"} {
		if !strings.Contains(f.Judged+" "+f.Evidence+" "+f.Why, want) {
			t.Errorf("the finding does not say %q: %s / %s / %s", want, f.Judged, f.Evidence, f.Why)
		}
	}
	if !strings.Contains(f.Caveat, "fixed prior, variances on adam at lr 0.001 (the paper's stated fixed N(0, 100 I) prior): share of the parameters where DWC fell back") ||
		!strings.Contains(f.Caveat, "global-model prior, every parameter on SGD (the global-model prior, Eq. 17's derivation assumption, not the paper's stated set-up): no client variance moved") {
		t.Errorf("the summary does not name each setting's mechanism: %q", f.Caveat)
	}
	// Moved, no fallback: the global-model setting is counted, one Holm family for the finding, and the
	// fixed-prior precondition does not hide its contradiction.
	f = find(fellBack, runs(globalSpec, map[string]map[string]float64{"iid": claim, "shards-2": against}, 0, 0.5))
	if f.Tally != [3]int{2, 2, 0} || f.Aside != 4 || f.Verdict != Partly {
		t.Errorf("variances moved: %s, tally %v, %d aside; want holds in part, 2 agree, 2 contradict counted, 4 aside (%s)", f.Verdict, f.Tally, f.Aside, f.Evidence)
	}
	if !strings.Contains(f.Evidence, "Precondition met at global-model prior, every parameter on SGD, iid") || !strings.Contains(f.Caveat, "counted") ||
		strings.Contains(f.Judged, "within each") {
		t.Errorf("moved: %s / %s / %s", f.Judged, f.Evidence, f.Caveat)
	}
	// Without global-model runs the fixed-prior setting alone is not testable.
	if f = find(fellBack, nil); f.Verdict != NotTestable {
		t.Errorf("fixed-prior runs only: %s, want not testable here", f.Verdict)
	}
}
