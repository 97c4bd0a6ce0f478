package notebook

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/strategy"
)

// writeRun writes a run of one or more rounds (values[i] is round i+1's metric) under root and
// returns its directory; complete false leaves it unfinished.
func writeRun(t *testing.T, root, setting string, labels map[string]string, seed int64, metric string, values []float64, complete bool) string {
	t.Helper()
	meta, err := results.NewMeta(setting, labels, seed, map[string]any{"setting": setting},
		runinfo.Info{Fedbayes: runinfo.Version, Backend: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, results.RunName(setting, seed))
	w, err := results.Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if err := w.Append(results.Row{Round: i + 1, Metrics: map[string]float64{metric: v}}); err != nil {
			t.Fatal(err)
		}
	}
	if complete {
		err = w.Complete(len(values))
	} else {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// counter is a progress.Reporter that keeps the last round it was given.
type counter struct {
	progress.Reporter
	round int
}

func (c *counter) Update(round int, _ map[string]float64, _ progress.Timings) { c.round = round }

func TestSpecDir(t *testing.T) {
	type spec struct{ H []float64 }
	a, err := SpecDir("/r", "digits-fast", spec{[]float64{0, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SpecDir("/r", "digits-fast", spec{[]float64{0, 0.5}})
	c, _ := SpecDir("/r", "digits-fast", spec{[]float64{0, 0.9}})
	if a != b || a == c || filepath.Dir(a) != "/r" || !strings.HasPrefix(filepath.Base(a), "digits-fast-") || len(filepath.Base(a)) != len("digits-fast-")+12 {
		t.Errorf("SpecDir: %q, %q, %q", a, b, c)
	}
	if _, err := SpecDir("/r", "x", func() {}); err == nil {
		t.Error("a spec that is not JSON was accepted")
	}
}

// methodRuns writes a grid of completed one-round runs: method x h x seed, value v(method, h, seed).
func methodRuns(t *testing.T, root string, methods []string, hs []string, seeds []int64, v func(m, h int, seed int64) float64) {
	for mi, m := range methods {
		for hi, h := range hs {
			for _, seed := range seeds {
				writeRun(t, root, m+"-h"+h, map[string]string{"method": m, "h": h}, seed, results.NLL,
					[]float64{v(mi, hi, seed)}, true)
			}
		}
	}
}

func TestLoadDirFinalVersusPick(t *testing.T) {
	root := t.TempDir()
	methods := []string{"mixture", "bcm"}
	methodRuns(t, root, methods, []string{"0.5", "0", "1"}, []int64{1, 2}, func(m, h int, seed int64) float64 {
		return float64(10*m+h) + float64(seed)/10
	})
	runs, err := LoadDir(root)
	if err != nil || len(runs) != 12 {
		t.Fatalf("LoadDir: %d runs, %v", len(runs), err)
	}
	series, err := FinalVersus(runs, "method", "h", results.NLL)
	if err != nil {
		t.Fatal(err)
	}
	// Lines in the order of Values (bcm, mixture), h increasing, a row per seed.
	if len(series) != 2 || series[0].Name != "bcm" || !slices.Equal(series[0].X, []float64{0, 0.5, 1}) || len(series[0].Runs) != 2 {
		t.Fatalf("FinalVersus: %+v", series)
	}
	// method index 1 (bcm), h "0" is the 2nd written h (index 1): 10+1 + seed/10.
	if got := series[0].Runs[1]; !slices.Equal(got, []float64{11.2, 10.2, 12.2}) {
		t.Errorf("bcm seed 2 = %v, want [11.2 10.2 12.2]", got)
	}
	picked, err := Pick(series, MethodNames, "mixture", "bcm")
	if err != nil || len(picked) != 2 || picked[0].Name != "mixture" || picked[1].Name != "BCM" {
		t.Errorf("Pick: %+v, %v", picked, err)
	}
	if _, err := Pick(series, nil, "fedavg"); err == nil || !strings.Contains(err.Error(), `no runs of "fedavg" (there are: bcm, mixture)`) {
		t.Errorf("Pick of a missing method: %v", err)
	}
	if _, err := FinalVersus(runs, "method", "h", results.Accuracy); err == nil {
		t.Error("a metric no run records was accepted")
	}
	some, err := FinalVersus(runs, "method", "h", results.NLL, "mixture")
	if err != nil || len(some) != 1 || some[0].Name != "mixture" || !slices.Equal(some[0].Runs[0], []float64{1.1, 0.1, 2.1}) {
		t.Errorf("FinalVersus of mixture only: %+v, %v", some, err)
	}
	if _, err := FinalVersus(runs, "method", "h", results.NLL, "fedavg"); err == nil || !strings.Contains(err.Error(), "no runs of method=fedavg (there are: bcm, mixture)") {
		t.Errorf("FinalVersus of a missing method: %v", err)
	}
	// A seed missing at one h is named.
	if err := os.RemoveAll(filepath.Join(root, results.RunName("bcm-h1", 2))); err != nil {
		t.Fatal(err)
	}
	runs, _ = LoadDir(root)
	if _, err := FinalVersus(runs, "method", "h", results.NLL); err == nil || !strings.Contains(err.Error(), "no run of method=bcm at h=1, seed 2") {
		t.Errorf("FinalVersus with a hole: %v", err)
	}
	// An unfinished run makes LoadDir report it, and an empty folder is not "all finished".
	writeRun(t, root, "bcm-h1", map[string]string{"method": "bcm", "h": "1"}, 2, results.NLL, nil, false)
	var inc *Incomplete
	if _, err := LoadDir(root); !errors.As(err, &inc) || inc.Done != 12-1 || inc.Want != 12 || !strings.HasPrefix(inc.Missing[0], "bcm-h1-seed2 (") {
		t.Errorf("LoadDir with an unfinished run: %v", err)
	}
	if _, err := LoadDir(t.TempDir()); !errors.As(err, &inc) {
		t.Errorf("LoadDir of an empty folder: %v", err)
	}
}

func TestBetaFits(t *testing.T) {
	root := t.TempDir()
	curve := func(b float64) []predictive.BetaPoint {
		return []predictive.BetaPoint{{Beta: 0, NLL: 1 + b}, {Beta: 0.5, NLL: 0.5 + b}, {Beta: 1, NLL: 2 + b}}
	}
	// The former one-round runner's runs (label method) and the engine's (label variant) are read alike.
	for _, c := range []struct {
		h, label string
		seed     int64
		beta     float64
	}{{"0", "method", 1, 0.25}, {"0", "method", 2, 0.75}, {"0.5", "variant", 1, 0.5}} {
		dir := writeRun(t, root, "beta-h"+c.h, map[string]string{c.label: strategy.BetaPredBayes, "h": c.h}, c.seed, "beta", []float64{c.beta}, true)
		raw, _ := json.Marshal(predictive.BetaFit{Beta: c.beta, Curve: curve(c.beta)})
		if err := os.WriteFile(filepath.Join(dir, predictive.BetaFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeRun(t, root, "bcm-h0", map[string]string{"method": strategy.BCM, "h": "0"}, 1, "beta", []float64{1}, true)
	runs, err := LoadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	fits, err := BetaFits(runs)
	if err != nil || len(fits) != 2 || fits[0][2].Beta != 0.75 {
		t.Fatalf("BetaFits: %v, %v", fits, err)
	}
	series, err := NLLVersusBeta(fits)
	if err != nil || len(series) != 2 || series[0].Name != "h = 0" || !slices.Equal(series[0].X, []float64{0, 0.5, 1}) ||
		!slices.Equal(series[0].Runs[1], []float64{1.75, 1.25, 2.75}) {
		t.Errorf("NLLVersusBeta: %+v, %v", series, err)
	}
	lines := FittedBetas(fits)
	if len(lines) != 2 || lines[0] != "h = 0    fitted β per seed: [0.250 0.750]" {
		t.Errorf("FittedBetas: %q", lines)
	}
	// Seeds fitted on different grids cannot share a line.
	fits[0][2] = predictive.BetaFit{Curve: curve(0)[:2]}
	if _, err := NLLVersusBeta(fits); err == nil || !strings.Contains(err.Error(), "seed 2") {
		t.Errorf("different grids: %v", err)
	}
	if _, err := BetaFits(WithLabel(runs, "method", strategy.BCM)); err == nil {
		t.Error("no β-PredBayes run: no error")
	}
}

func TestTables(t *testing.T) {
	root := t.TempDir()
	methodRuns(t, root, []string{"bcm"}, []string{"0"}, []int64{1, 2}, func(_, _ int, seed int64) float64 { return float64(seed) / 4 })
	runs, err := LoadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	md, err := TableMarkdown("nll (columns: h)", runs, []string{"method"}, []string{"h"}, "nll")
	if err != nil || !strings.HasPrefix(md, "**nll (columns: h)**\n\n|") || !strings.Contains(md, "0.375") {
		t.Errorf("TableMarkdown: %q, %v", md, err)
	}
	if _, err := TableMarkdown("", runs, []string{"method"}, nil, "no such metric!"); err == nil {
		t.Error("a bad metric list was accepted")
	}
	for _, tc := range []struct {
		values   []float64
		mean, se float64
		pm       string
	}{
		{[]float64{1, 2, 3}, 2, 1 / math.Sqrt(3), "2.00 ± 0.58"},
		{[]float64{5}, 5, math.NaN(), "5.00 ± —"},
	} {
		m, se, err := MeanSE(tc.values)
		if err != nil || m != tc.mean || !(se == tc.se || math.IsNaN(se) && math.IsNaN(tc.se)) || PM(m, se, 2) != tc.pm {
			t.Errorf("MeanSE(%v) = %v, %v, %v; PM %q", tc.values, m, se, err, PM(m, se, 2))
		}
	}
	if _, _, err := MeanSE(nil); err == nil {
		t.Error("MeanSE of nothing: no error")
	}
	if got := Over([]string{"a", "bcd"}, func(s string) float64 { return float64(len(s)) }); !slices.Equal(got, []float64{1, 3}) {
		t.Errorf("Over = %v", got)
	}
	tab := NewTextTable("net", "accuracy %")
	tab.Row("deterministic", "97.1 ± 0.2")
	tab.Row("MC", "9.0 ± 1.0")
	var out bytes.Buffer
	if err := tab.Write(&out); err != nil || out.String() != "            net  accuracy %\n  deterministic  97.1 ± 0.2\n             MC   9.0 ± 1.0\n" {
		t.Errorf("TextTable: %q (%v)", out.String(), err)
	}
}

func TestPerBudgetAndShow(t *testing.T) {
	for _, tc := range []struct {
		b    Budget
		want string
	}{{Quick, "q"}, {Reduced, "r"}, {Paper, "p"}} {
		if got := PerBudget(tc.b, "q", "r", "p"); got != tc.want {
			t.Errorf("PerBudget(%s) = %q", tc.b, got)
		}
	}
	t.Setenv(FastEnv, "")
	if Knob("Reduced") != Reduced {
		t.Error("Knob(Reduced)")
	}
	if err := Show(nil, errors.New("builder failed")); err == nil || err.Error() != "builder failed" {
		t.Errorf("Show passes the builder's error: %v", err)
	}
}

// PickMethods picks series by method through the alias table: a series labelled by a former name
// (Hasan's variant "oneshot") is the method oneshotfl, asked for by either name, and is named by
// MethodNames.
func TestPickMethods(t *testing.T) {
	series := []plots.SeedSeries{{Name: "oneshot"}, {Name: "fedbe"}, {Name: "bcm"}, {Name: "fedbe-dirichlet"}}
	got, err := PickMethods(series, "oneshotfl", "fedbe-dirichlet", "FedBE", "bcm")
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if want := []string{"OneshotFL", "FedBE (Dirichlet)", "FedBE (Gaussian)", "BCM"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("PickMethods = %v, %v; want %v", names, err, want)
	}
	if _, err := PickMethods(series, "mixture"); err == nil || !strings.Contains(err.Error(),
		`no runs of method "mixture" (there are: oneshotfl, fedbe-gaussian, bcm, fedbe-dirichlet)`) {
		t.Errorf("PickMethods of a missing method: %v", err)
	}
}

// MethodsVersus draws the methods asked for by registry or former name from runs labelled by variant,
// and names a method that no run has.
func TestMethodsVersus(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"oneshot", "bcm"} {
		for i, h := range []string{"0", "0.5"} {
			writeRun(t, root, v+"-"+h, map[string]string{"variant": v, "h": h}, 1, results.Accuracy, []float64{float64(i)}, true)
		}
	}
	// A run without the metric, of a method not asked for, stays out.
	writeRun(t, root, "fedavg-0", map[string]string{"variant": "fedavg", "h": "0"}, 1, results.NLL, []float64{1}, true)
	runs, err := LoadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := MethodsVersus(runs, "h", results.Accuracy, "bcm", "oneshotfl")
	if err != nil || len(lines) != 2 || lines[0].Name != "BCM" || lines[1].Name != "OneshotFL" || !slices.Equal(lines[1].Runs[0], []float64{0, 1}) {
		t.Fatalf("MethodsVersus = %+v, %v", lines, err)
	}
	if _, err := MethodsVersus(runs, "h", results.Accuracy, "mixture"); err == nil || !strings.Contains(err.Error(), `no runs of method "mixture" (there are: bcm, fedavg, oneshotfl)`) {
		t.Errorf("MethodsVersus of a missing method: %v", err)
	}
}
