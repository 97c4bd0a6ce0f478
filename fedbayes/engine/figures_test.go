package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// TestFiguresRemovesAKilledWritersTemp: a kill before figures.json's rename leaves a temporary file
// in the results root; the next figures write removes it (a recent one, maybe another process's, stays).
func TestFiguresRemovesAKilledWritersTemp(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	runQuiet(t, digitsSpec(), dir, false)
	stale := filepath.Join(dir, ".figures.json.tmp-111")
	fresh := filepath.Join(dir, ".figures.json.tmp-222")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte(`{"version":`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}
	path, skipped, err := writeFigures(dir, "t", nil)
	if err != nil || path != filepath.Join(dir, FiguresFile) || len(skipped) != 0 {
		t.Fatalf("writeFigures: %q, skipped %v, %v", path, skipped, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file not removed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("recent temporary file removed: %v", err)
	}
}

// TestFigureTitle checks that a folder's figures are titled after what its runs share, not after
// the spec that ran last, with the provenance in the caption.
func TestFigureTitle(t *testing.T) {
	run := func(setting string, labels map[string]string, budget string) results.Run {
		return results.Run{Meta: results.Meta{Setting: setting, Labels: labels, Spec: []byte(`{"budget":"` + budget + `"}`)}}
	}
	lab := func(model, rule string) map[string]string {
		return map[string]string{"dataset": "digits", "partition": "iid", "model": model, "rule": rule}
	}
	for _, tc := range []struct {
		name                string
		runs                []results.Run
		wantTitle, wantCapt string
	}{
		{"one spec", []results.Run{run("quick-digits-FVBWA-GAA", lab("bayesian-mlp", "GAA"), "T=3"), run("quick-digits-FVBWA-EAA", lab("bayesian-mlp", "EAA"), "T=3")},
			"quick-digits-FVBWA (2 settings)", "budget T=3; every run: digits, iid, bayesian-mlp"},
		// A notebook folder: ten variational settings and a FedAvg baseline run last.
		{"two specs", []results.Run{run("sweep-GAA", lab("bayesian-mlp", "GAA"), "T=5"), run("fedavg", lab("deterministic-mlp", "FedAvg"), "T=5")},
			"digits, iid (2 settings)", "budget T=5; every run: digits, iid"},
		{"one setting, the spec that ran", []results.Run{run("fedavg", lab("deterministic-mlp", "FedAvg"), "")},
			"fedavg (T=5)", "every run: digits, iid, deterministic-mlp, FedAvg"},
		{"one setting of another spec", []results.Run{run("other", lab("deterministic-mlp", "FedAvg"), "")},
			"digits, iid, deterministic-mlp, FedAvg (1 setting)", "every run: digits, iid, deterministic-mlp, FedAvg"},
	} {
		title, caption := figureTitle(tc.runs, "fedavg (T=5)")
		if title != tc.wantTitle || caption != tc.wantCapt {
			t.Errorf("%s: title %q, caption %q; want %q, %q", tc.name, title, caption, tc.wantTitle, tc.wantCapt)
		}
	}
	one := []results.Run{run("quick-digits-FVBWA-GAA", lab("bayesian-mlp", "GAA"), "T=3"), run("quick-digits-FVBWA-EAA", lab("bayesian-mlp", "EAA"), "T=3")}
	if title, _ := figureTitle(one, "quick-digits-FVBWA (T=3, E=2)"); title != "quick-digits-FVBWA (T=3, E=2)" {
		t.Errorf("every run of the spec that ran: title %q, want the spec's", title)
	}
	if title, _ := figureTitle(nil, "x"); title != "x" {
		t.Errorf("no runs: %q", title)
	}
}

// TestFiguresReportACopiedRunFolder checks that figures are not skipped silently when the folder's
// runs cannot be read together (a copied run folder holds the same run twice): the error says so.
func TestFiguresReportACopiedRunFolder(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	runQuiet(t, digitsSpec(), dir, false)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			if err := os.CopyFS(filepath.Join(dir, e.Name()+".bak"), os.DirFS(filepath.Join(dir, e.Name()))); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, _, err := writeFigures(dir, "t", nil); err == nil || !strings.Contains(err.Error(), ".bak") {
		t.Errorf("writeFigures over a copied run folder: %v, want an error naming the copy", err)
	}
	if path, _, err := writeFigures(t.TempDir(), "t", nil); path != "" || err != nil {
		t.Errorf("an empty folder: %q, %v; want nothing and no error", path, err)
	}
}

// TestCurveFiguresScalesAndLooks checks the exported learning curves: the spread on a log axis, a
// share's axis from 0 to 1 under a y title that fits a column figure, and each rule drawn alike
// in every figure (by its identity, not by its place among the settings).
func TestCurveFiguresScalesAndLooks(t *testing.T) {
	row := func(round int, acc, spread, moved float64) results.Row {
		return results.Row{Round: round, Metrics: map[string]float64{results.Accuracy: acc, results.Spread: spread, results.VarMoved: moved}}
	}
	var runs []results.Run
	for i, rule := range []string{"EAA", "GAA", "CF"} {
		for seed := int64(0); seed < 2; seed++ {
			s := []float64{3.4, 0.06, 0.006}[i]
			runs = append(runs, results.Run{Meta: results.Meta{Setting: "vi-" + rule + "-iid", Seed: seed, Labels: map[string]string{"rule": rule}},
				Rows: []results.Row{row(1, 0.5, s, 0.5), row(2, 0.6+0.01*float64(seed), s*1.01, 0.9)}})
		}
	}
	figs, err := curveFigures(runs, "t")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]plots.FigureSpec{}
	for _, f := range figs {
		byName[f.Name] = f
	}
	build := func(name string) *plots.Chart {
		t.Helper()
		f, ok := byName[name]
		if !ok {
			t.Fatalf("no %s figure among %d", name, len(figs))
		}
		c, err := f.Build()
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Styled(plots.Style{FontSize: plots.ColumnFigure.FontSize}, plots.ColumnFigure.Width, plots.ColumnFigure.Height)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	yAxis := func(c *plots.Chart) map[string]any {
		switch y := c.Option["yAxis"].(type) {
		case []any:
			return y[0].(map[string]any)
		case map[string]any:
			return y
		}
		t.Fatalf("%s: no y axis", c.Name)
		return nil
	}
	spread, moved, acc := build(results.Spread), build(results.VarMoved), build(results.Accuracy)
	if y := yAxis(spread); y["type"] != "log" {
		t.Errorf("spread's y axis is %v, want log", y["type"])
	}
	y := yAxis(moved)
	if y["min"] != 0.0 || y["max"] != 1.0 {
		t.Errorf("var_moved's y axis runs %v to %v, want 0 to 1", y["min"], y["max"])
	}
	if name, _ := y["name"].(string); name == "" || strings.HasSuffix(name, "…") ||
		plots.TextWidth(name, float64(plots.ColumnFigure.FontSize), false) > float64(plots.ColumnFigure.Height)-8 {
		t.Errorf("var_moved's y title %q does not fit a column figure", name)
	}
	want := plots.LegendHandles(acc)
	for i, name := range []string{"EAA-iid", "GAA-iid", "CF-iid"} { // the title names what they share
		if i >= len(want) || want[i].Name != name {
			t.Errorf("legend %+v, want the settings named %v", want, []string{"EAA-iid", "GAA-iid", "CF-iid"})
			break
		}
	}
	for _, c := range []*plots.Chart{spread, moved} {
		got := plots.LegendHandles(c)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: %+v, but %+v in the accuracy figure", c.Name, got[i], want[i])
			}
		}
	}
}

