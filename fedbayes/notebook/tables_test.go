package notebook

import (
	"strings"
	"testing"
)

// A text table shows in a notebook as a <pre> block that never wraps (notebook 03's wide tables
// wrapped in the text output), its cells escaped and aligned as Write aligns them.
func TestTextTableHTML(t *testing.T) {
	tab := NewTextTable("input set", "net", "accuracy %", "commonest prediction", "entropy", "aleatoric", "epistemic", "mutual inf.")
	tab.Row("foreign: fashion-mnist", "variational <MLP>", "12.3", "7 (41 %)", "1.234", "0.567", "0.089", "0.012")
	h, err := tab.HTML()
	if err != nil {
		t.Fatal(err)
	}
	var plain strings.Builder
	if err := tab.Write(&plain); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"white-space:pre;", "overflow-x:auto", "variational &lt;MLP&gt;", "mutual inf."} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "pre-wrap") {
		t.Error("HTML wraps lines")
	}
	lines := strings.Split(strings.TrimRight(plain.String(), "\n"), "\n")
	if len(lines) != 2 || len(lines[0]) != len(lines[1]) {
		t.Errorf("Write does not align the columns:\n%s", plain.String())
	}
}

// Table rows show the names the legends show: notebooks 04 and 05 showed engine ids such as
// beta-predbayes.
func TestTableMarkdownDisplayNames(t *testing.T) {
	root := t.TempDir()
	methodRuns(t, root, []string{"beta-predbayes", "fedavg"}, []string{"0"}, []int64{1, 2},
		func(_, _ int, seed int64) float64 { return float64(seed) / 4 })
	runs, err := LoadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	md, err := TableMarkdown("", runs, []string{"method"}, []string{"h"}, "nll")
	if err != nil {
		t.Fatal(err)
	}
	fedavg, beta := strings.Index(md, "| FedAvg |"), strings.Index(md, "| β-PredBayes |")
	if fedavg < 0 || beta < 0 || fedavg > beta || strings.Contains(md, "beta-predbayes") {
		t.Errorf("want rows FedAvg then β-PredBayes, no engine ids:\n%s", md)
	}
}
