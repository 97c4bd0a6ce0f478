package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// fakeRun is a completed run of a setting with labels and final metrics.
func fakeRun(setting string, seed int64, labels map[string]string, metrics map[string]float64) results.Run {
	return results.Run{Meta: results.Meta{Setting: setting, Seed: seed, Labels: labels},
		Status: results.Status{State: results.Completed}, Rows: []results.Row{{Round: 1, Metrics: metrics}}}
}

// ozerRuns makes two seeds per variant of an Ozer setting with accuracy acc[rule] (± 0.001 by seed)
// and spread spread[rule].
func ozerRuns(acc, spread map[string]float64) []results.Run {
	var out []results.Run
	for _, v := range ozerRows {
		rule := v
		if i := strings.Index(v, "-"); i >= 0 {
			rule = v[i+1:]
		}
		for seed := int64(0); seed < 2; seed++ {
			m := map[string]float64{results.Accuracy: acc[rule] + 0.001*float64(seed), results.ECE: 0.05, results.NLL: 0.5}
			if rule == "FED" || rule == "FEDAVG" {
				m[results.ECE], m[results.NLL] = 0.08, 0.6
			}
			if s, ok := spread[rule]; ok {
				m[results.Spread] = s
			}
			out = append(out, fakeRun("x-"+v, seed, map[string]string{"variant": v}, m))
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
	for _, tc := range []struct {
		name   string
		runs   []results.Run
		claims map[int]Verdict
	}{
		{"paper-like", paperLike, map[int]Verdict{0: Holds, 1: Holds, 2: NotRun, 3: Holds, 4: Holds}},
		{"flat", flat, map[int]Verdict{0: Fails, 1: Partly, 2: NotRun}},
		{"empty", nil, map[int]Verdict{0: NotRun, 1: NotRun, 2: NotRun, 3: NotRun, 4: NotRun}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			get := func(set string) runSet {
				if set == "c100-dirichlet" || set == "c10-iid" || set == "c100-iid" {
					return runSet(tc.runs)
				}
				return nil
			}
			fs := ozerFindings(get)
			if len(fs) != 5 {
				t.Fatalf("%d findings, want 5", len(fs))
			}
			for i, want := range tc.claims {
				if fs[i].Verdict != want {
					t.Errorf("finding %d %q: %s (%s), want %s", i, fs[i].Claim, fs[i].Verdict, fs[i].Evidence, want)
				}
				if fs[i].Verdict != Holds && fs[i].Verdict != NotRun && i < 2 && fs[i].Why == "" {
					t.Errorf("finding %d does not hold but says nothing about why", i)
				}
			}
		})
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

func TestBelow(t *testing.T) {
	a := stat{results.Summary{Mean: 0.80, SE: 0.01, N: 2}}
	b := stat{results.Summary{Mean: 0.85, SE: 0.01, N: 2}}
	c := stat{results.Summary{Mean: 0.82, SE: 0.01, N: 2}}
	if !below(a, b) || below(b, a) || below(a, c) {
		t.Errorf("below: a<b %v, b<a %v, a<c %v; want true, false, false (gap 0.02 < 2·0.0141)", below(a, b), below(b, a), below(a, c))
	}
}

// TestPresetsExist checks that every paper preset exists at both budgets and that a reduced one
// states its budget.
func TestPresetsExist(t *testing.T) {
	for _, p := range Papers() {
		for _, pr := range p.Presets {
			for _, b := range []Budget{Full, Reduced} {
				text, err := pr.Budget(b)
				if err != nil {
					t.Fatalf("paper %s preset %s: %v", p.ID, pr.Name(b), err)
				}
				if b == Reduced && !strings.HasPrefix(text, "reduced") {
					t.Errorf("%s: budget %q does not say it is reduced", pr.Name(b), text)
				}
				if b == Full && !strings.HasPrefix(text, "full") {
					t.Errorf("%s: budget %q does not say it is full", pr.Name(b), text)
				}
				var err2 error
				switch pr.Kind {
				case EngineKind:
					s, _ := engine.Preset(pr.Name(b))
					_, err2 = s.Expand()
				case PredictiveKind:
					s, _ := predictive.Preset(pr.Name(b))
					err2 = s.WithDefaults().Validate()
				case RoundsKind:
					s, _ := predictive.RoundsPreset(pr.Name(b))
					err2 = s.WithDefaults().Validate()
				}
				if err2 != nil {
					t.Errorf("%s: %v", pr.Name(b), err2)
				}
			}
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
	} {
		if got := presetOf(p, tc.b, tc.setting); got != tc.want {
			t.Errorf("presetOf(%q, %s) = %q, want %q", tc.setting, tc.b, got, tc.want)
		}
	}
}

// TestWriteReport writes runs of the 002 preset to disk and checks the report: our table beside
// the paper's, the budget stated, and the findings decided from the numbers.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	name := jamoussiPreset.Name(Reduced)
	spec, err := engine.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	// ECE and NLL fall with n for every rule: the first finding holds.
	for _, v := range []string{"n0-FedAvg", "n1-AALV", "n2-AALV", "n3-AALV"} {
		n := float64(v[1] - '0')
		for seed := int64(0); seed < 2; seed++ {
			setting := name + "-" + v
			meta, err := results.NewMeta(setting, map[string]string{"variant": v}, seed, spec, runinfo.Collect("test"))
			if err != nil {
				t.Fatal(err)
			}
			w, err := results.Create(filepath.Join(dir, "002", results.RunName(setting, seed)), meta)
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]float64{results.Accuracy: 0.8, results.ECE: 0.1 - 0.02*n + 0.001*float64(seed), results.NLL: 0.8 - 0.1*n,
				results.WorstAccuracy: 0.5 - 0.05*n}
			if err := w.Append(results.Row{Round: 5, Metrics: m}); err != nil {
				t.Fatal(err)
			}
			if err := w.Complete(5); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(dir, "docs", "reproduction.md")
	papers, _ := SelectPapers([]string{"002"})
	findings, err := Write(context.Background(), papers, ReportOptions{Dir: dir, Budget: Reduced, Output: out, NoFigures: true, Command: "fedbayes reproduce -papers 002"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{"**Budget: reduced.**", "| n1-AALV | 2 | ", "88.22 ± 0.34", "8 runs; budget reduced", "fedbayes reproduce -papers 002",
		"More Bayesian layers lower the ECE, whatever the rule"} {
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

// TestChenFindings checks the verdicts of the FedBE findings on synthetic final accuracies.
func TestChenFindings(t *testing.T) {
	runs := func(acc map[string]float64) runSet {
		var out runSet
		for m, a := range acc {
			for seed := int64(1); seed <= 2; seed++ {
				out = append(out, fakeRun("fedbe-"+m, seed, map[string]string{"method": m}, map[string]float64{results.Accuracy: a + 0.002*float64(seed)}))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		acc  map[string]float64
		want [2]Verdict
	}{
		{"poster-like", map[string]float64{predictive.RoundsFedAvg: 0.72, predictive.RoundsFedBEGaussian: 0.74, predictive.RoundsFedBENoSWA: 0.70}, [2]Verdict{Holds, Holds}},
		{"close", map[string]float64{predictive.RoundsFedAvg: 0.72, predictive.RoundsFedBEGaussian: 0.7205, predictive.RoundsFedBENoSWA: 0.73}, [2]Verdict{Partly, Fails}},
		{"no-fedbe", map[string]float64{predictive.RoundsFedAvg: 0.72}, [2]Verdict{NotRun, NotRun}},
	} {
		fs := chenFindings(runs(tc.acc))
		for i, want := range tc.want {
			if fs[i].Verdict != want {
				t.Errorf("%s: finding %q: %s (%s), want %s", tc.name, fs[i].Claim, fs[i].Verdict, fs[i].Evidence, want)
			}
			if (want == Fails || want == Partly) && fs[i].Why == "" {
				t.Errorf("%s: finding %d does not hold but says nothing about why", tc.name, i)
			}
		}
	}
}
