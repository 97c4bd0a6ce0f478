package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestSharedFirstRoundOverRounds runs FedAvg and FedBE-Gaussian over 3 rounds on the same clients in
// one Run, where FedBE takes FedAvg's first round from the cache, and each alone, and checks that
// both give the same global model and metrics to the last digit either way: a round depends only on
// the spec, the seed and the global model it starts from (as resuming from a checkpoint relies on).
func TestSharedFirstRoundOverRounds(t *testing.T) {
	requireDigits(t)
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	base := func() *Spec {
		s := oneRoundDigitsSpec()
		s.Training.Rounds = 3
		s.Aggregation.Options = optionsJSON(strategy.FedBEOptions{Samples: 3})
		return s
	}
	variants := []Variant{
		{Label: "fedavg", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"FedAvg"`), "aggregation.options": raw(`null`)}},
		{Label: "fedbe", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"fedbe-gaussian"`),
			"aggregation.options.distill": raw(`{"epochs": 2, "batch_size": 32, "swa_cycles": 2}`)}},
	}
	result := func(dir string, r RunSummary) string {
		g := finalGlobal(t, filepath.Join(dir, results.RunName(r.Setting, r.Seed)))
		return fmt.Sprintf("%s %.17g %.17g", posteriorDigest(t, g), r.Metrics[results.Accuracy], r.Metrics[results.NLL])
	}
	s := base()
	s.Variants = variants
	dir := t.TempDir()
	shared := &localCache{}
	together, err := run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard}, shared)
	if err != nil {
		t.Fatal(err)
	}
	if shared.hits != 1 {
		t.Fatalf("FedBE reused %d first rounds, want FedAvg's one", shared.hits)
	}
	for i, v := range variants {
		alone := base()
		alone.Variants = []Variant{v}
		adir := t.TempDir()
		sum := runQuiet(t, alone, adir, false)
		if got, want := result(dir, together.Runs[i]), result(adir, sum.Runs[0]); got != want {
			t.Errorf("%s: %q in one Run with %s, %q alone", v.Label, got, variants[0].Label, want)
		}
	}
}

// progressEvent is one call a progressRecorder received.
type progressEvent struct {
	kind                         string // start, step, reused, update, done
	round, step, steps, examples int
	from                         string
}

// progressRecorder records every progress call of a Run, in order.
type progressRecorder struct{ events []progressEvent }

func (p *progressRecorder) Start(total int, label string) {
	p.events = append(p.events, progressEvent{kind: "start", steps: total, from: label})
}
func (p *progressRecorder) Update(round int, _ map[string]float64, _ progress.Timings) {
	p.events = append(p.events, progressEvent{kind: "update", round: round})
}
func (p *progressRecorder) Done(status string) {
	p.events = append(p.events, progressEvent{kind: "done", from: status})
}
func (p *progressRecorder) Step(round, step, steps, examples int) {
	p.events = append(p.events, progressEvent{kind: "step", round: round, step: step, steps: steps, examples: examples})
}

// reuseRecorder also shows reused rounds.
type reuseRecorder struct{ progressRecorder }

func (p *reuseRecorder) Reused(round, steps, examples int, from string) {
	p.events = append(p.events, progressEvent{kind: "reused", round: round, step: steps, steps: steps, examples: examples, from: from})
}

