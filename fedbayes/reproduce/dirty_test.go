package reproduce

import (
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestDirtyTreeRunsLeftOut checks that a run whose binary was built from a modified tree is not read
// by the report and is named in a note, while a clean run of the same setting is read.
func TestDirtyTreeRunsLeftOut(t *testing.T) {
	dir := t.TempDir()
	p := hasanPaper()
	settings, err := presetSettings(p, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	name := hasanPreset.Name(Reduced)
	var setting string
	for s := range settings[name] {
		setting = s
		break
	}
	for seed, dirty := range map[int64]bool{1: false, 2: true} {
		info := cleanInfo()
		info.GitCommit, info.GitDirty = "0123456789abcdef", dirty
		meta, err := results.NewMeta(setting, map[string]string{"variant": "x"}, seed, map[string]any{"seed": seed}, info)
		if err != nil {
			t.Fatal(err)
		}
		writeOneRound(t, filepath.Join(dir, p.dir(), results.RunName(setting, seed)), meta)
	}
	runs, _, notes, err := loadRuns(dir, p, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs[name]) != 1 || runs[name][0].Meta.Seed != 1 {
		t.Errorf("read %d runs of %s, want the clean seed 1 only", len(runs[name]), name)
	}
	want := "left out 1 run of " + name + " computed by a binary built from a modified tree"
	if len(notes) != 1 || !strings.Contains(notes[0], want) || !strings.Contains(notes[0], results.RunName(setting, 2)) {
		t.Errorf("notes %q; want one that says %q and names the dirty run", notes, want)
	}
}

// writeOneRound writes a completed run of meta to runDir: one round, accuracy 0.8.
func writeOneRound(t *testing.T, runDir string, meta results.Meta) {
	t.Helper()
	w, err := results.Create(runDir, meta)
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
