package report

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestTableFlagsPosteriorHealth checks that a row whose runs' variances did not learn, or learned alike
// on every client, is marked and named in the note with the reason, in Markdown and LaTeX, and that a
// row whose variances learned, a deterministic row and an old record are not.
func TestTableFlagsPosteriorHealth(t *testing.T) {
	uniform := healthRow(10, 16.04, 10.19, 1, 0, 0)
	uniform.Metrics[results.VarLocalShift], uniform.Metrics[results.VarDisagreement] = 0.09, 0.0015
	var runs []results.Run
	for seed := int64(0); seed < 2; seed++ {
		runs = append(runs,
			runOf("frozen", nil, seed, healthRow(5, 1.384, 1.378, 0, 0, 0), healthRow(10, 1.390, 1.378, 0, 0, 0.001)),
			runOf("uniform", nil, seed, uniform),
			runOf("learned", nil, seed, healthRow(5, 9, 10.2, 0.8, 0, 0.3), healthRow(10, 8.5, 10.2, 0.85, 0, 0.2)),
			runOf("old", nil, seed, healthRow(10, 1.38, 0, 0, 0, -1)),
			runOf("fedavg", nil, seed, results.Row{Round: 10, Metrics: map[string]float64{results.Accuracy: 0.8}}))
	}
	tab, err := NewTable(runs, TableSpec{Metrics: []Column{{results.Accuracy, results.HigherIsBetter}}})
	if err != nil {
		t.Fatal(err)
	}
	md, tex := tab.Markdown(), tab.LaTeX()
	for _, want := range []string{"| frozen " + HealthMark + " |", "| uniform " + HealthMark + " |", "| learned |", "| old |", "| fedavg |",
		HealthMark + " FROZEN: the variances stayed at their initial value", "what the clients learned: frozen (", HealthMark + " UNIFORM: the variances moved, but alike on every client", "combines the means is another matter): uniform ("} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{"frozen " + HealthMark + " &", "learned &", "FROZEN: the variances stayed", ": frozen ("} {
		if !strings.Contains(tex, want) {
			t.Errorf("LaTeX lacks %q:\n%s", want, tex)
		}
	}
}

