package reproduce

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/stats"
)

// fakeRun is a completed run of a setting with labels and final metrics.
func fakeRun(setting string, seed int64, labels map[string]string, metrics map[string]float64) results.Run {
	return results.Run{Meta: results.Meta{Setting: setting, Seed: seed, Labels: labels},
		Status: results.Status{State: results.Completed}, Rows: []results.Row{{Round: 1, Metrics: metrics}}}
}

// jitter is a small deterministic noise in [-5e-5, 5e-5] by seed and label, so that the paired
// differences of fake runs have spread (a t-test needs some) far below the effects the tests build in.
func jitter(seed int64, label string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(label))
	x := h.Sum64() ^ uint64(seed+1)*0x9E3779B97F4A7C15
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return (float64(x%10001)/10000 - 0.5) * 1e-4
}

// ozerRuns makes three seeds per variant of an Ozer setting with accuracy acc[rule], ECE 0.05 and NLL
// 0.5 (0.08 and 0.6 for FED and FEDAVG) and spread spread[rule], each with jitter (the spread's
// relative, ±1 %).
func ozerRuns(acc, spread map[string]float64) []results.Run {
	var out []results.Run
	for _, v := range ozerRows {
		rule := v
		if i := strings.Index(v, "-"); i >= 0 {
			rule = v[i+1:]
		}
		for seed := int64(0); seed < 3; seed++ {
			j := func(metric string) float64 { return jitter(seed, v+metric) }
			m := map[string]float64{results.Accuracy: acc[rule] + j("acc"), results.ECE: 0.05 + j("ece"), results.NLL: 0.5 + j("nll")}
			if rule == "FED" || rule == "FEDAVG" {
				m[results.ECE], m[results.NLL] = 0.08+j("ece"), 0.6+j("nll")
			}
			if s, ok := spread[rule]; ok {
				m[results.Spread] = s * (1 + 200*j("spread"))
			}
			out = append(out, fakeRun("x-"+v, seed, map[string]string{"variant": v}, m))
		}
	}
	return out
}

// frozenRuns gives the runs' AALV rows the spread of their EAA rows, seed by seed: the signature of
// variances that did not learn (varianceRulesCoincide).
func frozenRuns(runs []results.Run) []results.Run {
	eaa := map[string]float64{}
	for _, r := range runs {
		if v := r.Meta.Labels["variant"]; strings.HasSuffix(v, "-EAA") {
			eaa[strings.TrimSuffix(v, "EAA")+fmt.Sprint(r.Meta.Seed)] = r.Rows[0].Metrics[results.Spread]
		}
	}
	out := make([]results.Run, len(runs))
	for i, r := range runs {
		out[i] = r
		if v := r.Meta.Labels["variant"]; strings.HasSuffix(v, "-AALV") {
			m := maps.Clone(r.Rows[0].Metrics)
			m[results.Spread] = eaa[strings.TrimSuffix(v, "AALV")+fmt.Sprint(r.Meta.Seed)]
			out[i].Rows = []results.Row{{Round: r.Rows[0].Round, Metrics: m}}
		}
	}
	return out
}