// TestSharedFirstRoundProgress runs two settings that share round 1 (GAA, then EAA on the same
// clients) and checks the progress each run reports: every round ends with its steps all done and
// every training example counted (600 examples, E = 1), the round taken from the cache included,
// which a progress.ReuseReporter is told came from the first run and a step-only reporter sees as
// its last step; then the round's Update, and Done after the last round.
func TestSharedFirstRoundProgress(t *testing.T) {
	requireDigits(t)
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	s := digitsSpec()
	s.Variants = []Variant{
		{Label: "gaa", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"GAA"`)}},
		{Label: "eaa", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"EAA"`)}},
	}
	first := results.RunName("digits-gaa", 3)
	for _, reuse := range []bool{true, false} {
		var rec *progressRecorder
		var rep progress.Reporter
		if reuse {
			r := &reuseRecorder{}
			rec, rep = &r.progressRecorder, r
		} else {
			rec = &progressRecorder{}
			rep = rec
		}
		if _, err := Run(context.Background(), s, Options{Dir: t.TempDir(), Progress: rep, NoFigures: true}); err != nil {
			t.Fatal(err)
		}
		// Split the events by run and check each run's sequence.
		var runs [][]progressEvent
		for _, e := range rec.events {
			if e.kind == "start" {
				runs = append(runs, nil)
			}
			if len(runs) == 0 {
				t.Fatalf("reuse %v: %s before any start", reuse, e.kind)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], e)
		}
		if len(runs) != 2 {
			t.Fatalf("reuse %v: %d runs reported, want 2", reuse, len(runs))
		}
		var trained progressEvent // the last step of the first run's round 1
		for i, evs := range runs {
			if evs[0].steps != s.Training.Rounds || evs[len(evs)-1].kind != "done" || evs[len(evs)-1].from != "completed" {
				t.Fatalf("reuse %v, run %d: starts %+v, ends %+v", reuse, i, evs[0], evs[len(evs)-1])
			}
			var last *progressEvent // the last step or reuse of the round in progress
			round := 1
			for _, e := range evs[1 : len(evs)-1] {
				switch e.kind {
				case "step", "reused":
					if e.round != round {
						t.Fatalf("reuse %v, run %d: %s of round %d during round %d", reuse, i, e.kind, e.round, round)
					}
					last = &e
				case "update":
					if last == nil || e.round != round || last.step != last.steps || last.steps == 0 || last.examples != 600 {
						t.Fatalf("reuse %v, run %d: round %d ends after %+v, want all its steps and 600 examples", reuse, i, round, last)
					}
					wantKind := "step"
					if i == 1 && round == 1 && reuse {
						wantKind = "reused"
					}
					if last.kind != wantKind {
						t.Errorf("reuse %v, run %d, round %d: ends with a %s, want a %s", reuse, i, round, last.kind, wantKind)
					}
					if i == 0 && round == 1 {
						trained = *last
					}
					if i == 1 && round == 1 && (last.steps != trained.steps || last.examples != trained.examples) {
						t.Errorf("reuse %v: the shared round reports %d steps, %d examples; the run that trained it %d, %d",
							reuse, last.steps, last.examples, trained.steps, trained.examples)
					}
					if last.kind == "reused" && last.from != first {
						t.Errorf("reused from %q, want %q", last.from, first)
					}
					round, last = round+1, nil
				}
			}
			if round != s.Training.Rounds+1 {
				t.Errorf("reuse %v, run %d: %d rounds updated, want %d", reuse, i, round-1, s.Training.Rounds)
			}
		}
	}
}

