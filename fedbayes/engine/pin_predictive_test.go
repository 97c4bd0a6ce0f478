package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/strategy"
)

// oneRoundDigitsSpec is a one-round digits run on a deterministic MLP with a server set: the setting
// of Hasan's (2023) one-round presets at a test's budget.
func oneRoundDigitsSpec() *Spec {
	s := digitsSpec()
	s.Dataset.ServerFraction = 0.2
	s.Model.Kind, s.Model.Hidden = "deterministic", []int{16}
	s.Training.Rounds = 1
	return s
}

// withSampler makes the clients of s sample (cSGHMC, Hasan (2023), Sec. 3.3.4) at a test's budget.
func withSampler(s *Spec) {
	s.Training.Sampler = &predictive.SamplerConfig{Epochs: 4, Cycles: 2, SamplesPerCycle: 2, LearningRate: 0.1, BatchSize: 32}
}

// pinnedPredictiveRuns are small runs of the strategies that came into the engine with the former
// predictive and FedBE runners (now presets: fedbayes/presets, hasan.go and chen.go): one-round sampling clients
// with the BCM, beta-PredBayes and FedPA, the one-round baselines OneshotFL and FedKT, FedBE-Gaussian
// over two rounds, and regression on the diabetes set with FedAvg and the Gaussian BCM. Their final
// global model and metrics were pinned at commit 1158c0d, the first after the move, so that a later
// change (a cache of compiled programs, a refactoring) cannot move their numbers silently.
var pinnedPredictiveRuns = []struct {
	name string
	base func() *Spec
	// modify changes base into the pinned run.
	modify func(s *Spec)
	// metrics are the metrics pinned after the digest.
	metrics []string
	// blas, haswell and plain are the expected "digest metric..." on OpenBLAS's AVX-512 kernels, on
	// its Haswell kernels and on SimpleGo's own (pinnedValue).
	blas, haswell, plain string
}{
	{"bcm sampling", oneRoundDigitsSpec, func(s *Spec) { withSampler(s); s.Aggregation.Rule = "bcm" },
		[]string{results.Accuracy, results.NLL},
		"bac78a5a3c3e065b 0.70333333333333337 1.0454734628802649", "0a66e9cf74df8fc6 0.70333333333333337 1.0454735161738167", "a182ca9903edc4cd 0.70333333333333337 1.0454735334323328"},
	{"beta-predbayes sampling", oneRoundDigitsSpec, func(s *Spec) { withSampler(s); s.Aggregation.Rule = "beta-predbayes" },
		[]string{results.Accuracy, results.NLL},
		"bac78a5a3c3e065b 0.71666666666666667 0.98890863700835396", "0a66e9cf74df8fc6 0.71666666666666667 0.98890865574806919", "a182ca9903edc4cd 0.71666666666666667 0.9889086588134175"},
	{"fedpa sampling", oneRoundDigitsSpec, func(s *Spec) {
		withSampler(s)
		s.Aggregation.Rule, s.Aggregation.Options = "fedpa", optionsJSON(strategy.FedPAOptions{ServerLR: 0.5})
	}, []string{results.Accuracy, results.NLL},
		"e1f20d04459129b9 0.30333333333333334 1.9680583253176906", "9e43ca22b4d734e6 0.30333333333333334 1.9680583178726947", "a17a3729fe9e900a 0.30333333333333334 1.9680583036503385"},
	{"oneshotfl", oneRoundDigitsSpec, func(s *Spec) {
		s.Aggregation.Rule, s.Training.LocalEpochs = "oneshotfl", 3
		s.Aggregation.Options = optionsJSON(strategy.OneshotFLOptions{Distill: predictive.DistillConfig{Epochs: 6, BatchSize: 32, LearningRate: 5e-3}})
	}, []string{results.Accuracy, results.NLL},
		"af555fab59963239 0.23333333333333334 2.2149710386444585", "b5e4c6c73c807bfb 0.23333333333333334 2.214971037760745", "6f00089539b06933 0.23333333333333334 2.2149710396498667"},
	{"fedkt", oneRoundDigitsSpec, func(s *Spec) {
		s.Aggregation.Rule, s.Training.LocalEpochs = "fedkt", 3
		s.Aggregation.Options = optionsJSON(strategy.FedKTOptions{Distill: predictive.DistillConfig{Epochs: 6, BatchSize: 32, LearningRate: 5e-3},
			Students: 2, Teachers: 2})
	}, []string{results.Accuracy, results.NLL},
		"766b5e673849de6e 0.11 3.4050873647406465", "97eecf6ae13d7d62 0.11 3.4050873312475476", "1c15c8dc477c30c2 0.11 3.4050873329963181"},
	{"fedbe-gaussian 2 rounds", oneRoundDigitsSpec, func(s *Spec) {
		s.Training.Rounds = 2
		s.Aggregation.Rule = "fedbe-gaussian"
		s.Aggregation.Options = optionsJSON(strategy.FedBEOptions{Samples: 3, Distill: predictive.DistillConfig{Epochs: 2, BatchSize: 32, SWACycles: 2}})
	}, []string{results.Accuracy, results.NLL},
		"df630a6a19ad8730 0.39333333333333331 1.818217727923457", "134f486fc9b00612 0.39333333333333331 1.8182177369888726", "75512b24c6d4a97e 0.39333333333333331 1.8182177400960962"},
	{"diabetes fedavg", diabetesSpec, func(s *Spec) {}, []string{results.MSE, results.NLL},
		"51412de9f6bbf58c 0.68441677838481818 1.3006941688752913", "78a4af93806fcc41 0.68441676722048672 1.3006941330333159", "c18ee1f235d46b6e 0.68441677400574219 1.3006941411295465"},
	{"diabetes bcm", diabetesSpec, func(s *Spec) {
		s.Aggregation.Rule = "bcm"
		s.Training.Sampler = &predictive.SamplerConfig{Epochs: 10, Cycles: 2, SamplesPerCycle: 2, BatchSize: 16, LearningRate: 0.02}
	}, []string{results.MSE, results.NLL},
		"5a45ff8ecc7010fa 0.82928844055647677 1.5204588348220893", "0acf46e48645f063 0.82928845801568485 1.5204589202906162", "7568853fb66605e4 0.82928850045659674 1.5204589283834942"},
}

