package engine

import (
	"context"

	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/report"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/results"
)

func TestBudgetString(t *testing.T) {
	s := digitsSpec() // 600 / 300 examples, 4 clients, T=2, E=1, 1 seed
	for _, tc := range []struct {
		name        string
		edit        func(*Spec)
		train, test int
		want, short string
	}{
		{"subsample", nil, 1797, 1797, "digits: 600 training / 300 test examples, 4 clients, T=2 rounds, E=1 local epoch, 1 seed",
			"T=2, E=1, 1 seed, 600 / 300 examples"},
		{"subsample above the data", nil, 500, 200, "digits: 500 training / 200 test examples, 4 clients, T=2 rounds, E=1 local epoch, 1 seed", ""},
		{"all", func(s *Spec) { s.Dataset.Subsample, s.Dataset.TestSubsample = 0, 0 }, 60000, 10000,
			"digits: 60,000 training / 10,000 test examples, 4 clients, T=2 rounds, E=1 local epoch, 1 seed", ""},
		{"unreadable data", func(s *Spec) { s.Dataset.TestSubsample = 0 }, -1, -1,
			"digits: at most 600 training / all test examples, 4 clients, T=2 rounds, E=1 local epoch, 1 seed",
			"T=2, E=1, 1 seed, ≤600 / all examples"},
		{"defaults", func(s *Spec) { s.Training.Rounds, s.Training.LocalEpochs, s.Seeds = 0, 3, []int64{1, 2} }, 1000, 1000,
			"digits: 600 training / 300 test examples, 4 clients, T=10 rounds, E=3 local epochs, 2 seeds", ""},
	} {
		c := s.Clone()
		if tc.edit != nil {
			tc.edit(c)
		}
		b := BudgetOf(c, tc.train, tc.test)
		if got := b.String(); got != tc.want {
			t.Errorf("%s: String() = %q, want %q", tc.name, got, tc.want)
		}
		if tc.short != "" && b.Short() != tc.short {
			t.Errorf("%s: Short() = %q, want %q", tc.name, b.Short(), tc.short)
		}
	}
}

// A spec whose stated budget ("full") is overridden records what ran: the budget in run.json, in
// the summary and in the figures' title is computed from the spec run.
func TestRunRecordsBudgetRun(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Budget = "full"
	s.Training.Rounds = 1
	s.Dataset.Subsample, s.Dataset.TestSubsample = 500, 200
	s.Seeds = []int64{3, 4}
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	want := "digits: 500 training / 200 test examples, 4 clients, T=1 round, E=1 local epoch, 2 seeds"
	if sum.Budget != want {
		t.Errorf("summary budget %q, want %q", sum.Budget, want)
	}
	runs, _, err := results.Load(dir)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs: %d, %v", len(runs), err)
	}
	for _, r := range runs {
		if got := r.Meta.Budget(); got != want {
			t.Errorf("%s: run.json budget %q, want %q", r.Dir, got, want)
		}
	}
	fs, err := plots.ReadSpecFile(filepath.Join(dir, FiguresFile))
	if err != nil {
		t.Fatal(err)
	}
	var curves plots.Curves
	if err := json.Unmarshal(fs.Figures[0].Data, &curves); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(curves.Title, "T=1, E=1, 2 seeds, 500 / 200 examples") || strings.Contains(curves.Title, "full") {
		t.Errorf("figure title %q", curves.Title)
	}
	tab, err := report.NewTable(runs, report.TableSpec{})
	if err == nil && !strings.Contains(tab.Note(), want) {
		t.Errorf("table note %q does not state %q", tab.Note(), want)
	}
}

// stepRecorder records the steps the engine reports within each round.
type stepRecorder struct {
	progress.Reporter
	last map[int][3]int // round -> step, steps, examples of the last call
}

func (s *stepRecorder) Step(round, step, steps, examples int) {
	s.last[round] = [3]int{step, steps, examples}
}

// Both training paths report every step of a round and, at the end, every training example of
// every active client, once per local epoch.
func TestRunReportsSteps(t *testing.T) {
	requireDigits(t)
	for _, mode := range []string{"vectorized", "sequential"} {
		s := digitsSpec()
		s.Training.Rounds, s.Training.LocalEpochs, s.Training.Mode = 2, 2, mode
		rec := &stepRecorder{Reporter: progress.Discard, last: map[int][3]int{}}
		if _, err := Run(context.Background(), s, Options{Dir: t.TempDir(), Progress: rec, NoFigures: true}); err != nil {
			t.Fatal(err)
		}
		for round := 1; round <= 2; round++ {
			got := rec.last[round]
			if got[0] == 0 || got[0] != got[1] || got[2] != 2*600 {
				t.Errorf("%s round %d: last step %v, want step == steps and 1200 examples (600 x E=2)", mode, round, got)
			}
		}
	}
}
