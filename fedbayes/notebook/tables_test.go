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