// TestPinnedPredictiveRuns checks that the pinned runs of the migrated strategies give the same global
// model and metrics, to the last digit, as at the commit that moved them into the engine: each run on
// its own, and then all in one sweep, where the runs with the same clients share their first round's
// local training (localCache) and must still give their pinned numbers.
func TestPinnedPredictiveRuns(t *testing.T) {
	requireDigits(t)
	requireDiabetes(t)
	outcomes := &localCache{}
	for _, shared := range []bool{false, true} {
		for _, tc := range pinnedPredictiveRuns {
			t.Run(fmt.Sprintf("%s shared %v", tc.name, shared), func(t *testing.T) {
				s := tc.base()
				tc.modify(s)
				cache := (*localCache)(nil)
				if shared {
					cache = outcomes
				}
				got := pinnedResult(t, s, cache, tc.metrics)
				checkPinned(t, tc.name, got, tc.blas, tc.haswell, tc.plain)
			})
		}
	}
	// bcm, beta-predbayes and fedpa sample the same clients (2 reuses); oneshotfl and fedkt train the
	// same clients (1); fedbe trains them for fewer epochs, and the diabetes runs differ in local training.
	if outcomes.hits != 3 {
		t.Errorf("the shared runs reused %d first rounds, want 3", outcomes.hits)
	}
}

// pinnedResult runs s (one setting, one seed) as Run does, with the given local-outcome cache, and
// returns "digest metric...".
func pinnedResult(t *testing.T, s *Spec, outcomes *localCache, metrics []string) string {
	t.Helper()
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	st, seed := settings[0], settings[0].Spec.Seeds[0]
	dir := filepath.Join(t.TempDir(), results.RunName(st.Name, seed))
	call := &runCall{opts: Options{Dir: filepath.Dir(dir), Progress: progress.Discard}, cache: &datasetCache{},
		info: runinfo.Collect(backendConfig()), kept: map[string]results.Run{}}
	r, err := call.runOne(context.Background(), st, seed, dir, outcomes)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != results.Completed {
		t.Fatalf("%s: %s %s", r.Setting, r.State, r.Reason)
	}
	parts := []string{posteriorDigest(t, finalGlobal(t, dir))}
	for _, m := range metrics {
		v, ok := r.Metrics[m]
		if !ok {
			t.Fatalf("no metric %s recorded", m)
		}
		parts = append(parts, fmt.Sprintf("%.17g", v))
	}
	return strings.Join(parts, " ")
}