// TestSharedFirstRounds checks which runs of a Run call may share a first round: those with the same
// data, partition, model, local training and seed, whatever their strategy or number of rounds.
func TestSharedFirstRounds(t *testing.T) {
	with := func(change func(s *Spec)) *Spec {
		s := digitsSpec()
		change(s)
		return s
	}
	base := digitsSpec()
	tests := []struct {
		name string
		runs []runRef
		want []bool
	}{
		{"one run", []runRef{{Setting{Spec: base}, 3}}, []bool{false}},
		{"two seeds", []runRef{{Setting{Spec: base}, 3}, {Setting{Spec: base}, 4}}, []bool{false, false}},
		{"two strategies", []runRef{{Setting{Spec: base}, 3}, {Setting{Spec: with(func(s *Spec) { s.Aggregation.Rule = "EAA" })}, 3}}, []bool{true, true}},
		{"more rounds", []runRef{{Setting{Spec: base}, 3}, {Setting{Spec: with(func(s *Spec) { s.Training.Rounds = 5 })}, 3}}, []bool{true, true}},
		{"another learning rate", []runRef{{Setting{Spec: base}, 3}, {Setting{Spec: with(func(s *Spec) { s.Training.LearningRate = 0.05 })}, 3}}, []bool{false, false}},
		{"another model", []runRef{{Setting{Spec: base}, 3}, {Setting{Spec: with(func(s *Spec) { s.Model.Hidden = []int{8} })}, 3}}, []bool{false, false}},
		{"a pair and one apart", []runRef{
			{Setting{Spec: base}, 3},
			{Setting{Spec: with(func(s *Spec) { s.Partition.Alpha = 0.5 })}, 3},
			{Setting{Spec: with(func(s *Spec) { s.Aggregation.Rule = "EAA" })}, 3},
		}, []bool{true, false, true}},
	}
	for _, tc := range tests {
		got, err := sharedFirstRounds(tc.runs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: shared %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFirstRoundCacheKeepsOnlyShared runs Run calls through the cache and checks that it keeps the
// first round of the runs that another run shares (and gives it out again), and nothing of a Run
// whose runs all differ in their first round.
func TestFirstRoundCacheKeepsOnlyShared(t *testing.T) {
	requireDigits(t)
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	for _, tc := range []struct {
		name        string
		modify      func(s *Spec)
		items, hits int
	}{
		{"two seeds", func(s *Spec) { s.Seeds = []int64{3, 4} }, 0, 0},
		{"two learning rates", func(s *Spec) {
			s.Sweep = map[string][]json.RawMessage{"training.lr": {raw(`0.1`), raw(`0.05`)}}
		}, 0, 0},
		{"two strategies on the same clients and one apart", func(s *Spec) {
			s.Variants = []Variant{
				{Label: "gaa", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"GAA"`)}},
				{Label: "slow", Set: map[string]json.RawMessage{"training.lr": raw(`0.05`)}},
				{Label: "eaa", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"EAA"`)}},
			}
		}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := digitsSpec()
			s.Training.Rounds = 1
			tc.modify(s)
			shared := &localCache{}
			sum, err := run(context.Background(), s, Options{Dir: t.TempDir(), Progress: progress.Discard}, shared)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Runs) < 2 {
				t.Fatalf("%d runs, want at least 2", len(sum.Runs))
			}
			if len(shared.items) != tc.items || shared.hits != tc.hits || (tc.items == 0) != (shared.bytes == 0) {
				t.Errorf("the cache keeps %d outcomes (%d bytes) and gave out %d, want %d kept and %d given out",
					len(shared.items), shared.bytes, shared.hits, tc.items, tc.hits)
			}
		})
	}
}

// TestDigestBits checks the first-round cache's digest of a small posterior against the hex pinned from
// the byte-by-byte hashing it replaced (the same keys), that one flipped bit or a reshape changes it,
// and that a parameter that is not float32 is an error naming it.
func TestDigestBits(t *testing.T) {
	post := func(mean0 float32, dims ...int) *posterior.Posterior {
		return &posterior.Posterior{Params: []posterior.Param{
			{Name: "/a/weights", Mean: tensors.FromFlatDataAndDimensions([]float32{mean0, -2, 0, 3.25, 1e-7, -0.0}, dims...),
				LogVar: tensors.FromFlatDataAndDimensions([]float32{-5, -6, -7, -8, -9, -10}, dims...)},
			{Name: "/b/bias", Mean: tensors.FromFlatDataAndDimensions([]float32{0.125, 7}, 2)},
		}}
	}
	const pinned = "715b923a3a5a0c3f2f4d416be60e25c8bd1382942e52ba9149afb476c24d9667"
	next := math.Nextafter32(1.5, 2)
	for _, tc := range []struct {
		name string
		p    *posterior.Posterior
		same bool
	}{
		{"pinned", post(1.5, 2, 3), true},
		{"one bit", post(next, 2, 3), false},
		{"reshaped", post(1.5, 3, 2), false},
	} {
		got, err := digest(tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (got == pinned) != tc.same {
			t.Errorf("%s: digest %s, pinned %s, want same %v", tc.name, got, pinned, tc.same)
		}
	}
	bad := &posterior.Posterior{Params: []posterior.Param{{Name: "/c/weights", Mean: tensors.FromFlatDataAndDimensions([]float64{1, 2}, 2)}}}
	if _, err := digest(bad); err == nil || !strings.Contains(err.Error(), "/c/weights") {
		t.Errorf("a float64 parameter: error %v, want one naming /c/weights", err)
	}
}
