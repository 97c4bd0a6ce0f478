package reproduce

import (
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// TestHasanFormerRunsLeftOutWithANote checks that runs the former one-round runner wrote for a 003
// preset (settings NAME-hH-METHOD, label method) are not counted as the engine preset's runs and
// are named in one note that says why.
func TestHasanFormerRunsLeftOutWithANote(t *testing.T) {
	dir := t.TempDir()
	name := hasanPreset.Name(Reduced)
	for _, m := range []string{"fedavg", "bcm"} {
		setting := name + "-h0.3-" + m
		meta, err := results.NewMeta(setting, map[string]string{"method": m, "h": "0.3", "dataset": "fashion-mnist"}, 1, map[string]any{"h": 0.3}, runinfo.Collect("test"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := results.Create(filepath.Join(dir, "003", results.RunName(setting, 1)), meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(results.Row{Round: 1, Metrics: map[string]float64{results.Accuracy: 0.8}}); err != nil {
			t.Fatal(err)
		}
		if err := w.Complete(1); err != nil {
			t.Fatal(err)
		}
	}
	runs, _, notes, err := loadRuns(dir, hasanPaper(), Reduced)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs[name]) != 0 {
		t.Errorf("%d former runs counted as the engine preset's", len(runs[name]))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "left out 2 runs of "+name+" by the former one-round runner") {
		t.Errorf("notes %q; want one note on the 2 former runs", notes)
	}
}
