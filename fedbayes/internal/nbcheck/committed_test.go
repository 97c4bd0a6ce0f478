package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The notebooks are committed without outputs (make strip-notebooks): no inlined ECharts, no
// results of one machine, no execution counts; and they cite papers by author and year, not by the
// project's file numbers.
func TestNotebooksCommittedClean(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "notebooks", "*.ipynb"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no notebooks found: %v", err)
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var nb struct {
			Cells []struct {
				Type           string          `json:"cell_type"`
				Outputs        []any           `json:"outputs"`
				ExecutionCount json.RawMessage `json:"execution_count"`
				Source         []string        `json:"source"`
			} `json:"cells"`
		}
		if err := json.Unmarshal(raw, &nb); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for i, c := range nb.Cells {
			if len(c.Outputs) > 0 || (c.Type == "code" && string(c.ExecutionCount) != "null") {
				t.Errorf("%s: cell %d has outputs or an execution count: run make strip-notebooks", filepath.Base(p), i)
			}
			src := strings.Join(c.Source, "")
			for _, bad := range []string{"shared/papers", "[000]", "[001]", "[002]", "[003]", "[004]"} {
				if strings.Contains(src, bad) {
					t.Errorf("%s: cell %d cites %q: cite by author and year (docs/references.md)", filepath.Base(p), i, bad)
				}
			}
		}
	}
}
