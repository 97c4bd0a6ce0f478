package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// writeTableRun records a finished run with one final row.
func writeTableRun(t *testing.T, root, rule, dataset string, seed int64, metrics map[string]float64, state results.State) {
	t.Helper()
	labels := map[string]string{"rule": rule, "dataset": dataset}
	meta, err := results.NewMeta(rule+"-"+dataset, labels, seed, map[string]any{"rule": rule}, runinfo.Info{Backend: "test"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(filepath.Join(root, results.RunName(meta.Setting, seed)), meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(results.Row{Round: 5, Metrics: metrics}); err != nil {
		t.Fatal(err)
	}
	switch state {
	case results.Completed:
		err = w.Complete(5)
	case results.Diverged:
		err = w.Diverge(5, "NaN loss")
	default:
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// tableFixture writes two rules x one dataset x two seeds, plus a diverged and an incomplete run.
func tableFixture(t *testing.T) string {
	root := t.TempDir()
	m := func(acc, nll, ece float64) map[string]float64 {
		return map[string]float64{"accuracy": acc, "nll": nll, "ece": ece, "tpr": acc}
	}
	writeTableRun(t, root, "eaa", "fmnist", 1, m(0.75, 0.5, 0.125), results.Completed)
	writeTableRun(t, root, "eaa", "fmnist", 2, m(0.875, 0.25, 0.125), results.Completed)
	writeTableRun(t, root, "gaa_w", "fmnist", 1, m(0.5, 1, 0.25), results.Completed)
	// gaa_w's seed 2 differs from eaa's by about as much as seed 1 does (accuracy .275 against .25, NLL
	// .55 against .5), so the paired test on two seeds can see it (t = 21); it was (0.5, 1, 0.5) under
	// the former 2-SE rule, paired differences {.25, .375} with t = 5 on 1 df (p = .13).
	writeTableRun(t, root, "gaa_w", "fmnist", 2, m(0.6, 0.8, 0.5), results.Completed)
	writeTableRun(t, root, "gaa_w", "fmnist", 3, m(0.1, 9, 0.9), results.Diverged)
	writeTableRun(t, root, "eaa", "fmnist", 3, m(0.1, 9, 0.9), "")
	return root
}

func TestTableCommandMarkdown(t *testing.T) {
	root := tableFixture(t)
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"table", "-rows", "rule", root}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	// Bold where significant, paired by seed (1 df): accuracy differences {.25, .275}, t = 21, p =
	// 1 - 2/π atan 21 = .030; NLL {-.5, -.55}, t = -21, p = .030; ECE {-.125, -.375}, t = -2, p =
	// .30: not significant, nothing bold.
	pm := "\u00a0±\u00a0"
	want := "| rule | accuracy ↑ | nll ↓ | ece ↓ |\n| --- | ---: | ---: | ---: |\n" +
		"| eaa | **0.812" + pm + "0.062** | **0.375" + pm + "0.125** | 0.125" + pm + "0.000 |\n" +
		"| gaa\\_w | 0.550" + pm + "0.050 | 0.900" + pm + "0.100 | 0.375" + pm + "0.125 |\n"
	if !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("table:\n%s\nwant it to start with:\n%s", stdout.String(), want)
	}
	for _, s := range []string{"eaa-fmnist-seed3: incomplete (no status)", "gaa_w-fmnist-seed3: diverged at round 5: NaN loss"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("warnings lack %q:\n%s", s, stderr.String())
		}
	}
}

func TestTableCommandLaTeXToFile(t *testing.T) {
	root := tableFixture(t)
	out := filepath.Join(t.TempDir(), "table.tex")
	var stdout, stderr bytes.Buffer
	args := []string{"table", "-format", "latex", "-rows", "rule", "-cols", "dataset", "-metrics", "accuracy,tpr:higher", "-digits", "2", "-o", out, root}
	if got := runMain(args, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote "+out+": 2 rows, 2 columns, 5 runs (1 diverged)\n") {
		t.Errorf("stdout %q", stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`\multicolumn{2}{c}{fmnist}`, `rule & accuracy $\uparrow$ & tpr $\uparrow$ \\`,
		`eaa & \textbf{0.81}~$\pm$~\textbf{0.06}`, `gaa\_w & 0.55~$\pm$~0.05`, `\bottomrule`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("latex lacks %q:\n%s", s, data)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("output directory holds %d files, want only the table", len(entries))
	}
}

// TestTableCommandDivergedCounts: diverged runs count in what -o says it wrote, and a folder where
// every run diverged gives a table of diverged cells that says so (not "no completed runs").
func TestTableCommandDivergedCounts(t *testing.T) {
	root := tableFixture(t)
	out := filepath.Join(t.TempDir(), "table.md")
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"table", "-rows", "rule", "-o", out, root}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if want := "wrote " + out + ": 2 rows, 3 columns, 5 runs (1 diverged)\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	dv := t.TempDir()
	writeTableRun(t, dv, "eaa", "fmnist", 1, map[string]float64{"accuracy": 0.1}, results.Diverged)
	writeTableRun(t, dv, "gaa", "fmnist", 1, map[string]float64{"accuracy": 0.1}, results.Diverged)
	writeTableRun(t, dv, "gaa", "fmnist", 2, map[string]float64{"accuracy": 0.1}, "")
	stdout.Reset()
	stderr.Reset()
	if got := runMain([]string{"table", "-rows", "rule", dv}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d, want 0: %s", got, stderr.String())
	}
	for _, want := range []string{"| eaa | diverged |", "| gaa | diverged |", "Every run diverged: no cell has a mean."} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("a table of diverged runs lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestTableCommandErrors(t *testing.T) {
	root := tableFixture(t)
	empty := t.TempDir()
	incomplete := t.TempDir()
	writeTableRun(t, incomplete, "eaa", "fmnist", 1, map[string]float64{"accuracy": 1}, "")
	for _, tc := range []struct {
		name       string
		args       []string
		wantStatus int
		wantErr    string
	}{
		{"no directory", []string{"table"}, 2, "give at least one results directory"},
		{"missing directory", []string{"table", filepath.Join(root, "nope")}, 1, "nope"},
		{"empty directory", []string{"table", empty}, 1, "holds no runs"},
		{"only incomplete runs", []string{"table", incomplete}, 1, "no completed or diverged runs in " + incomplete + " (1 skipped)"},
		{"unknown metric direction", []string{"table", "-metrics", "tpr", root}, 2, `"tpr" has no known direction`},
		{"missing metric", []string{"table", "-metrics", "brier", root}, 1, `no run records metric "brier"`},
		{"missing label", []string{"table", "-rows", "weighting", root}, 1, `no label "weighting"`},
		{"bad format", []string{"table", "-format", "html", root}, 2, `-format "html"`},
		{"bad bold", []string{"table", "-bold", "max", root}, 2, `bold rule "max"`},
		{"bad digits", []string{"table", "-digits", "0", root}, 2, "-digits 0"},
		{"bad level", []string{"table", "-level", "1", root}, 2, "-level 1 not in (0, 1)"},
		{"bad order", []string{"table", "-order", "alpha", root}, 2, `row order "alpha"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := runMain(tc.args, &stdout, &stderr); got != tc.wantStatus {
				t.Errorf("status %d, want %d; stderr: %s", got, tc.wantStatus, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// TestTableCommandPaperTables: baselines first and rules in the papers' order, a dash for a metric
// FedAvg does not record, columns split by a label that differs within a row (IID and non-IID), a
// damaged run reported on stderr and left out, and bold only where a difference is significant.
func TestTableCommandPaperTables(t *testing.T) {
	root := t.TempDir()
	write := func(rule, partition string, seed int64, acc float64, spread bool) {
		t.Helper()
		labels := map[string]string{"rule": rule, "partition": partition}
		meta, err := results.NewMeta(rule+"-"+partition, labels, seed, map[string]any{"rule": rule, "partition": partition}, runinfo.Info{Backend: "test"})
		if err != nil {
			t.Fatal(err)
		}
		w, err := results.Create(filepath.Join(root, results.RunName(meta.Setting, seed)), meta)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{"accuracy": acc}
		if spread {
			m["spread"] = 2 * acc
		}
		for r := 1; r <= 3; r++ {
			if err := w.Append(results.Row{Round: r, Metrics: m}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Complete(3); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"iid", "dirichlet"} {
		for seed, d := range []float64{0, 0.0625} {
			write("PPA", p, int64(seed+1), 0.5+d, true)
			write("GAA", p, int64(seed+1), 0.5+d, true)
			// FedAvg's seeds differ by 15/16 of the rules', so the paired differences have some spread.
			write("FedAvg", p, int64(seed+1), 0.25+d*15/16, false)
			write("EAA", p, int64(seed+1), 0.5+d, true)
		}
	}
	// GAA's third seed is short: completed at round 3, but its file ends at round 2.
	write("GAA", "iid", 3, 0.125, true)
	short := filepath.Join(root, results.RunName("GAA-iid", 3), results.RowsFile)
	data, err := os.ReadFile(short)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(short, []byte(lines[0]+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"table", "-rows", "rule", "-metrics", "accuracy,spread", root}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	pm := "\u00a0±\u00a0"
	// Rules 0.53125 ± 0.03125 against FedAvg 0.279296875 ± 0.029296875, paired by seed: differences
	// {.25, .25390625}, t = .251953125 / .001953125 = 129 on 1 df, p = 1 - 2/π atan 129 = .0049, Holm
	// over the 3 testable pairs (the rules tie with each other: not testable) .015 < .05.
	cells := "| **0.531" + pm + "0.031** | 1.062" + pm + "0.062 |"
	want := "| rule | dirichlet accuracy ↑ | dirichlet spread | iid accuracy ↑ | iid spread |\n| --- | ---: | ---: | ---: | ---: |\n" +
		"| FedAvg | 0.279" + pm + "0.029 | — | 0.279" + pm + "0.029 | — |\n" +
		"| EAA " + cells + " " + strings.TrimPrefix(cells, "| ") + "\n" +
		"| GAA " + cells + " " + strings.TrimPrefix(cells, "| ") + "\n" +
		"| PPA " + cells + " " + strings.TrimPrefix(cells, "| ") + "\n"
	if !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("table:\n%s\nwant it to start with:\n%s", stdout.String(), want)
	}
	for _, s := range []string{
		"GAA-iid-seed3: rounds.jsonl ends at round 2, but the run completed after round 3",
		"columns also split by partition",
	} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("warnings lack %q:\n%s", s, stderr.String())
		}
	}
	// With one seed per cell nothing is significant, so nothing is bold.
	stdout.Reset()
	if got := runMain([]string{"table", "-rows", "rule", "-cols", "partition", "-metrics", "accuracy", filepath.Join(root, "EAA-iid-seed1"), filepath.Join(root, "FedAvg-iid-seed1")}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if strings.Contains(stdout.String(), "**") {
		t.Errorf("one-seed table has bold cells:\n%s", stdout.String())
	}
}

// TestTableRuleOrderIsTheAggregatePackages: tables order rules as aggregate.Rules lists them (FedAvg
// is a baseline there); results keeps a copy so that it does not depend on package aggregate.
func TestTableRuleOrderIsTheAggregatePackages(t *testing.T) {
	var want []string
	for _, r := range aggregate.Rules() {
		if r != aggregate.FedAvg {
			want = append(want, string(r))
		}
	}
	if strings.Join(report.RuleOrder, ",") != strings.Join(want, ",") {
		t.Errorf("report.RuleOrder %v, aggregate.Rules %v", report.RuleOrder, want)
	}
}
