package predictive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/results"
)

// tinyRounds is a seconds-long multi-round spec on digits.
func tinyRounds(t *testing.T) RoundsSpec {
	t.Helper()
	spec, err := RoundsPreset("fedbe-digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	spec.Rounds, spec.Seeds, spec.Clients = 2, []int64{3}, 4
	spec.Methods = []string{RoundsFedAvg, RoundsFedBEGaussian}
	spec.Local.Epochs, spec.FedBE.Distill.Epochs, spec.FedBE.Samples = 2, 2, 2
	return spec
}

// TestRunRounds runs FedAvg and FedBE for two rounds and checks the runs, the skip of complete runs,
// the restart of an incomplete one, determinism and the refusal of a changed spec.
func TestRunRounds(t *testing.T) {
	requireSklearn(t)
	spec := tinyRounds(t)
	dir := t.TempDir()
	var log strings.Builder
	if err := RunRounds(context.Background(), spec, dir, &log); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]results.Row{}
	for _, m := range spec.Methods {
		r, err := results.ReadRun(filepath.Join(dir, results.RunName("fedbe-digits-fast-"+m, 3)))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.State != results.Completed || len(r.Rows) != 2 || r.Meta.Labels["method"] != m || r.Meta.Labels["dataset"] != "digits" {
			t.Fatalf("%s: status %+v, %d rows, labels %v", m, r.Status, len(r.Rows), r.Meta.Labels)
		}
		for _, row := range r.Rows {
			a, n, e := row.Metrics[results.Accuracy], row.Metrics[results.NLL], row.Metrics[results.ECE]
			if !(a > 0.3 && a <= 1) || !(n > 0 && n < 3) || !(e >= 0 && e <= 1) || !(row.Time.LocalSeconds > 0) || len(row.Clients) != 4 {
				t.Errorf("%s round %d: metrics %v, time %+v", m, row.Round, row.Metrics, row.Time)
			}
		}
		rows[m] = r.Rows
	}
	if !strings.Contains(log.String(), "fedbe-gaussian seed 3 round 2/2") {
		t.Errorf("progress log:\n%s", log.String())
	}

	// A second run keeps the complete runs.
	log.Reset()
	if err := RunRounds(context.Background(), spec, dir, &log); err != nil || strings.Count(log.String(), "already complete") != 2 {
		t.Errorf("rerun: %v\n%s", err, log.String())
	}

	// An interrupted run starts again, and gives the same numbers (same seed, same result).
	fedavgDir := filepath.Join(dir, results.RunName("fedbe-digits-fast-"+RoundsFedAvg, 3))
	if err := os.Remove(filepath.Join(fedavgDir, results.StatusFile)); err != nil {
		t.Fatal(err)
	}
	if err := RunRounds(context.Background(), spec, dir, nil); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadRun(fedavgDir)
	if err != nil || r.Status.State != results.Completed {
		t.Fatalf("restarted run: %+v, %v", r.Status, err)
	}
	for i, row := range r.Rows {
		if row.Metrics[results.Accuracy] != rows[RoundsFedAvg][i].Metrics[results.Accuracy] || row.Metrics[results.NLL] != rows[RoundsFedAvg][i].Metrics[results.NLL] {
			t.Errorf("round %d: rerun metrics %v, first run %v", row.Round, row.Metrics, rows[RoundsFedAvg][i].Metrics)
		}
	}

	// The same directory with another spec is refused, naming the run.
	changed := spec
	changed.Local.LearningRate = 0.01
	if err := RunRounds(context.Background(), changed, dir, nil); err == nil || !strings.Contains(err.Error(), "different spec") {
		t.Errorf("changed spec: %v", err)
	}
}

