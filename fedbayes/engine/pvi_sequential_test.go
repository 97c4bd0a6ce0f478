package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// TestPVISequentialLinear runs PVI's sequential schedule (its default damping 1, training.mode
// sequential) for 40 rounds on linearSpec's Bayesian linear regression and checks that it ends within
// TestPVILinearFixedPoint's tolerances of the lab's fixed point, centralised mean-field VI, and that
// the schedule under vectorised training (the round's clients trained together) is refused with
// training.mode named instead of run as the parallel one.
func TestPVISequentialLinear(t *testing.T) {
	requireSklearn(t, "boston", "boston_house_prices.csv")
	s := linearSpec(40)
	if c := s.WithDefaults(); c.Model.Hidden == nil || len(c.Model.Hidden) != 0 {
		t.Fatalf("model.hidden [] reads as %v after the spec's defaults: a linear model must stay linear", c.Model.Hidden)
	}
	s.Aggregation.Options = json.RawMessage(`{"schedule": "sequential"}`)
	s.Training.Mode = "sequential"
	dir := t.TempDir()
	sum, err := Run(context.Background(), s, Options{Dir: dir, Progress: progress.Discard})
	if err != nil {
		t.Fatal(err)
	}
	r := sum.Runs[0]
	if r.State != results.Completed {
		t.Fatalf("%s: %s (%s)", r.Setting, r.State, r.Reason)
	}
	q := linearGlobal(t, finalGlobal(t, filepath.Join(dir, results.RunName(r.Setting, r.Seed))))
	clients, prior := linearData(t, s)
	vi, sd := viFixedPoint(t, clients, prior, q)
	m, lv := linearDistance(q, vi, sd)
	t.Logf("sequential PVI after 40 rounds (damping 1): %.3f exact sds (rms), %.3f in log-variance (max) from centralised mean-field VI", m, lv)
	if m > linearMeanTol || lv > linearLogVarTol {
		t.Errorf("sequential PVI ends %.3f sds and %.3f in log-variance from the fixed point, want within %v and %v", m, lv, linearMeanTol, linearLogVarTol)
	}
	bad := linearSpec(2)
	bad.Aggregation.Options = json.RawMessage(`{"schedule": "sequential"}`)
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "training.mode") {
		t.Errorf("the sequential schedule with vectorised training: %v, want an error naming training.mode", err)
	}
}
