package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	writeTableRun(t, root, "gaa_w", "fmnist", 2, m(0.5, 1, 0.5), results.Completed)
	writeTableRun(t, root, "gaa_w", "fmnist", 3, m(0.1, 9, 0.9), results.Diverged)
	writeTableRun(t, root, "eaa", "fmnist", 3, m(0.1, 9, 0.9), "")
	return root
}

func TestTableCommandMarkdown(t *testing.T) {
	root := tableFixture(t)
	var warn bytes.Buffer
	tableWarnings = &warn
	defer func() { tableWarnings = os.Stderr }()
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"table", "-rows", "rule", root}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	want := "| rule | accuracy ↑ | nll ↓ | ece ↓ |\n| --- | ---: | ---: | ---: |\n" +
		"| eaa | **0.812 ± 0.062** | **0.375 ± 0.125** | **0.125 ± 0.000** |\n" +
		"| gaa\\_w | 0.500 ± 0.000 | 1.000 ± 0.000 | 0.375 ± 0.125 |\n"
	if !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("table:\n%s\nwant it to start with:\n%s", stdout.String(), want)
	}
	for _, s := range []string{"eaa-fmnist-seed3: incomplete (no status)", "gaa_w-fmnist-seed3: diverged at round 5: NaN loss"} {
		if !strings.Contains(warn.String(), s) {
			t.Errorf("warnings lack %q:\n%s", s, warn.String())
		}
	}
}

func TestTableCommandLaTeXToFile(t *testing.T) {
	root := tableFixture(t)
	tableWarnings = &bytes.Buffer{}
	defer func() { tableWarnings = os.Stderr }()
	out := filepath.Join(t.TempDir(), "table.tex")
	var stdout, stderr bytes.Buffer
	args := []string{"table", "-format", "latex", "-rows", "rule", "-cols", "dataset", "-metrics", "accuracy,tpr:higher", "-digits", "2", "-o", out, root}
	if got := runMain(args, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote "+out+": 2 rows, 2 columns, 4 runs") {
		t.Errorf("stdout %q", stdout.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`\multicolumn{2}{c}{fmnist}`, `rule & accuracy $\uparrow$ & tpr $\uparrow$ \\`,
		`eaa & \textbf{0.81} $\pm$ \textbf{0.06}`, `gaa\_w & 0.50 $\pm$ 0.00`, `\bottomrule`} {
		if !strings.Contains(string(data), s) {
			t.Errorf("latex lacks %q:\n%s", s, data)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("output directory holds %d files, want only the table", len(entries))
	}
}

func TestTableCommandErrors(t *testing.T) {
	root := tableFixture(t)
	empty := t.TempDir()
	incomplete := t.TempDir()
	writeTableRun(t, incomplete, "eaa", "fmnist", 1, map[string]float64{"accuracy": 1}, "")
	tableWarnings = &bytes.Buffer{}
	defer func() { tableWarnings = os.Stderr }()
	for _, tc := range []struct {
		name       string
		args       []string
		wantStatus int
		wantErr    string
	}{
		{"no directory", []string{"table"}, 2, "give at least one results directory"},
		{"missing directory", []string{"table", filepath.Join(root, "nope")}, 1, "nope"},
		{"empty directory", []string{"table", empty}, 1, "holds no runs"},
		{"only incomplete runs", []string{"table", incomplete}, 1, "no completed runs"},
		{"unknown metric direction", []string{"table", "-metrics", "tpr", root}, 2, `"tpr" has no known direction`},
		{"missing metric", []string{"table", "-metrics", "brier", root}, 1, `no metric "brier"`},
		{"missing label", []string{"table", "-rows", "weighting", root}, 1, `no label "weighting"`},
		{"seeds not told apart", []string{"table", "-rows", "dataset", root}, 1, "holds seed 1 twice"},
		{"bad format", []string{"table", "-format", "html", root}, 2, `-format "html"`},
		{"bad bold", []string{"table", "-bold", "max", root}, 2, `bold rule "max"`},
		{"bad digits", []string{"table", "-digits", "0", root}, 2, "-digits 0"},
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
