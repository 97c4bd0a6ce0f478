package engine

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// nanServer is a strategy whose server step goes wrong as its option "fail" says: "load" fails the
// way a distillation at a huge step size does (loading its NaN student into a model: a
// *posterior.NonFiniteError from Validate), "rule" is an element-wise rule that gives NaN, "nan"
// returns NaN parameters, and "" is the clients' mean.
type nanServer struct{ fail string }

func (n nanServer) Aggregate(r *strategy.Round) (*strategy.Global, error) {
	value := 0.0
	if n.fail != "" {
		value = math.NaN()
	}
	g, err := strategy.PerElement(r, func(means, lv []float64) (float64, float64) {
		if n.fail == "rule" {
			return value, lv[0]
		}
		return means[0], lv[0]
	})
	if err != nil || n.fail == "" || n.fail == "rule" {
		return &strategy.Global{Posterior: g}, err
	}
	bad := &posterior.Posterior{}
	for _, q := range g.Params {
		flat := make([]float32, q.Mean.Shape().Size())
		for i := range flat {
			flat[i] = float32(value)
		}
		bad.Params = append(bad.Params, posterior.Param{Name: q.Name, Mean: tensors.FromFlatDataAndDimensions(flat, q.Mean.Shape().Dimensions...), LogVar: q.LogVar})
	}
	if n.fail == "load" {
		if err := bad.Validate(); err != nil {
			return nil, err
		}
	}
	return &strategy.Global{Posterior: bad}, nil
}

// TestServerStepNaNDiverges checks that a server step that produces NaN, whether it returns NaN
// parameters or fails on them, marks its run diverged with the reason and the sweep goes on: of
// four settings three diverge at round 1 and the fourth completes; the summary counts three.
func TestServerStepNaNDiverges(t *testing.T) {
	requireDigits(t)
	if err := strategy.Register("nan-server", func(s strategy.Settings) (strategy.Strategy, error) {
		o := struct {
			Fail string `json:"fail"`
		}{}
		err := strategy.DecodeOptions(s, &o)
		return nanServer{o.Fail}, err
	}); err != nil {
		t.Fatal(err)
	}
	s := digitsSpec()
	s.Aggregation.Rule = "nan-server"
	s.Training.Rounds = 2
	for _, f := range []string{"load", "rule", "nan", ""} {
		s.Variants = append(s.Variants, Variant{Label: "fail-" + f, Set: map[string]json.RawMessage{"aggregation.options.fail": raw(f)}})
	}
	dir := t.TempDir()
	sum, err := Run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard, NoFigures: true})
	if err != nil {
		t.Fatalf("the sweep stopped: %v", err)
	}
	want := []struct {
		state  results.State
		reason string
	}{
		{results.Diverged, `server step (nan-server): posterior: parameter "`},
		{results.Diverged, "server step (nan-server): strategy: the rule gave NaN: posterior: parameter"},
		{results.Diverged, "global model: parameter"},
		{results.Completed, ""},
	}
	if len(sum.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(sum.Runs), len(want))
	}
	for i, r := range sum.Runs {
		if r.State != want[i].state || !strings.Contains(r.Reason, want[i].reason) || (r.State == results.Diverged && r.Round != 1) {
			t.Errorf("%s: %s at round %d (%q), want %s with %q", r.Setting, r.State, r.Round, r.Reason, want[i].state, want[i].reason)
		}
		run, err := results.ReadRun(filepath.Join(dir, results.RunName(r.Setting, r.Seed)))
		if err != nil || run.Status.State != want[i].state {
			t.Errorf("%s recorded %+v, %v; want %s", r.Setting, run.Status, err, want[i].state)
		}
	}
	if sum.Diverged() != 3 {
		t.Errorf("the summary counts %d diverged, want 3", sum.Diverged())
	}
}

// TestFedBEDistillationNaNDiverges checks the real case: FedBE's distillation at a step size of
// 1e30 makes its student NaN, which marks that run diverged at round 1 with the server step's
// reason, and the sweep goes on to the setting at 0.01, which completes.
func TestFedBEDistillationNaNDiverges(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Model.Kind = "deterministic"
	s.Aggregation = AggregationSpec{Rule: strategy.FedBEGaussian, Options: json.RawMessage(`{"samples": 2, "distill": {"epochs": 4}}`)}
	for _, lr := range []string{"1e30", "0.01"} {
		s.Variants = append(s.Variants, Variant{Label: "lr-" + lr, Set: map[string]json.RawMessage{"aggregation.options.distill.learning_rate": json.RawMessage(lr)}})
	}
	sum, err := Run(context.Background(), s, Options{Dir: t.TempDir(), Progress: progress.Discard, NoFigures: true})
	if err != nil {
		t.Fatalf("the sweep stopped: %v", err)
	}
	if len(sum.Runs) != 2 || sum.Diverged() != 1 {
		t.Fatalf("runs %+v; want 2, one diverged", sum.Runs)
	}
	if r := sum.Runs[0]; r.State != results.Diverged || r.Round != 1 || !strings.Contains(r.Reason, "server step (fedbe-gaussian): ") || !strings.Contains(r.Reason, "is NaN") {
		t.Errorf("lr 1e30: %s at round %d (%s)", r.State, r.Round, r.Reason)
	}
	if r := sum.Runs[1]; r.State != results.Completed {
		t.Errorf("lr 0.01: %s (%s)", r.State, r.Reason)
	}
}