// TestFedAvgMatchesRunRounds checks that the exported FedAvg loop gives the global models that
// RunRounds scores: same initial model, clients and batch order.
func TestFedAvgMatchesRunRounds(t *testing.T) {
	requireSklearn(t)
	spec := tinyRounds(t).WithDefaults()
	spec.Methods = []string{RoundsFedAvg}
	dir := t.TempDir()
	if err := RunRounds(context.Background(), spec, dir, nil); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadRun(filepath.Join(dir, results.RunName("fedbe-digits-fast-"+RoundsFedAvg, 3)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFederation(spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	lc := spec.Local
	lc.Seed = 3
	var accs []float64
	_, err = FedAvg(f.Config, f.Clients, lc, spec.Rounds, func(_ int, g *posterior.Posterior) error {
		res, err := evaluateGlobal(f.Config, g, f.Test)
		accs = append(accs, res.Accuracy)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range r.Rows {
		if row.Metrics[results.Accuracy] != accs[i] {
			t.Errorf("round %d: FedAvg %v, RunRounds %v", i+1, accs[i], row.Metrics[results.Accuracy])
		}
	}
}

// TestRoundsSpecValidate names the offending field of each bad spec.
func TestRoundsSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*RoundsSpec)
	}{
		{"dataset", func(s *RoundsSpec) { s.Dataset = "" }},
		{"dataset", func(s *RoundsSpec) { s.Dataset = "diabetes" }},
		{"server_fraction", func(s *RoundsSpec) { s.ServerFraction = 1.5 }},
		{"clients", func(s *RoundsSpec) { s.Clients = 1 }},
		{"alpha", func(s *RoundsSpec) { s.Alpha = -1 }},
		{"rounds", func(s *RoundsSpec) { s.Rounds = -2 }},
		{"local", func(s *RoundsSpec) { s.Local.LearningRate = -0.1 }},
		{"fedbe.samples", func(s *RoundsSpec) { s.FedBE.Samples = -1 }},
		{"hidden[0]", func(s *RoundsSpec) { s.Hidden = []int{0} }},
		{"methods", func(s *RoundsSpec) { s.Methods = []string{"fedprox"} }},
		{"methods", func(s *RoundsSpec) { s.Methods = []string{RoundsFedAvg, RoundsFedAvg} }},
	} {
		s := RoundsSpec{Setup: Setup{Dataset: "digits"}}
		tc.edit(&s)
		err := s.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), "field "+tc.field+" ") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	for _, name := range RoundsPresetNames() {
		s, err := RoundsPreset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.WithDefaults().Validate(); err != nil || s.Name != name || s.Budget == "" {
			t.Errorf("preset %s: %v (name %q, budget %q)", name, err, s.Name, s.Budget)
		}
	}
	if _, err := ParseRoundsSpec([]byte(`{"dataset":"digits","round":3}`)); err == nil || !strings.Contains(err.Error(), "round") {
		t.Errorf("unknown field: %v", err)
	}
}

// cancelOnWrite cancels a context at the first progress line it receives.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) { c.cancel(); return len(p), nil }

// TestRunRoundsCancel stops a run after its first round and checks that the next call starts it again
// and completes it.
func TestRunRoundsCancel(t *testing.T) {
	requireSklearn(t)
	spec := tinyRounds(t)
	spec.Methods = []string{RoundsFedAvg}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	err := RunRounds(ctx, spec, dir, cancelOnWrite{cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	rd := filepath.Join(dir, results.RunName("fedbe-digits-fast-"+RoundsFedAvg, 3))
	if r, err := results.ReadRun(rd); err != nil || r.Status.State != results.Failed || len(r.Rows) != 1 {
		t.Fatalf("after cancel: %+v, %d rows, %v; want failed after 1 round", r.Status, len(r.Rows), err)
	}
	if err := RunRounds(context.Background(), spec, dir, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := results.ReadRun(rd); err != nil || r.Status.State != results.Completed || len(r.Rows) != 2 {
		t.Errorf("rerun: %+v, %d rows, %v", r.Status, len(r.Rows), err)
	}
}

// TestDescribeBudget checks that the budget recorded is computed from the spec that runs: a preset
// with its rounds, seeds and data overridden says so, whatever its label.
func TestDescribeBudget(t *testing.T) {
	s, err := Preset("fmnist-fast")
	if err != nil {
		t.Fatal(err)
	}
	s.Seeds, s.Subsample, s.H = []int64{7}, 500, []float64{0.3}
	got := s.DescribeBudget()
	for _, want := range []string{"fashion-mnist: ≤500 training / ≤2,000 test examples", "h = 0.3", "1 seed,", "10 local epochs"} {
		if !strings.Contains(got, want) {
			t.Errorf("DescribeBudget = %q, want it to contain %q", got, want)
		}
	}
	r, err := RoundsPreset("fedbe-digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	r.Rounds, r.Seeds = 2, []int64{1, 2, 3}
	if got := r.DescribeBudget(); !strings.Contains(got, "T=2 rounds") || !strings.Contains(got, "3 seeds") || strings.Contains(got, "reduced") {
		t.Errorf("RoundsSpec.DescribeBudget = %q", got)
	}
}
