package results

import (
	"strings"
	"testing"
)

// TestTableFlagsPosteriorHealth checks that a row whose runs' variances did not learn, or learned alike
// on every client, is marked and named in the note with the reason, in Markdown and LaTeX, and that a
// row whose variances learned, a deterministic row and an old record are not.
func TestTableFlagsPosteriorHealth(t *testing.T) {
	uniform := healthRow(10, 16.04, 10.19, 1, 0, 0)
	uniform.Metrics[VarLocalShift], uniform.Metrics[VarDisagreement] = 0.09, 0.0015
	var runs []Run
	for seed := int64(0); seed < 2; seed++ {
		runs = append(runs,
			runOf("frozen", nil, seed, healthRow(5, 1.384, 1.378, 0, 0, 0), healthRow(10, 1.390, 1.378, 0, 0, 0.001)),
			runOf("uniform", nil, seed, uniform),
			runOf("learned", nil, seed, healthRow(5, 9, 10.2, 0.8, 0, 0.3), healthRow(10, 8.5, 10.2, 0.85, 0, 0.2)),
			runOf("old", nil, seed, healthRow(10, 1.38, 0, 0, 0, -1)),
			runOf("fedavg", nil, seed, Row{Round: 10, Metrics: map[string]float64{Accuracy: 0.8}}))
	}
	tab, err := NewTable(runs, TableSpec{Metrics: []Column{{Accuracy, HigherIsBetter}}})
	if err != nil {
		t.Fatal(err)
	}
	md, tex := tab.Markdown(), tab.LaTeX()
	for _, want := range []string{"| frozen " + HealthMark + " |", "| uniform " + HealthMark + " |", "| learned |", "| old |", "| fedavg |",
		HealthMark + " frozen (FROZEN): the variances stayed at their initial value", HealthMark + " uniform (UNIFORM): the variances moved together"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{"frozen " + HealthMark + " &", "learned &", "(FROZEN): the variances stayed"} {
		if !strings.Contains(tex, want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, tex)
		}
	}
}