func TestOzerFindings(t *testing.T) {
	paperLike := ozerRuns(
		map[string]float64{"FED": 0.87, "FEDAVG": 0.87, "EAA": 0.80, "PPA": 0.75, "GAA": 0.88, "AALV": 0.88, "CF": 0.88},
		map[string]float64{"EAA": 79, "GAA": 3.9, "AALV": 2.8, "PPA": 64, "CF": 1.4})
	flat := ozerRuns(
		map[string]float64{"FED": 0.87, "FEDAVG": 0.87, "EAA": 0.88, "PPA": 0.88, "GAA": 0.88, "AALV": 0.88, "CF": 0.88},
		map[string]float64{"EAA": 1.4, "GAA": 0.01, "AALV": 1.4, "PPA": 1.5, "CF": 0.02})
	// Accuracy means above FED's by 0.002 points, within the seeds' noise (jitter, ±0.005 points); ECE
	// and NLL better far beyond it.
	close := ozerRuns(
		map[string]float64{"FED": 0.87, "FEDAVG": 0.87, "EAA": 0.87, "PPA": 0.87, "GAA": 0.87002, "AALV": 0.87002, "CF": 0.87002},
		map[string]float64{"EAA": 1.4, "GAA": 0.01, "AALV": 1.4, "PPA": 1.5, "CF": 0.02})
	for _, tc := range []struct {
		name   string
		runs   []results.Run
		claims map[int]Verdict
		// orderCaveat is in the spread order's caveat (finding 1); "" for none set-up dependent.
		orderCaveat string
	}{
		{"paper-like", paperLike, map[int]Verdict{0: Holds, 1: Holds, 2: NotRun, 3: Holds, 4: Holds, 5: Holds, 6: Holds, 7: Holds, 8: Holds}, ""},
		// EAA and PPA level with GAA: no check decisive. Spread: AALV (1.4) far above GAA (0.01)
		// contradicts one of the four orderings, the others agree.
		{"flat", flat, map[int]Verdict{0: Inconclusive, 1: Partly, 2: NotRun, 3: Holds, 4: Holds, 5: Holds, 6: Holds, 7: Holds, 8: Holds}, ""},
		// Accuracy within the noise: the accuracy findings (10 clients, 100 IID clients) are
		// inconclusive, the ECE and NLL ones hold.
		{"close", close, map[int]Verdict{3: Inconclusive, 4: Holds, 5: Holds, 6: Inconclusive, 7: Holds, 8: Holds}, ""},
		// Paper-like numbers, but EAA's and AALV's spreads agree seed by seed: the variances did not learn.
		// The accuracy finding still holds on its checks of rules that differ by their own arithmetic
		// (its EAA < AALV checks are set aside); every spread-order check comes out as Eqs. 4-8 on equal
		// variances give it: the three agreeing are set aside, AALV < GAA contradicting counts: does not hold.
		{"frozen", frozenRuns(paperLike), map[int]Verdict{0: Holds, 1: Fails, 2: NotRun, 3: NotTestable, 4: NotTestable, 5: NotTestable, 6: NotTestable, 7: NotTestable, 8: NotTestable}, ""},
		// The same with the variances trained by Adam (training.variance_optimizer): the spread order's
		// "does not hold" says it is set-up dependent, the ablation pending.
		{"frozen, Adam", withVarianceOptimizer(frozenRuns(paperLike)), map[int]Verdict{1: Fails},
			"set-up dependent (variances trained with adam at lr 0.001), ablation pending"},
		{"empty", nil, map[int]Verdict{0: NotRun, 1: NotRun, 2: NotRun, 3: NotRun, 4: NotRun, 5: NotRun, 6: NotRun, 7: NotRun, 8: NotRun}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(set string) runSet {
				if set == "c100-dirichlet" || set == "c10-iid" || set == "c100-iid" {
					return runSet(tc.runs)
				}
				return nil
			}
			fs := ozerFindings(get, func(string) runSet { return nil })
			if len(fs) != 9 {
				t.Fatalf("%d findings, want 9", len(fs))
			}
			if says := strings.Contains(fs[0].Evidence, "EAA < AALV checks are set aside whichever way they fall"); says != (fs[0].Aside > 0) {
				t.Errorf("accuracy finding: %d set aside, evidence says why %v: %s", fs[0].Aside, says, fs[0].Evidence)
			}
			if got := strings.Contains(fs[1].Caveat, "ablation pending"); got != (tc.orderCaveat != "") || !strings.Contains(fs[1].Caveat, tc.orderCaveat) {
				t.Errorf("spread order caveat %q, want %q", fs[1].Caveat, tc.orderCaveat)
			}
			for i, want := range tc.claims {
				if fs[i].Verdict != want {
					t.Errorf("finding %d %q: %s (%s), want %s", i, fs[i].Claim, fs[i].Verdict, fs[i].Evidence, want)
				}
				if fs[i].Verdict != Holds && fs[i].Verdict != NotRun && i != 2 && fs[i].Why == "" {
					t.Errorf("finding %d does not hold but says nothing about why", i)
				}
				if fs[i].Verdict == NotTestable && !strings.Contains(fs[i].Why, "give the same model") {
					t.Errorf("finding %d not testable: why %q does not say that the rules give the same model", i, fs[i].Why)
				}
				if strings.Contains(fs[i].Why, "budget") && fs[i].Verdict == NotTestable {
					t.Errorf("finding %d blames the budget for frozen variances: %q", i, fs[i].Why)
				}
			}
		})
	}
}

// TestJudge checks the verdict rule on counts of agreeing, contradicting and undecided checks.
func TestJudge(t *testing.T) {
	mk := func(a, c, u int) []check {
		var out []check
		for range a {
			out = append(out, check{outcome: agrees})
		}
		for range c {
			out = append(out, check{outcome: contradicts})
		}
		for range u {
			out = append(out, check{outcome: undecided})
		}
		return out
	}
	for _, c := range []struct {
		a, c, u int
		want    Verdict
	}{
		{0, 0, 0, NotRun},
		{6, 0, 0, Holds},
		{3, 3, 0, Partly},
		{1, 0, 5, Partly},
		{0, 1, 5, Fails},
		{0, 6, 0, Fails},
		{0, 0, 6, Inconclusive}, // means alone never decide: nothing decisive is inconclusive
	} {
		if got := judge(mk(c.a, c.c, c.u)); got != c.want {
			t.Errorf("judge(%d agree, %d contradict, %d undecided) = %s, want %s", c.a, c.c, c.u, got, c.want)
		}
	}
}