// TestFiguresOfKeptRunsAreTheFolders: the figures Run writes from the runs it holds (one run to its
// end, one found finished on resume) and those it reads (one resumed from a checkpoint) are, byte
// for byte, the figures of the folder read from disk.
func TestFiguresOfKeptRunsAreTheFolders(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Variants = []Variant{variant("gaa", "aggregation.rule", "GAA"), variant("eaa", "aggregation.rule", "EAA")}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := func(setting string, _ int64, round int) {
		if strings.HasSuffix(setting, "eaa") && round == 1 {
			cancel()
		}
	}
	if _, err := Run(ctx, s, Options{Dir: dir, Progress: progress.Discard, AfterRound: stop}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first call: %v, want it cancelled in the second run", err)
	}
	sum, err := Run(context.Background(), s, Options{Dir: dir, Resume: true, Progress: progress.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) != 2 || !sum.Runs[0].AlreadyDone || !sum.Runs[1].Resumed || sum.Figures == "" {
		t.Fatalf("second call: %+v", sum)
	}
	kept, err := os.ReadFile(sum.Figures)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	title := s.WithDefaults().Name + " (" + describeBudget(settings[0].Spec, &datasetCache{}).Short() + ")"
	if _, _, err := writeFigures(dir, title, nil); err != nil {
		t.Fatal(err)
	}
	read, err := os.ReadFile(sum.Figures)
	if err != nil {
		t.Fatal(err)
	}
	if string(kept) != string(read) {
		t.Errorf("figures from the kept runs (%d bytes) differ from the folder's (%d bytes)", len(kept), len(read))
	}
	if !strings.Contains(string(read), `"eaa"`) || !strings.Contains(string(read), `"gaa"`) {
		t.Errorf("figures lack a setting's series:\n%.400s", read)
	}
}
