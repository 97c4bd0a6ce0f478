package notebook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// committedNotebooks returns the notebooks of the repository's notebooks/ folder, by name without
// ".ipynb", with the text of their code and markdown cells.
func committedNotebooks(t *testing.T) map[string]struct{ code, markdown string } {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "notebooks", "*.ipynb"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no notebooks found (%v)", err)
	}
	out := map[string]struct{ code, markdown string }{}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type   string   `json:"cell_type"`
				Source []string `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(raw, &nb); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var code, md strings.Builder
		for _, c := range nb.Cells {
			if c.Type == "code" {
				code.WriteString(strings.Join(c.Source, "") + "\n")
			} else {
				md.WriteString(strings.Join(c.Source, "") + "\n")
			}
		}
		out[strings.TrimSuffix(filepath.Base(p), ".ipynb")] = struct{ code, markdown string }{code.String(), md.String()}
	}
	return out
}

// Every notebook with a budget knob prints its budget and expected time from one place
// (notebook.Start with its own name, times in Times), notebook 07 included; 01, the explorer's
// notebook, is left to its own first cell.
func TestNotebooksStartFromOnePlace(t *testing.T) {
	for name, nb := range committedNotebooks(t) {
		if !strings.Contains(nb.code, "budget") || name == "01-aggregation-geometry" {
			continue
		}
		if !strings.Contains(nb.code, `notebook.Start("`+name+`", budget)`) {
			t.Errorf("%s does not print its budget and expected time with notebook.Start(%q, budget)", name, name)
		}
		if strings.Contains(nb.code, "notebook.Expected{") {
			t.Errorf("%s states its expected times itself instead of in notebook.Times", name)
		}
		if e, ok := Times[name]; !ok || e.Quick.Seconds <= 0 || e.Quick.Cores <= 0 || e.Quick.Load <= 0 || e.Quick.Date == "" {
			t.Errorf("notebook.Times has no quick time for %s with the cores, load and date it was measured at", name)
		}
	}
}

// No notebook describes the tables' bold rule by hand: the note under each table, written by the
// table code (results), states it, so the text cannot drift from what the tables apply.
func TestNotebooksLeaveTheBoldRuleToTheTables(t *testing.T) {
	for name, nb := range committedNotebooks(t) {
		for _, phrase := range []string{"Holm", "t-test", "Welch", "within one standard error", "2 combined SE"} {
			if strings.Contains(nb.markdown, phrase) {
				t.Errorf("%s's text describes the bold rule (%q); point to the note under the table instead", name, phrase)
			}
		}
	}
}

func TestHeader(t *testing.T) {
	t.Setenv(FastEnv, "")
	b, text, err := Header("02-federated-vi", "reduced")
	if err != nil || b != Reduced || !strings.HasPrefix(text, "budget: reduced\nexpected time ("+ReferenceMachine+"): ") {
		t.Errorf("Header = %q, %q, %v", b, text, err)
	}
	for _, tc := range []struct{ name, knob, want string }{
		{"99-unknown", "quick", `no expected times for notebook "99-unknown"`},
		{"02-federated-vi", "fast", `budget "fast"`},
	} {
		if _, _, err := Header(tc.name, tc.knob); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Header(%q, %q): error %v, want %q", tc.name, tc.knob, err, tc.want)
		}
	}
}
