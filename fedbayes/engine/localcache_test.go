package engine

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/results"
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
		s.Aggregation.Server = &ServerSpec{Samples: 3, Distill: nil}
		return s
	}
	variants := []Variant{
		{Label: "fedavg", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"FedAvg"`), "aggregation.server": raw(`null`)}},
		{Label: "fedbe", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"fedbe-gaussian"`),
			"aggregation.server.distill": raw(`{"epochs": 2, "batch_size": 32, "swa_cycles": 2}`)}},
	}
	result := func(dir string, r RunSummary) string {
		g := finalGlobal(t, filepath.Join(dir, results.RunName(r.Setting, r.Seed)))
		return fmt.Sprintf("%s %.17g %.17g", posteriorDigest(t, g), r.Metrics[results.Accuracy], r.Metrics[results.NLL])
	}
	s := base()
	s.Variants = variants
	dir := t.TempDir()
	var shared *localCache
	newLocalCache = func() *localCache { shared = &localCache{}; return shared }
	defer func() { newLocalCache = func() *localCache { return &localCache{} } }()
	together := runQuiet(t, s, dir, false)
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
