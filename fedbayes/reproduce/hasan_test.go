package reproduce

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
)

// TestHasanFormerRunsLeftOutWithANote checks that runs the former one-round runner wrote for a 003
// preset (settings NAME-hH-METHOD, label method) are not counted as the engine preset's runs and
// are named in one note that says why.
func TestHasanFormerRunsLeftOutWithANote(t *testing.T) {
	dir := t.TempDir()
	name := hasanPreset.Name(Reduced)
	for _, m := range []string{"fedavg", "bcm"} {
		setting := name + "-h0.3-" + m
		meta, err := results.NewMeta(setting, map[string]string{"method": m, "h": "0.3", "dataset": "fashion-mnist"}, 1, map[string]any{"h": 0.3}, cleanInfo())
		if err != nil {
			t.Fatal(err)
		}
		writeOneRound(t, filepath.Join(dir, "003", results.RunName(setting, 1)), meta)
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

// TestFrictionNote checks that the 003 section says which cSGHMC friction its runs sampled with when it
// is not the presets' (Zhang et al.'s), and says nothing when it is.
func TestFrictionNote(t *testing.T) {
	run := func(friction float64) results.Run {
		spec := fmt.Sprintf(`{"training": {"sampler": {"method": "csghmc", "friction": %g}}}`, friction)
		return results.Run{Meta: results.Meta{Setting: "fmnist-medium-bcm-0", Spec: []byte(spec)}}
	}
	if got := frictionNote(runSet{run(predictive.ZhangFriction)}); got != "" {
		t.Errorf("runs at the presets' friction: note %q, want none", got)
	}
	got := frictionNote(runSet{run(0.1), run(predictive.ZhangFriction), run(0.1)})
	if !strings.Contains(got, "friction 0.1 (their recorded specs); the presets now use 0.9") {
		t.Errorf("runs at friction 0.1: note %q", got)
	}
}
