package main

import (
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

// TestStatusFlagsFrozenVariances: fedbayes run (in its summary) and fedbayes status name the runs whose variances did not learn
// (issue 33), in words, and leaves deterministic runs unflagged. The Bayesian MLP starts at
// log sigma^2 = -10 with SGD, where its variances move by about 0.002 a round (docs/models.md).
func TestStatusFlagsFrozenVariances(t *testing.T) {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "frozen.json")
	if err := os.WriteFile(spec, []byte(`{
  "name": "frozen",
  "dataset": {"name": "digits", "subsample": 300, "test_subsample": 100},
  "partition": {"method": "iid", "clients": 2},
  "model": {"arch": "mlp", "kind": "bayesian", "hidden": [8], "init_logvar": -10},
  "aggregation": {"rule": "EAA", "weighting": "size"},
  "training": {"rounds": 2, "local_epochs": 1, "batch_size": 32, "optimizer": "sgd", "lr": 0.01},
  "evaluation": {"samples": 2},
  "seeds": [1],
  "variants": [
    {"label": "bayes", "set": {"aggregation": {"rule": "EAA", "weighting": "size"}}},
    {"label": "det", "set": {"model": {"arch": "mlp", "kind": "deterministic", "hidden": [8]}, "aggregation": {"rule": "FedAvg", "weighting": "size"}, "evaluation.samples": 1}}
  ]
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "res")
	runCommandCases(t, []commandCase{
		{"run", []string{"run", "-no-figures", "-o", out, spec}, 0, "for example frozen-bayes-seed1: the variances stayed at their initial value", ""},
		{"status -v", []string{"status", out, spec, "-v"}, 0, "1 of 1 variational runs did not learn their variances", ""},
		{"status -v lists the run", []string{"status", out, spec, "-v"}, 0, "frozen-bayes-seed1: FROZEN: the variances stayed at their initial value: rules differ here only by their own arithmetic on that shared value", ""},
		{"status", []string{"status", out, spec}, 0, "for example frozen-bayes-seed1: the variances stayed at their initial value", ""},
	})
}