// TestClaims checks the checks of each kind of claim on hand-computed samples (paired, df 2): a
// below claim is decided by the sign of a significant Holm-corrected difference, an equivalence by
// TOST, and identical runs show no equivalence.
func TestClaims(t *testing.T) {
	sample := func(v ...float64) stats.Sample { return stats.Sample{Seeds: []int64{0, 1, 2}, Values: v} }
	lo := sample(0.80, 0.81, 0.79)
	hi := sample(0.85, 0.87, 0.84) // hi - lo {.05, .06, .05}: t = .0533/.00333 = 16, p = 1 - 16/sqrt(258) = .0039
	near := sample(0.801, 0.812, 0.789)
	var c claims
	// Holm runs over the two distinct pairs that can be compared ({lo, hi} three times, {lo, near}
	// once; {lo, lo} has no spread and is no member of the family).
	c.below("lo < hi", lo, hi, colAcc) // agrees (Holm x 2 = .0078)
	c.below("hi < lo", hi, lo, colAcc) // contradicts
	c.same("lo ≈ near", lo, near, 0.01, colAcc)
	c.same("lo ≈ lo", lo, lo, 0.01, colAcc) // identical: not testable, undecided
	c.notBelow("hi ≥ lo", hi, lo, 0.01, colAcc)
	c.within("lo in [0.7, 0.9]", lo, 0.7, 0.9, colAcc)
	c.within("lo in [0.9, 1]", lo, 0.9, 1, colAcc)
	c.fixed("computed", true)
	want := []outcome{agrees, contradicts, agrees, undecided, agrees, agrees, contradicts, agrees}
	got := c.checks()
	for i := range want {
		if got[i].outcome != want[i] {
			t.Errorf("check %d (%s): outcome %d, want %d", i, got[i].text, got[i].outcome, want[i])
		}
	}
	if !strings.Contains(got[0].text, "paired") || !strings.Contains(got[0].text, "p 0.0078, Holm over 2") {
		t.Errorf("check text %q does not name the test and the family", got[0].text)
	}
	pOf := func(text string) string { _, p, _ := strings.Cut(text, ", p "); return p }
	if pOf(got[0].text) == "" || pOf(got[0].text) != pOf(got[1].text) {
		t.Errorf("the reversed comparison %q does not share the p-value of %q", got[1].text, got[0].text)
	}
}

