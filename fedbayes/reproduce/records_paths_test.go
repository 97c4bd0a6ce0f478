package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordsFolderNames is the property that every records function taking a folder-name
// parameter (the budget, a folder of the records directory; the run of -drop-record) refuses one
// that is not a plain name of its kind ("..", an absolute path, a path with a separator, an odd
// budget string) with an error naming it, and touches nothing outside the records directory.
func TestRecordsFolderNames(t *testing.T) {
	papers, _ := SelectPapers([]string{"002"})
	root := t.TempDir()
	records, res := filepath.Join(root, "records"), filepath.Join(root, "results")
	outside := filepath.Join(root, "outside")
	budgets := []Budget{"..", "../outside", "medium/..", "medium/../../outside", "", " medium", "MEDIUM", Budget(outside)}
	calls := map[string]func(b Budget) error{
		"LoadRecords":      func(b Budget) error { _, _, err := LoadRecords(papers, res, records, b); return err },
		"SaveRecords":      func(b Budget) error { _, err := SaveRecords(papers, res, records, b); return err },
		"DropRecord":       func(b Budget) error { _, _, err := DropRecord(papers, records, b, "x-seed0"); return err },
		"StaleRecordNotes": func(b Budget) error { _, err := StaleRecordNotes(papers[0], records, b); return err },
	}
	for name, call := range calls {
		for _, b := range budgets {
			if err := call(b); err == nil || !strings.Contains(err.Error(), "budget") {
				t.Errorf("%s(budget %q): %v; want the budget refused", name, b, err)
			}
		}
	}
	for _, run := range []string{"..", "../x-seed0", "/abs/x-seed0", "a/b", ""} {
		if _, _, err := DropRecord(papers, records, Medium, run); err == nil {
			t.Errorf("DropRecord(run %q): no error", run)
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		t.Errorf("%s was created", filepath.Join(root, e.Name()))
	}
}
