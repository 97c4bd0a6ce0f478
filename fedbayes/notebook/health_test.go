package notebook

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestHealthTable checks what a notebook shows beside rules that combine variances: one line that
// counts the verdicts, and a row per group with its own verdict, shares moved and spread (means
// over seeds); no row for deterministic groups, and the seeds' verdicts when they differ.
func TestHealthTable(t *testing.T) {
	row := func(spread, moved, local, disagreement float64) results.Row {
		return results.Row{Round: 5, Metrics: map[string]float64{results.Accuracy: 0.8, results.Spread: spread, results.SpreadStart: 3.4,
			results.VarMoved: moved, results.VarShift: local, results.VarClamped: 0, results.VarLocalMoved: local, results.VarLocalShift: local,
			results.VarDisagreement: disagreement}}
	}
	run := func(rule, part string, seed int64, r results.Row) results.Run {
		return results.Run{Meta: results.Meta{Setting: "s-" + rule + "-" + part, Seed: seed, Labels: map[string]string{"rule": rule, "partition": part}},
			Status: results.Status{State: results.Completed}, Rows: []results.Row{r}}
	}
	fedavg := results.Row{Round: 5, Metrics: map[string]float64{results.Accuracy: 0.8}}
	runs := []results.Run{
		run("EAA", "iid", 0, row(3.46, 0, 0, 0)), run("EAA", "iid", 1, row(3.48, 0, 0, 0)),
		run("GAA", "iid", 0, row(0.06, 1, 0, 0)), run("GAA", "iid", 1, row(0.08, 1, 0, 0)),
		run("AALV", "iid", 0, row(3, 0.9, 0.3, 0.3)), run("AALV", "iid", 1, row(3.46, 0, 0, 0)),
		run("FedAvg", "iid", 0, fedavg),
	}
	line, tab, err := HealthTable(runs, "rule", "partition")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(line, "\n") != 0 || !strings.HasPrefix(line, "posterior health of 3 variational settings: ") ||
		!strings.Contains(line, "2 FROZEN") || !strings.Contains(line, "1 mixed across seeds") ||
		!strings.Contains(line, "(FROZEN: local training did not move the variances)") || strings.Contains(line, "UNIFORM") {
		t.Errorf("line = %q", line)
	}
	var b strings.Builder
	if err := tab.Write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want a header and 3 rows (no FedAvg):\n%s", len(lines), b.String())
	}
	for _, want := range []struct{ rule, verdict, moved, spread string }{
		{"EAA", "FROZEN", "0 %", "3.4 → 3.47"},
		{"GAA", "FROZEN", "100 %", "3.4 → 0.07"},
		{"AALV", "learned 1/2, FROZEN 1/2", "45 %", "3.4 → 3.23"},
	} {
		found := false
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			if f[0] != want.rule {
				continue
			}
			found = true
			for _, part := range []string{" " + want.verdict + " ", " " + want.moved + " ", want.spread} {
				if !strings.Contains(l+" ", part) {
					t.Errorf("%s's row %q lacks %q", want.rule, l, part)
				}
			}
		}
		if !found {
			t.Errorf("no row for %s:\n%s", want.rule, b.String())
		}
	}
	if _, tab, err := HealthTable([]results.Run{run("FedAvg", "iid", 0, fedavg)}, "rule"); err != nil || tab != nil {
		t.Errorf("deterministic only: table %v, %v; want none", tab, err)
	}
}