func TestSummaryAndFormat(t *testing.T) {
	rs := runSet{
		fakeRun("a", 0, map[string]string{"variant": "A"}, map[string]float64{results.Accuracy: 0.80}),
		fakeRun("a", 1, map[string]string{"variant": "A"}, map[string]float64{results.Accuracy: 0.90}),
	}
	st := rs.summary(results.Accuracy)
	// mean 0.85, sample sd 0.0707, SE 0.05.
	if got := st.format(100, 2); got != "85.00 ± 5.00" {
		t.Errorf("format = %q, want 85.00 ± 5.00", got)
	}
	if got := (runSet{}).summary(results.Accuracy).format(100, 2); got != "–" {
		t.Errorf("empty format = %q", got)
	}
	table := compareTable(rs, "variant", []string{"A", "B"}, []metricCol{colAcc}, map[string]map[string]ref{"A": {results.Accuracy: {89.5, 0.1}}})
	for _, want := range []string{"| A | 2 | 85.00 ± 5.00 | 89.50 ± 0.10 |", "| B | 0 | not run | – |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestPresetsExist checks that every paper preset exists at every budget it belongs to, that a
// reduced or medium one says so in its budget (a claim preset names its claim instead), and that a
// medium one runs at least 3 seeds (issue 17).
func TestPresetsExist(t *testing.T) {
	for _, p := range Papers() {
		for _, b := range []Budget{Full, Medium, Reduced} {
			for _, pr := range p.PresetsAt(b) {
				text, err := pr.Budget(b)
				if err != nil {
					t.Fatalf("paper %s preset %s: %v", p.ID, pr.Name(b), err)
				}
				if pr.Only != "" && !strings.Contains(text, "claim") {
					t.Errorf("%s: claim preset's budget %q does not name its claim", pr.Name(b), text)
				} else if pr.Only == "" && !strings.HasPrefix(text, string(b)) {
					t.Errorf("%s: budget %q does not say it is %s", pr.Name(b), text, b)
				}
				s, _ := presets.Preset(pr.Name(b))
				_, err2 := s.Expand()
				seeds := len(s.WithDefaults().Seeds)
				if err2 != nil {
					t.Errorf("%s: %v", pr.Name(b), err2)
				}
				if b == Medium && seeds < 3 {
					t.Errorf("%s: %d seeds, want at least 3 at the medium budget", pr.Name(b), seeds)
				}
			}
		}
	}
}

// TestMediumOzer checks the medium budget of Ozer et al.'s presets: all the data, the measured
// rounds for 10 clients, the paper's local epochs for 100, and Table 4's rows kept.
func TestMediumOzer(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		rounds, epochs, every int
		variants              int
	}{
		{"ozer2022-fmnist-c10-iid-medium", 10, 1, 5, 12},
		{"ozer2022-fmnist-c10-dirichlet-bflp-medium", 10, 1, 5, 12},
		{"ozer2022-fmnist-c100-dirichlet-medium", 50, 10, 10, 7},
		{"ozer2022-fmnist-c100-iid-bflp-medium", 50, 10, 10, 7},
	} {
		s, err := presets.Preset(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		d := s.WithDefaults()
		if d.Name != tc.name || d.Dataset.Subsample != 0 || d.Dataset.TestSubsample != 0 || d.Training.Rounds != tc.rounds ||
			d.Training.LocalEpochs != tc.epochs || d.Evaluation.Every != tc.every || len(d.Variants) != tc.variants || len(d.Seeds) != 3 {
			t.Errorf("%s: name %s, subsample %d/%d, T=%d E=%d every %d, %d variants, %d seeds; want all data, T=%d E=%d every %d, %d variants, 3 seeds",
				tc.name, d.Name, d.Dataset.Subsample, d.Dataset.TestSubsample, d.Training.Rounds, d.Training.LocalEpochs, d.Evaluation.Every,
				len(d.Variants), len(d.Seeds), tc.rounds, tc.epochs, tc.every, tc.variants)
		}
		if strings.HasSuffix(strings.TrimSuffix(tc.name, presets.MediumSuffix), presets.BFLPSuffix) != (d.Model.Compat == "bfl-p") {
			t.Errorf("%s: model.compat %q", tc.name, d.Model.Compat)
		}
	}
}

func TestPresetOf(t *testing.T) {
	p := ozerPaper()
	for _, tc := range []struct {
		setting string
		b       Budget
		want    string
	}{
		{"ozer2022-fmnist-c100-dirichlet-FVBA-EAA", Full, "ozer2022-fmnist-c100-dirichlet"},
		{"ozer2022-fmnist-c100-dirichlet-reduced-FVBA-EAA", Full, ""},
		{"ozer2022-fmnist-c100-dirichlet-reduced-FVBA-EAA", Reduced, "ozer2022-fmnist-c100-dirichlet-reduced"},
		{"ozer2022-fmnist-c10-iid-reduced-FED", Reduced, "ozer2022-fmnist-c10-iid-reduced"},
		{"ozer2022-fmnist-c10-iid-FED", Reduced, ""},
		{"ozer2022-fmnist-c10-iid-medium-FED", Full, ""},
		{"ozer2022-fmnist-c10-iid-medium-FED", Medium, "ozer2022-fmnist-c10-iid-medium"},
		{"ozer2022-fmnist-c10-iid-bflp-medium-FVBWA-GAA", Medium, "ozer2022-fmnist-c10-iid-bflp-medium"},
		{"ozer2022-fmnist-c10-iid-reduced-FED", Medium, ""},
	} {
		if got := presetOf(p, tc.b, tc.setting); got != tc.want {
			t.Errorf("presetOf(%q, %s) = %q, want %q", tc.setting, tc.b, got, tc.want)
		}
	}
}

// writeJamoussiRuns writes completed runs of a Jamoussi et al. preset for the given seeds and the
// spec's variants from..to-1 (to <= 0: to the last): ECE and NLL fall with the number n of
// Bayesian layers, and so does the worst-10% accuracy. Every run has a row at each round the spec
// evaluates, each timed local 10 s, aggregation 1 s, evaluation 4 s.
func writeJamoussiRuns(t *testing.T, dir, name string, seeds []int64, from, to int) {
	t.Helper()
	spec, err := presets.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	d := spec.WithDefaults()
	if to <= 0 {
		to = len(spec.Variants)
	}
	settings, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != len(spec.Variants) {
		t.Fatalf("%s has %d settings for %d variants", name, len(settings), len(spec.Variants))
	}
	for i, st := range settings[from:to] {
		v := spec.Variants[from+i]
		n := float64(v.Label[1] - '0')
		for _, seed := range seeds {
			setting := st.Name
			meta, err := results.NewMeta(setting, st.Labels, seed, st.Spec, cleanInfo())
			if err != nil {
				t.Fatal(err)
			}
			w, err := results.Create(filepath.Join(dir, "002", results.RunName(setting, seed)), meta)
			if err != nil {
				t.Fatal(err)
			}
			j := func(metric string) float64 { return jitter(seed, v.Label+metric) }
			m := map[string]float64{results.Accuracy: 0.8 + j("acc"), results.ECE: 0.1 - 0.02*n + j("ece"), results.NLL: 0.8 - 0.1*n + j("nll"),
				results.WorstAccuracy: 0.5 - 0.05*n + j("worst")}
			for r := d.Evaluation.Every; r <= d.Training.Rounds; r += d.Evaluation.Every {
				if err := w.Append(results.Row{Round: r, Metrics: m, Time: results.Timing{LocalSeconds: 10, AggregateSeconds: 1, EvalSeconds: 4}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Complete(d.Training.Rounds); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// writeReport writes the 002 report at budget b from dir and returns it and its findings.
func writeReport(t *testing.T, dir string, b Budget) (string, []Finding) {
	t.Helper()
	out := filepath.Join(dir, "docs", "reproduction.md")
	papers, _ := SelectPapers([]string{"002"})
	findings, err := Write(context.Background(), papers, ReportOptions{Dir: dir, Budget: b, Output: out, NoFigures: true, Command: "fedbayes reproduce -papers 002"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw), findings
}

// TestWriteReport writes runs of the 002 preset to disk and checks the report: our table beside
// the paper's, the budget stated, and the findings decided from the numbers.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	writeJamoussiRuns(t, dir, jamoussiPreset.Name(Reduced), []int64{0, 1}, 0, 0)
	md, findings := writeReport(t, dir, Reduced)
	// Each reduced run (T = 5, evaluated at round 5 only): 15 s timed and 4 untimed rounds of 11 s,
	// 59 s; 32 runs: 1,888 s, 31 min.
	for _, want := range []string{"**Budget: reduced.**", "the newest run it reads started on 2026-01-02", "| n1-AALV | 2 | ", "88.22 ± 0.34", "32 runs, 31 min spent; budget reduced", "fedbayes reproduce -papers 002",
		"More Bayesian layers lower the ECE, whatever the rule", "not run yet (0 of 32 runs done)", VerdictRule} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if findings[0].Verdict != Holds || findings[1].Verdict != Holds {
		t.Errorf("ECE/NLL findings: %s (%s), %s; want holds", findings[0].Verdict, findings[0].Evidence, findings[1].Verdict)
	}
	if findings[3].Verdict != Holds {
		t.Errorf("fairness finding: %s (%s); want holds (worst accuracy falls with n)", findings[3].Verdict, findings[3].Evidence)
	}
}

// TestWritePartialMedium checks a partly computed medium budget: a preset with some of its runs
// done is reported as not run yet (k of n runs done), with no numbers and no verdict, and reduced
// runs in the same directory are not mixed in; the header states the budget and the wall time of
// what ran. Once every run is done the verdicts come back.
func TestWritePartialMedium(t *testing.T) {
	dir := t.TempDir()
	name := jamoussiPreset.Name(Medium)
	// Reduced runs of every variant: they must not count towards the medium report.
	writeJamoussiRuns(t, dir, jamoussiPreset.Name(Reduced), []int64{0, 1}, 0, 0)
	// 4 variants x 2 seeds of the medium preset's 16 x 3.
	writeJamoussiRuns(t, dir, name, []int64{0, 1}, 0, 4)
	md, findings := writeReport(t, dir, Medium)
	// Each medium run: rows at rounds 5 and 10 of 15 s each (30 s), and 8 untimed rounds of 11 s
	// (88 s). 8 medium runs: 240 s recorded, 704 s estimated, 944 s = 16 min in all.
	for _, want := range []string{"**Budget: medium.**", "`" + name + "`: **not run yet (8 of 48 runs done, 16 min spent)**",
		"**Wall time spent** on the runs this report reads: 16 min over 8 runs: 4 min recorded in their 16 timed rounds",
		"plus 12 min estimated for the 64 rounds that were not evaluated", "| n1-AALV | 0 | not run |"} {
		if !strings.Contains(md, want) {
			t.Errorf("partial report lacks %q", want)
		}
	}
	if strings.Contains(md, "reduced-n1") || strings.Contains(md, "| n1-AALV | 2 |") {
		t.Errorf("partial medium report shows reduced or partial runs")
	}
	for _, f := range findings {
		if f.Verdict != NotRun {
			t.Errorf("partial: finding %q has verdict %s (%s); want not run", f.Claim, f.Verdict, f.Evidence)
		}
	}
	// The rest of the runs: the preset is complete and judged.
	writeJamoussiRuns(t, dir, name, []int64{2}, 0, 4)
	writeJamoussiRuns(t, dir, name, []int64{0, 1, 2}, 4, 0)
	md, findings = writeReport(t, dir, Medium)
	// 48 runs of 118 s: 94 min.
	if !strings.Contains(md, "`"+name+"`: 48 runs, 1.57 h spent; budget medium") || !strings.Contains(md, "| n1-AALV | 3 |") {
		t.Errorf("complete medium report lacks the runs:\n%s", md[:min(len(md), 3000)])
	}
	if findings[0].Verdict != Holds {
		t.Errorf("complete: ECE finding %s (%s); want holds", findings[0].Verdict, findings[0].Evidence)
	}
}

// TestChenFindings checks the verdicts of the FedBE findings on synthetic final accuracies.
func TestChenFindings(t *testing.T) {
	runs := func(acc map[string]float64) runSet {
		var out runSet
		for m, a := range acc {
			for seed := int64(1); seed <= 3; seed++ {
				r := fakeRun("fedbe-"+m, seed, map[string]string{"variant": m}, nil)
				// 8 rounds: the first 3 are far off and must not count; the last round is the same
				// for every method (its chaos hides the effect), and rounds 4-7 carry it.
				r.Rows = nil
				for round := 1; round <= 8; round++ {
					v := a + jitter(seed, m) + 0.01*float64(round-6)
					switch {
					case round <= 3:
						v = 0.1 * float64(seed)
					case round == 8:
						v = 0.5 + jitter(seed, m+"-last")
					}
					r.Rows = append(r.Rows, results.Row{Round: round, Metrics: map[string]float64{results.Accuracy: v}})
				}
				out = append(out, r)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		acc  map[string]float64
		want [2]Verdict
	}{
		{"poster-like", map[string]float64{"fedavg": 0.72, "fedbe-gaussian": 0.74, "fedbe-gaussian-no-swa": 0.70}, [2]Verdict{Holds, Holds}},
		// FedBE within the noise of FedAvg (inconclusive); FedBE without SWA clearly above FedBE (does not hold).
		{"close", map[string]float64{"fedavg": 0.72, "fedbe-gaussian": 0.72001, "fedbe-gaussian-no-swa": 0.73}, [2]Verdict{Inconclusive, Fails}},
		{"no-fedbe", map[string]float64{"fedavg": 0.72}, [2]Verdict{NotRun, NotRun}},
	} {
		fs := chenFindings(runs(tc.acc))
		for i, want := range tc.want {
			if fs[i].Verdict != want {
				t.Errorf("%s: finding %q: %s (%s), want %s", tc.name, fs[i].Claim, fs[i].Verdict, fs[i].Evidence, want)
			}
			if (want == Fails || want == Partly || want == Inconclusive) && fs[i].Why == "" {
				t.Errorf("%s: finding %d does not hold but says nothing about why", tc.name, i)
			}
		}
	}
}

// TestWallTime checks the wall time summed from rows, by hand: timed rows add all their parts,
// rounds without a row add the mean training and aggregation of the run's rows.
func TestWallTime(t *testing.T) {
	row := func(round int, local, agg, eval float64) results.Row {
		return results.Row{Round: round, Time: results.Timing{LocalSeconds: local, AggregateSeconds: agg, EvalSeconds: eval}}
	}
	done := results.Status{State: results.Completed, Round: 10}
	for _, tc := range []struct {
		name       string
		runs       []results.Run
		recorded   float64
		estimated  float64
		timed, not int
		text       string
	}{
		{"every round", []results.Run{{Status: results.Status{State: results.Completed, Round: 2}, Rows: []results.Row{row(1, 10, 1, 4), row(2, 20, 1, 4)}}}, 40, 0, 2, 0,
			"1 min over 1 run: 1 min recorded in their 2 timed rounds (training, aggregation and evaluation)"},
		// Rows at 5 and 10 of 10: 8 untimed rounds at (11 + 21) / 2 = 16 s.
		{"every 5", []results.Run{{Status: done, Rows: []results.Row{row(5, 10, 1, 4), row(10, 20, 1, 4)}}}, 40, 128, 2, 8,
			"3 min over 1 run: 1 min recorded in their 2 timed rounds (training, aggregation and evaluation), plus 2 min estimated for the 8 rounds"},
		// An unfinished run: rounds after its last row are not counted.
		{"unfinished", []results.Run{{Rows: []results.Row{row(5, 3000, 0, 600)}}}, 3600, 4 * 3000, 1, 4, "4.33 h over 1 run: 1.00 h recorded"},
		{"no rows", []results.Run{{}, {}}, 0, 0, 0, 0, "0 min over 2 runs"},
		{"none", nil, 0, 0, 0, 0, "no runs yet"},
	} {
		var w wallTime
		for _, r := range tc.runs {
			w.add(r)
		}
		if math.Abs(w.Recorded-tc.recorded) > 1e-9 || math.Abs(w.Estimated-tc.estimated) > 1e-9 || w.TimedRounds != tc.timed || w.Untimed != tc.not {
			t.Errorf("%s: recorded %g, estimated %g, timed %d, untimed %d; want %g, %g, %d, %d", tc.name, w.Recorded, w.Estimated,
				w.TimedRounds, w.Untimed, tc.recorded, tc.estimated, tc.timed, tc.not)
		}
		if got := w.String(); !strings.HasPrefix(got, tc.text) {
			t.Errorf("%s: %q, want it to start with %q", tc.name, got, tc.text)
		}
	}
}

// TestCountRunsDiverged checks that a diverged run counts as done (it is a result) and an
// unfinished one does not.
func TestCountRunsDiverged(t *testing.T) {
	dir := t.TempDir()
	name := chenPreset.Name(Medium)
	spec, err := presets.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, st := range settings {
		for _, seed := range st.Spec.Seeds {
			meta, err := results.NewMeta(st.Name, st.Labels, seed, st.Spec, cleanInfo())
			if err != nil {
				t.Fatal(err)
			}
			w, err := results.Create(filepath.Join(dir, "004", results.RunName(st.Name, seed)), meta)
			if err != nil {
				t.Fatal(err)
			}
			i++
			switch i {
			case 1: // diverged at round 3
				if err := w.Finish(results.Status{State: results.Diverged, Round: 3, Reason: "NaN loss"}); err != nil {
					t.Fatal(err)
				}
			case 2: // unfinished
			default:
				rounds := st.Spec.Training.Rounds
				for r := 1; r <= rounds; r++ {
					if err := w.Append(results.Row{Round: r, Metrics: map[string]float64{results.Accuracy: 0.7}}); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Complete(rounds); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	p := chenPaper()
	runs, skipped, _, err := loadRuns(dir, p, Medium)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := countRuns(p, Medium, runs, skipped)
	if err != nil {
		t.Fatal(err)
	}
	want := runCount{Done: i - 1, Want: i}
	if got := pr.count[name]; got != want || len(pr.complete[name]) != 0 {
		t.Errorf("count %+v with %d complete runs shown; want %+v and none shown (one run unfinished)", got, len(pr.complete[name]), want)
	}
}

// TestChenRefusesOldRuns checks that a run written by the former multi-round runner, under the name
// of an engine FedBE preset's run, is neither read for the report nor resumed: the report leaves it
// out with a note naming it and what differs from the preset's run (engine.SpecCheck), and running the
// preset refuses it with the reason.
func TestChenRefusesOldRuns(t *testing.T) {
	dir := t.TempDir()
	name := chenPreset.Name(Reduced)
	setting := name + "-" + "fedavg"
	old := map[string]any{"spec": map[string]any{"name": name, "dataset": "fashion-mnist", "rounds": 10, "local": map[string]any{}, "fedbe": map[string]any{}},
		"method": "fedavg"}
	meta, err := results.NewMeta(setting, map[string]string{"method": "fedavg", "dataset": "fashion-mnist"}, 1, old, cleanInfo())
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, "004", results.RunName(setting, 1))
	w, err := results.Create(runDir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 10; r++ {
		if err := w.Append(results.Row{Round: r, Metrics: map[string]float64{results.Accuracy: 0.7}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Complete(10); err != nil {
		t.Fatal(err)
	}
	runs, _, notes, err := loadRuns(dir, chenPaper(), Reduced)
	if err != nil || len(runs[name]) != 0 || !strings.Contains(strings.Join(notes, "\n"), filepath.Base(runDir)) ||
		!strings.Contains(strings.Join(notes, "\n"), "label") {
		t.Errorf("reading an old run for the report: runs %v, notes %q, error %v; want it left out with a note naming it and what differs", runs[name], notes, err)
	}
	err = Run(context.Background(), []*Paper{chenPaper()}, Options{Dir: dir, Budget: Reduced, Presets: []string{chenPreset.Name(Reduced)}})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(runDir)) || !strings.Contains(err.Error(), "label") {
		t.Errorf("running the preset over an old run: %v; want a refusal naming it and what differs", err)
	}
}

// TestWallTimeElapsed checks the elapsed time by hand: runs that finished while others went are
// counted once, runs one after another add up, and unfinished runs are added whole.
func TestWallTimeElapsed(t *testing.T) {
	// run is a completed one-round run of sec seconds that finished at minute end.
	run := func(end int, sec float64) results.Run {
		at := time.Date(2026, 11, 24, 8, end, 0, 0, time.UTC).Format(time.RFC3339)
		return results.Run{Status: results.Status{State: results.Completed, Round: 1, Time: at},
			Rows: []results.Row{{Round: 1, Time: results.Timing{LocalSeconds: sec}}}}
	}
	unfinished := results.Run{Rows: []results.Row{{Round: 1, Time: results.Timing{LocalSeconds: 300}}}}
	// started is run(end, sec) with run.json written at minute start.
	started := func(start, end int, sec float64) results.Run {
		r := run(end, sec)
		r.Meta.Info.Time = time.Date(2026, 11, 24, 8, start, 0, 0, time.UTC).Format(time.RFC3339)
		return r
	}
	for _, tc := range []struct {
		name           string
		runs           []results.Run
		total, elapsed float64
		says           bool
	}{
		{"one after another", []results.Run{run(10, 600), run(20, 600)}, 1200, 1200, false},
		// Two queues: [0, 10] and [0, 10] minutes, then [10, 20] beside [5, 20].
		{"two at once", []results.Run{run(10, 600), run(10, 600), run(20, 600), run(20, 900)}, 2700, 1200, true},
		// [0, 20] contains [5, 15].
		{"contained", []results.Run{run(20, 1200), run(15, 600)}, 1800, 1200, true},
		{"unfinished added whole", []results.Run{run(10, 600), run(10, 600), unfinished}, 1500, 900, true},
		{"a gap", []results.Run{run(10, 600), run(40, 600)}, 1200, 1200, false},
		// A run's time overestimated: 15 min that began at minute 10 span [10, 20], not [5, 20].
		{"not before its start", []results.Run{started(0, 10, 600), started(10, 20, 900)}, 1500, 1200, true},
		// Resumed after a break: started at 0, finished at 40 after 10 min: [30, 40].
		{"resumed", []results.Run{started(0, 10, 600), started(0, 40, 600)}, 1200, 1200, false},
	} {
		var w wallTime
		for _, r := range tc.runs {
			w.add(r)
		}
		if math.Abs(w.total()-tc.total) > 1e-9 || math.Abs(w.elapsed()-tc.elapsed) > 1e-6 {
			t.Errorf("%s: total %g s, elapsed %g s; want %g, %g", tc.name, w.total(), w.elapsed(), tc.total, tc.elapsed)
		}
		if got := strings.Contains(w.String(), "elapsed"); got != tc.says {
			t.Errorf("%s: %q mentions the elapsed time: %v, want %v", tc.name, w.String(), got, tc.says)
		}
	}
}

// cleanInfo is the provenance of the test's runs as a binary built from a clean tree records it: the
// report leaves out runs of a modified tree, and a test binary reads the checkout's state, which is
// modified while one works on it.
func cleanInfo() runinfo.Info {
	info := runinfo.Collect("test")
	info.GitDirty = false
	info.Time = "2026-01-02T03:04:05Z" // a fixed start: the report's date comes from its runs
	return info
}

// TestSeedGains checks the per-seed tally of a paired comparison: pairs by seed, counts the seeds a
// is above b in, and gives the range of the differences in points.
func TestSeedGains(t *testing.T) {
	a := stats.Sample{Seeds: []int64{1, 2, 3, 9}, Values: []float64{0.75, 0.70, 0.69, 0.5}}
	b := stats.Sample{Seeds: []int64{3, 2, 1}, Values: []float64{0.70, 0.69, 0.74}}
	want := "A ends above B in 2 of 3 seeds (differences -1.0 to +1.0 points)"
	if got := seedGains(a, b, "A", "B"); got != want {
		t.Errorf("seedGains = %q, want %q", got, want)
	}
	if got := seedGains(a, stats.Sample{}, "A", "B"); got != "A and B share no seed" {
		t.Errorf("seedGains without shared seeds = %q", got)
	}
}

// withVarianceOptimizer records in every run's spec that its variances trained with Adam at lr 0.001
// (training.variance_optimizer), as the medium presets do.
func withVarianceOptimizer(runs []results.Run) []results.Run {
	out := make([]results.Run, len(runs))
	for i, r := range runs {
		r.Meta.Spec = []byte(`{"training": {"variance_optimizer": "adam", "variance_lr": 0.001}}`)
		out[i] = r
	}
	return out
}
