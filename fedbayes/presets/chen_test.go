package presets

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/strategy"
)

// TestChenPresets checks every multi-round FedBE preset: one setting per method of ChenMethods,
// labelled by it and running it, 10 clients with a Dirichlet label skew and a 20% server set, a
// deterministic MLP, and FedBE's server options (M, distillation) on the FedBE variants only.
func TestChenPresets(t *testing.T) {
	names := ChenPresetNames()
	if len(names) != 4 {
		t.Fatalf("Chen presets %v, want 4", names)
	}
	for _, name := range names {
		_, settings := expandPreset(t, name)
		if len(settings) != len(ChenMethods) {
			t.Fatalf("%s: %d settings, want one per method (%d)", name, len(settings), len(ChenMethods))
		}
		for i, st := range settings {
			m, c := ChenMethods[i], st.Spec
			if st.Name != name+"-"+m || st.Labels["variant"] != m || engine.Method(c.Aggregation.Rule) != m || c.Aggregation.Weighting != "size" {
				t.Errorf("%s: labels %v rule %s; want variant %s running %s with size weights", st.Name, st.Labels, c.Aggregation.Rule, m, m)
			}
			if c.Partition.Method != "dirichlet" || c.Partition.Clients != 10 || !(c.Partition.Alpha > 0) || c.Dataset.ServerFraction != 0.2 ||
				c.Model.Arch != "mlp" || c.Model.Kind != "deterministic" || c.Training.Momentum != 0.9 {
				t.Errorf("%s: not Chen & Chao's setting: %+v", st.Name, c)
			}
			var sv strategy.FedBEOptions
			has := len(c.Aggregation.Options) > 0
			if has {
				if err := json.Unmarshal(c.Aggregation.Options, &sv); err != nil {
					t.Fatal(err)
				}
			}
			if (m == "fedavg") == has || has && (sv.Samples < 1 || sv.Distill.Epochs < 1) {
				t.Errorf("%s: options %s", st.Name, c.Aggregation.Options)
			}
		}
	}
}

// TestChenCut checks that a cut FedBE preset states its budget from its own fields (examples, the
// server's share, rounds, local epochs, seeds, M) beside the paper's.
func TestChenCut(t *testing.T) {
	for name, want := range map[string]string{
		"fedbe-fmnist-medium": "medium: 20,000 (4,000 the server's) training / all test examples, T=20 rounds, E=5 local epochs, 5 seeds, M=10 (" + chenPaperBudget + ")",
		"fedbe-fmnist-fast":   "reduced: 6,000 (1,200 the server's) training / 2,000 test examples, T=10 rounds, E=2 local epochs, 2 seeds, M=5 (" + chenPaperBudget + ")",
	} {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.Budget != want {
			t.Errorf("%s: budget %q\nwant %q", name, s.Budget, want)
		}
	}
	s := chenCut("x", &engine.Spec{Dataset: engine.DatasetSpec{Name: "digits"}, Training: engine.TrainingSpec{Rounds: 3, LocalEpochs: 1}, Seeds: []int64{7}}, ChenServer(4))
	if want := "x: all training / all test examples, T=3 rounds, E=1 local epochs, 1 seeds, M=4 (" + chenPaperBudget + ")"; s.Budget != want {
		t.Errorf("budget %q\nwant %q", s.Budget, want)
	}
}

// TestRunRefusesFormerRunnersRun checks that a run the former multi-round runner wrote under the name
// of a FedBE preset's run (its spec {"spec": rounds spec, "method": ...} and its labels method and
// dataset) is refused, not resumed or shown: Run says the folder holds a run, and with Resume what
// differs from the run it would write, as the ordinary spec check refuses any run of another spec;
// nothing is written.
func TestRunRefusesFormerRunnersRun(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	old := map[string]any{"spec": map[string]any{"name": "fedbe-digits-fast", "dataset": "digits", "local": map[string]any{}, "fedbe": map[string]any{}},
		"method": "fedavg"}
	meta, err := results.NewMeta("fedbe-digits-fast-fedavg", map[string]string{"method": "fedavg", "dataset": "digits"}, 1, old, runinfo.Collect("test"))
	if err != nil {
		t.Fatal(err)
	}
	oldDir := filepath.Join(dir, "fedbe-digits-fast-fedavg-seed1")
	w, err := results.Create(oldDir, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(results.Row{Round: 1, Metrics: map[string]float64{results.Accuracy: 0.5}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Complete(1); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		var names []string
		err := filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
			names = append(names, path)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return names
	}
	before := list()
	s, err := Preset("fedbe-digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	s.Training.Rounds, s.Seeds = 1, []int64{1}
	if err := engine.SelectMethods(s, []string{"fedavg"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		resume bool
		says   string
	}{
		{false, "already holds a run"},
		{true, "label"},
	} {
		_, err := engine.Run(context.Background(), s, engine.Options{Dir: dir, Resume: tc.resume, Progress: progress.Discard, NoFigures: true})
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "fedbe-digits-fast-fedavg") {
			t.Errorf("Run (resume %v): error %v, want one naming the run and saying %q", tc.resume, err, tc.says)
		}
	}
	if after := list(); !slices.Equal(after, before) {
		t.Errorf("the results directory holds %v after the refusals, %v before", after, before)
	}
}
