package cluster

import (
	"context"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// TestCheckRefusesRunsReadersRefuse writes, under the names of a sweep's runs, finished runs that
// `fedbayes run --resume` and `fedbayes table` refuse, and checks that status and submit do not call
// them done (issue 36: they read status.json alone): another spec's run, a completed run whose rows
// stop before its last round, and a diverged run of another spec. Each is Refused with the reason
// and the remedy, counted in the summary, and not resubmitted (its task would refuse it again).
func TestCheckRefusesRunsReadersRefuse(t *testing.T) {
	spec := sweep(t, 5)
	refs, err := engine.RunList(spec)
	if err != nil {
		t.Fatal(err)
	}
	other := sweep(t, 5)
	other.Training.Rounds = spec.WithDefaults().Training.Rounds + 2
	dir := t.TempDir()
	rounds, ok := engine.ExpectedRounds(metaOf(t, spec, refs[0]))
	if !ok || len(rounds) < 2 {
		t.Fatalf("the sweep evaluates rounds %v; the test needs two", rounds)
	}
	writeState(t, dir, spec, refs[0], results.Completed)
	writeState(t, dir, other, refs[1], results.Completed)                                           // another spec's run, same name
	writeRows(t, dir, refs[2], metaOf(t, spec, refs[2]), rounds[:len(rounds)-1], results.Completed) // rows stop early
	writeState(t, dir, other, refs[3], results.Diverged)                                            // another spec's divergence
	writeState(t, dir, spec, refs[4], results.Diverged)
	rep, err := Check(dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		state  State
		detail string
	}{
		{Done, "completed"},
		{Refused, refs[1].Name + ": holds a run of another experiment (the specs differ: training.rounds"},
		{Refused, refs[2].Name + ": rounds.jsonl ends at round"},
		{Refused, refs[3].Name + ": holds a run of another experiment"},
		{Diverged, "NaN loss"},
	}
	for i, w := range want {
		got := rep.Runs[i]
		if got.State != w.state || !strings.Contains(got.Detail, w.detail) {
			t.Errorf("run %s: %s (%s), want %s with %q", got.Run.Name, got.State, got.Detail, w.state, w.detail)
		}
		if got.State == Refused && !strings.HasSuffix(got.Detail, "remove it to run it again") {
			t.Errorf("run %s: detail %q does not say what to do", got.Run.Name, got.Detail)
		}
	}
	if !strings.Contains(rep.Runs[2].Detail, "rows are missing") {
		t.Errorf("torn run: %q", rep.Runs[2].Detail)
	}
	if !strings.Contains(rep.Summary(), "1 done") || !strings.Contains(rep.Summary(), "3 refused") {
		t.Errorf("summary %q", rep.Summary())
	}
	if len(rep.ToSubmit()) != 0 {
		t.Errorf("resubmits %v", rep.ToSubmit())
	}
	sub, err := Submit(context.Background(), Options{Spec: spec, SpecName: "test", Dir: dir, Binary: executable(t), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Before.Count(Done) != 1 || sub.Before.Count(Refused) != 3 {
		t.Errorf("submit sees %s", sub.Before.Summary())
	}
}
