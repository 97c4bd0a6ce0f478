package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// TestFromRounds translates a rounds spec JSON (the input of `fedbayes fedbe`) and checks every field
// of the engine spec against the rounds spec's, and the settings: one per method, labelled by it.
func TestFromRounds(t *testing.T) {
	rs, err := predictive.ParseRoundsSpec([]byte(`{"name": "x", "dataset": "digits", "subsample": 900, "test_subsample": 300,
		"clients": 4, "hidden": [16], "seeds": [3, 4], "alpha": 0.3, "rounds": 2,
		"local": {"epochs": 3, "batch_size": 16, "learning_rate": 0.05},
		"fedbe": {"samples": 4, "alpha": 2, "distill": {"epochs": 6, "batch_size": 8, "swa_cycles": 3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromRounds(rs)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != len(predictive.RoundsMethods) {
		t.Fatalf("%d settings, want one per method (%d)", len(settings), len(predictive.RoundsMethods))
	}
	want := map[string]string{"fedavg": "FedAvg", "fedbe-gaussian": "fedbe-gaussian", "fedbe-dirichlet": "fedbe-dirichlet",
		"fedbe-gaussian-no-swa": "fedbe-gaussian-no-swa"}
	for i, st := range settings {
		m := predictive.RoundsMethods[i]
		c := st.Spec
		if st.Name != "x-"+m || st.Labels["variant"] != m || c.Aggregation.Rule != want[m] || c.Aggregation.Weighting != "size" {
			t.Errorf("setting %d: %s labels %v rule %s weighting %s; want x-%s, variant %s, rule %s, size weights",
				i, st.Name, st.Labels, c.Aggregation.Rule, c.Aggregation.Weighting, m, m, want[m])
		}
		d := c.Dataset
		if d.Name != "digits" || d.Subsample != 900 || d.TestSubsample != 300 || d.ServerFraction != 0.2 {
			t.Errorf("%s: dataset %+v", st.Name, d)
		}
		p := c.Partition
		if p.Method != "dirichlet" || p.Clients != 4 || p.Alpha != 0.3 || p.MinSize != 10 || p.Participation != 1 {
			t.Errorf("%s: partition %+v", st.Name, p)
		}
		if c.Model.Arch != "mlp" || c.Model.Kind != "deterministic" || len(c.Model.Hidden) != 1 || c.Model.Hidden[0] != 16 {
			t.Errorf("%s: model %+v", st.Name, c.Model)
		}
		tr := c.Training
		if tr.Rounds != 2 || tr.LocalEpochs != 3 || tr.BatchSize != 16 || tr.Optimizer != "sgd" || tr.LearningRate != 0.05 || tr.Momentum != 0.9 {
			t.Errorf("%s: training %+v", st.Name, tr)
		}
		if c.Evaluation.Samples != 1 || len(c.Seeds) != 2 || c.Seeds[0] != 3 || c.Seeds[1] != 4 {
			t.Errorf("%s: evaluation samples %d, seeds %v", st.Name, c.Evaluation.Samples, c.Seeds)
		}
		sv := c.Aggregation.Server
		if m == predictive.RoundsFedAvg {
			if sv != nil {
				t.Errorf("%s: server options %+v on FedAvg", st.Name, sv)
			}
			continue
		}
		if sv == nil || sv.Samples != 4 || sv.Alpha != 2 || sv.Distill == nil || sv.Distill.Epochs != 6 || sv.Distill.BatchSize != 8 ||
			sv.Distill.SWACycles != 3 || sv.Distill.LearningRate != 0.01 || sv.Distill.Optimizer != "sgd" {
			t.Errorf("%s: server options %+v", st.Name, sv)
		}
	}
	// A rounds spec's invalid field is refused with its name; so is a method the engine has no rule for.
	rs.Alpha = -1
	if _, err := FromRounds(rs); err == nil || !strings.Contains(err.Error(), "alpha") {
		t.Errorf("alpha -1: %v", err)
	}
	rs.Alpha, rs.Methods = 0.3, []string{"fedavg", "bcm"}
	if _, err := FromRounds(rs); err == nil || !strings.Contains(err.Error(), "bcm") {
		t.Errorf("method bcm: %v", err)
	}
}

// TestChenPresets checks that every multi-round FedBE preset keeps its rounds spec's budget: data,
// clients, skew, rounds, epochs, MLP, M and seeds.
func TestChenPresets(t *testing.T) {
	for _, name := range ChenPresetNames() {
		rs, ok := ChenRounds(name)
		if !ok {
			t.Fatalf("%s: no rounds spec", name)
		}
		rs = rs.WithDefaults()
		s, settings := expandPreset(t, name)
		c := settings[1].Spec // fedbe-gaussian
		if s.Name != name || settings[1].Name != name+"-fedbe-gaussian" || c.Dataset.Subsample != rs.Subsample || c.Dataset.TestSubsample != rs.TestSubsample ||
			c.Partition.Clients != rs.Clients || c.Partition.Alpha != rs.Alpha || c.Training.Rounds != rs.Rounds ||
			c.Training.LocalEpochs != rs.Local.Epochs || c.Model.Hidden[0] != rs.Hidden[0] || c.Aggregation.Server.Samples != rs.FedBE.Samples ||
			len(c.Seeds) != len(rs.Seeds) || !strings.HasPrefix(c.Budget, strings.Fields(rs.Budget)[0]) {
			t.Errorf("%s: engine spec %+v differs from its rounds spec %+v", name, c, rs)
		}
	}
	if _, ok := ChenRounds("fedbe-nope"); ok {
		t.Error("ChenRounds accepted an unknown name")
	}
}

// TestIsOldRoundsRun tells the former runner's run.json from an engine run's.
func TestIsOldRoundsRun(t *testing.T) {
	for _, tc := range []struct {
		spec string
		old  bool
	}{
		{`{"spec": {"name": "fedbe", "dataset": "digits", "local": {}, "fedbe": {}}, "method": "fedbe-gaussian"}`, true},
		{`{"spec": {"name": "fedbe", "dataset": "digits", "local": {}, "fedbe": {}}, "method": "bcm"}`, false},
		{`{"name": "fedbe-digits-fast", "dataset": {"name": "digits"}, "training": {"rounds": 5}}`, false},
		{`{"spec": {"h": 0.5}, "method": "fedavg"}`, false},
		{`[]`, false},
	} {
		if got := isOldRoundsRun(results.Meta{Spec: []byte(tc.spec)}); got != tc.old {
			t.Errorf("%s: old %v, want %v", tc.spec, got, tc.old)
		}
	}
}

// TestRunRefusesOldRounds checks that Run (resuming or not) and CheckData refuse a results directory
// holding a run of the former multi-round runner, whatever the spec, with the reason and before
// anything is written; and that the same directory without it is accepted.
func TestRunRefusesOldRounds(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	old := map[string]any{"spec": map[string]any{"name": "fedbe-digits-fast", "dataset": "digits", "local": map[string]any{}, "fedbe": map[string]any{}},
		"method": "fedavg"}
	meta, err := results.NewMeta("fedbe-digits-fast-fedavg", map[string]string{"method": "fedavg"}, 1, old, runinfo.Collect("test"))
	if err != nil {
		t.Fatal(err)
	}
	oldDir := filepath.Join(dir, "fedbe-digits-fast-fedavg-seed1")
	w, err := results.Create(oldDir, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Complete(0); err != nil {
		t.Fatal(err)
	}
	list := func() []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	before := list()
	s := digitsSpec()
	s.Training.Rounds = 1
	const says = "former multi-round FedBE runner"
	for _, resume := range []bool{false, true} {
		_, err := Run(context.Background(), s, Options{Dir: dir, Resume: resume, Progress: progress.Discard, NoFigures: true})
		if err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), oldDir) {
			t.Errorf("Run (resume %v): error %v, want one naming %s and saying %q", resume, err, oldDir, says)
		}
	}
	if err := CheckData(s, dir); err == nil || !strings.Contains(err.Error(), says) {
		t.Errorf("CheckData: error %v, want one saying %q", err, says)
	}
	if after := list(); !slices.Equal(after, before) {
		t.Errorf("the results directory holds %v after the refusals, %v before", after, before)
	}
	if err := os.RemoveAll(oldDir); err != nil {
		t.Fatal(err)
	}
	if err := CheckData(s, dir); err != nil {
		t.Errorf("CheckData without the old run: %v", err)
	}
	if _, err := Run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard, NoFigures: true}); err != nil {
		t.Errorf("Run without the old run: %v", err)
	}
}