// TestTableHealthNoteEachRowItsOwn checks that the note describes every flagged row by its own
// verdict and figures, in Markdown and LaTeX: rows in different states get their own sentences,
// two rows in one state with different figures each get their own, and rows only share a
// description when state and figures agree.
func TestTableHealthNoteEachRowItsOwn(t *testing.T) {
	uniform := func(spread float64) results.Row {
		r := healthRow(10, spread, 3.453, 1, 0, 0)
		r.Metrics[results.VarLocalShift], r.Metrics[results.VarDisagreement] = 0.09, 0.0015
		return r
	}
	runs := []results.Run{
		runOf("EAA", nil, 0, healthRow(10, 3.46, 3.453, 0, 0, 0.001)),     // stayed
		runOf("AALV", nil, 0, healthRow(10, 3.46, 3.453, 0, 0, 0.001)),    // stayed, EAA's figures
		runOf("GAA", nil, 0, healthRow(10, 0.0619, 3.453, 1, 0, 0.001)),   // moved by the rule's arithmetic alone
		runOf("CF", nil, 0, healthRow(10, 0.00625, 3.453, 1, 0.9, 0.001)), // held at the clamp
		runOf("PPA", nil, 0, uniform(16.04)),
		runOf("NWA", nil, 0, uniform(25.09)),
		runOf("BFL", nil, 0, healthRow(10, 9, 3.453, 0.8, 0, 0.3)), // learned: not in the note
	}
	tab, err := NewTable(runs, TableSpec{Metrics: []Column{{results.Accuracy, results.HigherIsBetter}}})
	if err != nil {
		t.Fatal(err)
	}
	stayed := "the variances stayed at their initial value"
	arithmetic := "local training did not move the variances; the global model's moved through the aggregation rule's arithmetic alone"
	tests := []struct {
		rows        string // the names the note gives together, then " ("
		verdict     string // the sentence the names belong to
		figures     []string
		notFigures  []string
		sentenceTag string
	}{
		{"EAA, AALV (", stayed, []string{"spread 3.453 → 3.46)", "local training moved at most 0.1 % of the clients' variances"}, []string{"0.0619"}, "FROZEN"},
		{"GAA (", arithmetic, []string{"100 % of the global variances moved", "spread 3.453 → 0.0619)"}, []string{"3.46)"}, "FROZEN"},
		{"CF (", "most variances sit at the clamp bound", []string{"90 % at the clamp", "spread 3.453 → 0.00625)"}, nil, "CLAMPED"},
		{"NWA (", "alike on every client", []string{"differ by at most 0.0015", "spread 3.453 → 25.09)"}, []string{"16.04"}, "UNIFORM"},
		{"PPA (", "alike on every client", []string{"spread 3.453 → 16.04)"}, []string{"25.09"}, "UNIFORM"},
	}
	for format, text := range map[string]string{"markdown": tab.Markdown(), "LaTeX": strings.SplitN(tab.LaTeX(), "\n", 2)[0]} {
		if strings.Contains(text, "BFL (") {
			t.Errorf("%s: the note describes the learned row BFL:\n%s", format, text)
		}
		sentences := strings.Split(text, HealthMark+" ")
		for _, tc := range tests {
			var found []string
			for _, s := range sentences {
				if i := strings.Index(s, tc.rows); i >= 0 && (i == 0 || s[i-1] == ' ') {
					found = append(found, s)
				}
			}
			if len(found) != 1 {
				t.Errorf("%s: %q is described %d times, want once:\n%s", format, tc.rows, len(found), text)
				continue
			}
			s := found[0]
			if !strings.HasPrefix(s, tc.sentenceTag+": ") || !strings.Contains(s[:strings.Index(s, tc.rows)], tc.verdict) {
				t.Errorf("%s: %q is under %q, want %s: %s", format, tc.rows, s[:min(len(s), 120)], tc.sentenceTag, tc.verdict)
			}
			own := s[strings.Index(s, tc.rows):]
			own = own[:strings.Index(own, ")")+1]
			for _, f := range tc.figures {
				if !strings.Contains(own, f) {
					t.Errorf("%s: %q lacks its figure %q: %s", format, tc.rows, f, own)
				}
			}
			for _, f := range tc.notFigures {
				if strings.Contains(own, f) {
					t.Errorf("%s: %q carries another row's figure %q: %s", format, tc.rows, f, own)
				}
			}
		}
		if n := strings.Count(text, HealthMark+" FROZEN: "); n != 2 {
			t.Errorf("%s: %d FROZEN sentences, want 2 (stayed, moved by arithmetic):\n%s", format, n, text)
		}
	}
}

// TestTableHealthNoteNamesOnlyItsRows checks the note of a table of rules outside Ozer et al.'s five
// (a user's median beside GAA and AALV, all moving their variances alike): it names no rule that is
// not a row, and gives each row its own spread.
func TestTableHealthNoteNamesOnlyItsRows(t *testing.T) {
	var runs []results.Run
	for i, rule := range []string{"GAA", "AALV", "median"} {
		r := healthRow(8, []float64{0.41, 12.2, 12.9}[i], 12.1, 1, 0, 0)
		r.Metrics[results.VarLocalShift], r.Metrics[results.VarDisagreement] = 0.05, 0.01
		runs = append(runs, runOf(rule, nil, 0, r))
	}
	tab, err := NewTable(runs, TableSpec{Metrics: []Column{{results.Accuracy, results.HigherIsBetter}}})
	if err != nil {
		t.Fatal(err)
	}
	note := tab.Note()
	for _, absent := range []string{"EAA", "PPA", "CF"} {
		if strings.Contains(note, absent) {
			t.Errorf("the note names %s, which is not in the table: %s", absent, note)
		}
	}
	for _, want := range []string{"GAA (", "spread 12.1 → 0.41)", "AALV (", "spread 12.1 → 12.2)", "median (", "spread 12.1 → 12.9)"} {
		if !strings.Contains(note, want) {
			t.Errorf("the note lacks %q: %s", want, note)
		}
	}
}
