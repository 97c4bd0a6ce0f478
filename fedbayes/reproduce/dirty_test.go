package reproduce

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
)

// presetRun returns a setting of the reduced Hasan (2023) preset and a function that gives the meta
// its run with a seed records, as the engine writes it, with a clean tree.
func presetRun(t *testing.T) (p *Paper, preset, setting string, meta func(seed int64) results.Meta) {
	t.Helper()
	p = hasanPaper()
	preset = hasanPreset.Name(Reduced)
	spec, err := presets.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	st := settings[0]
	return p, preset, st.Name, func(seed int64) results.Meta {
		info := cleanInfo()
		info.GitCommit = "0123456789abcdef"
		m, err := results.NewMeta(st.Name, st.Labels, seed, st.Spec, info)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// TestDirtyTreeRunsLeftOut checks that a run whose binary was built from a modified tree is not read
// by the report and is named in a note, while a clean run of the same setting is read.
func TestDirtyTreeRunsLeftOut(t *testing.T) {
	dir := t.TempDir()
	p, name, setting, meta := presetRun(t)
	for seed, dirty := range map[int64]bool{1: false, 2: true} {
		m := meta(seed)
		m.Info.GitDirty = dirty
		writeOneRound(t, filepath.Join(dir, p.dir(), results.RunName(setting, seed)), m)
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

// TestRunsNotOfThePresetLeftOut checks that the report reads only runs of its presets as they stand:
// a run recorded with another spec (another learning rate) and a seed the preset does not run are
// left out and named in a note with the reason, while the preset's own runs are read; a copied run
// folder (the same setting and seed a second time) makes the report refuse the folder, naming both.
func TestRunsNotOfThePresetLeftOut(t *testing.T) {
	dir := t.TempDir()
	p, name, setting, meta := presetRun(t)
	pdir := filepath.Join(dir, p.dir())
	for _, seed := range []int64{1, 2} {
		writeOneRound(t, filepath.Join(pdir, results.RunName(setting, seed)), meta(seed))
	}
	writeOneRound(t, filepath.Join(pdir, results.RunName(setting, 77)), meta(77))
	other := meta(3)
	var spec map[string]any
	if err := json.Unmarshal(other.Spec, &spec); err != nil {
		t.Fatal(err)
	}
	spec["training"].(map[string]any)["lr"] = 0.5
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	other.Spec = raw
	writeOneRound(t, filepath.Join(pdir, results.RunName(setting, 3)), other)

	runs, _, notes, err := loadRuns(dir, p, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	var seeds []int64
	for _, r := range runs[name] {
		seeds = append(seeds, r.Meta.Seed)
	}
	if !slices.Equal(seeds, []int64{1, 2}) {
		t.Errorf("read seeds %v of %s; want [1 2]", seeds, name)
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{
		"training.lr: 0.5 in the recorded run",
		results.RunName(setting, 3),
		"seed 77 is not a seed of setting",
		results.RunName(setting, 77),
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes do not say %q:\n%s", want, joined)
		}
	}

	writeOneRound(t, filepath.Join(pdir, results.RunName(setting, 2)+".bak"), meta(2))
	if _, _, _, err := loadRuns(dir, p, Reduced); err == nil || !strings.Contains(err.Error(), results.RunName(setting, 2)+".bak") {
		t.Errorf("a copied run folder gives error %v; want one naming it", err)
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
