package report

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestTableShowsDivergedRuns loads a results directory where setting b lost seed 2 to divergence and
// every run of setting c diverged, and checks that the table shows c as diverged rather than leaving
// it out, and that its note names the diverged seeds left out of the means while the seed counts
// stay those of the means (issue 36: they were named on standard error only, and the note said "1 to
// 3 seeds per cell").
func TestTableShowsDivergedRuns(t *testing.T) {
	root := t.TempDir()
	rows := func(acc float64) []results.Row { return []results.Row{accRow(1, acc-0.1, 2), accRow(2, acc, 1)} }
	for seed := int64(1); seed <= 3; seed++ {
		writeRun(t, root, "a", nil, seed, rows(0.5+0.01*float64(seed)), results.Completed)
	}
	writeRun(t, root, "b", nil, 1, rows(0.6), results.Completed)
	writeRun(t, root, "b", nil, 2, rows(0.2), results.Diverged)
	writeRun(t, root, "c", nil, 1, rows(0.3), results.Diverged)
	writeRun(t, root, "c", nil, 2, rows(0.3)[:1], results.Diverged)
	runs, diverged, skipped, err := results.LoadFinished(results.LoadOptions{}, root)
	if err != nil || len(runs) != 4 || len(diverged) != 3 || len(skipped) != 0 {
		t.Fatalf("loaded %d runs, %d diverged, skipped %v: %v", len(runs), len(diverged), skipped, err)
	}
	cols, err := ParseColumns("accuracy")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewTable(runs, TableSpec{Metrics: cols, Order: OrderSorted, Diverged: diverged})
	if err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	for _, want := range []string{
		"| c | diverged |",
		"| b | 0.600 |",
		"over 1 to 3 seeds (no standard error where n = 1) per cell, diverged seeds left out.",
		"Left out of the means: b: seed 2 diverged; c: every run diverged (seeds 1, 2).",
	} {
		if !strings.Contains(md, strings.ReplaceAll(want, "_", `\_`)) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "—") {
		t.Errorf("a diverged cell shows a dash:\n%s", md)
	}
	if tex := tab.LaTeX(); !strings.Contains(tex, "c & diverged \\\\") {
		t.Errorf("LaTeX lacks the diverged row:\n%s", tex)
	}
	// Without divergence the note says nothing of it.
	plain, err := NewTable(runs, TableSpec{Metrics: cols, Order: OrderSorted})
	if err != nil {
		t.Fatal(err)
	}
	if md := plain.Markdown(); strings.Contains(md, "diverge") || strings.Contains(md, "| c |") {
		t.Errorf("table without diverged runs:\n%s", md)
	}
	// results.LoadWith still lists them among the skipped.
	if _, skipped, err := results.LoadWith(results.LoadOptions{}, root); err != nil || len(skipped) != 3 || !strings.Contains(skipped[0].Reason, "diverged at round") {
		t.Errorf("LoadWith skipped %v, %v", skipped, err)
	}
}
