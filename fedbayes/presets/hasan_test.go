package presets

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// TestHasanPresets checks every one-round preset of Hasan (2023): one setting per method (labelled by
// the thesis's name, running the strategy Method(label)) and h, one round, 5 clients with
// heterogeneity h, a per-seed split with a 20% server set, the sampler for the sampling methods only
// (with Zhang et al.'s friction on Fashion-MNIST), ten EP-MCMC draws, and the students of D-BCM and
// D-beta-PredBayes starting afresh.
func TestHasanPresets(t *testing.T) {
	names := HasanPresetNames()
	if len(names) != 7 {
		t.Fatalf("Hasan presets %v, want 7", names)
	}
	sampling := []string{"fedpa", "ep-mcmc", strategy.BCM, strategy.Mixture, strategy.BetaPredBayes, strategy.DBCM, strategy.DBetaPredBayes}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			s, settings := expandPreset(t, name)
			methods, hs := HasanMethods, []float64{0, 0.3, 0.6, 0.9}
			if data.RegressionSet(s.Dataset.Name) {
				methods, hs = HasanRegressionMethods, []float64{1}
			}
			if want := len(methods) * len(hs); len(settings) != want {
				t.Fatalf("%d settings, want %d methods x %d h", len(settings), len(methods), len(hs))
			}
			seen := map[string]bool{}
			for _, st := range settings {
				c, m := st.Spec, st.Labels["variant"]
				seen[m] = true
				if !slices.Contains(methods, m) || !strategy.Is(c.Aggregation.Rule, engine.Method(m)) {
					t.Errorf("%s: variant %q runs %q; want a method of %v running Method(label) %q", st.Name, m, c.Aggregation.Rule, methods, engine.Method(m))
				}
				if c.Training.Rounds != 1 || c.Partition.Clients != 5 || c.Partition.Method != "heterogeneity" || !slices.Contains(hs, c.Partition.H) ||
					!c.Dataset.SplitPerSeed || c.Dataset.ServerFraction != 0.2 || c.Model.Kind != "deterministic" {
					t.Errorf("%s: not Hasan's one-round setting: %+v", st.Name, c)
				}
				samples := slices.Contains(sampling, m)
				if samples != (c.Training.Sampler != nil) {
					t.Fatalf("%s: sampler %v, want sampling %v", st.Name, c.Training.Sampler, samples)
				}
				if samples {
					want := 0.1
					if c.Dataset.Name == "fashion-mnist" {
						want = predictive.ZhangFriction
					}
					if c.Training.Sampler.Friction != want {
						t.Errorf("%s: sampler friction %v, want %v", st.Name, c.Training.Sampler.Friction, want)
					}
				}
				if m == "ep-mcmc" && c.Evaluation.Samples != 10 {
					t.Errorf("%s: %d networks drawn, want 10", st.Name, c.Evaluation.Samples)
				}
				var sv struct {
					StudentStart string                 `json:"student_start"`
					Local        predictive.LocalConfig `json:"local"`
				}
				if len(c.Aggregation.Options) > 0 {
					if err := json.Unmarshal(c.Aggregation.Options, &sv); err != nil {
						t.Fatal(err)
					}
				}
				if (sv.StudentStart == strategy.StudentFromPrevious) != (m == strategy.DBCM || m == strategy.DBetaPredBayes) {
					t.Errorf("%s: student_start %q, want previous for the distilled ensembles only", st.Name, sv.StudentStart)
				}
				if m == "fedkt" && sv.Local.Epochs == 0 {
					t.Errorf("%s: fedkt without its teachers' training: %s", st.Name, c.Aggregation.Options)
				}
			}
			for _, m := range methods {
				if !seen[m] {
					t.Errorf("method %s has no setting", m)
				}
			}
			if !strings.Contains(s.Budget, "full") && !strings.Contains(s.Budget, "reduced") && !strings.Contains(s.Budget, "medium") {
				t.Errorf("budget %q states no budget", s.Budget)
			}
		})
	}
	if predictive.ZhangFriction != 0.9 {
		t.Errorf("ZhangFriction = %v, want Zhang et al.'s 0.9", predictive.ZhangFriction)
	}
}

// TestSelectMethods: engine.SelectMethods keeps the variants of a preset that run the methods asked
// for, by registry or former name, with their labels and in the preset's order, and names a method that no variant runs.
func TestSelectMethods(t *testing.T) {
	s, err := Preset("digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.SelectMethods(s, []string{"bcm", "oneshotfl", "fedbe", "FedAvg"}); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, v := range s.Variants {
		labels = append(labels, v.Label)
	}
	if want := []string{"fedavg", "fedbe", "oneshot", "bcm"}; !slices.Equal(labels, want) {
		t.Errorf("variants %v, want %v", labels, want)
	}
	if err := engine.SelectMethods(s, []string{"mixture"}); err == nil || !strings.Contains(err.Error(), `runs no method "mixture"`) {
		t.Errorf("a method the spec does not run: %v", err)
	}
	q, err := Preset("quick-digits")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Variants) == 0 {
		if err := engine.SelectMethods(q, []string{"fedavg"}); err == nil || !strings.Contains(err.Error(), "no variants") {
			t.Errorf("a spec without variants: %v", err)
		}
	}
}

// TestHasanFedAvgTuned checks the tuned one-round FedAvg preset against Hasan (2023), Tables B.2 and
// B.3 (Fashion-MNIST: SGD with momentum 0.9 at 1e-1 for h = 0 and 1e-2 for h > 0), App. B.2 (batch
// 100) and Sec. 3.3.5 (25 epochs, one round): two FedAvg rows at every h, on Hasan's one-round setting
// with the medium preset's examples (its runs pair with fmnist-medium's).
func TestHasanFedAvgTuned(t *testing.T) {
	s, settings := expandPreset(t, HasanFedAvgTuned)
	medium, err := Preset("fmnist-medium")
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 2*4 || len(s.Seeds) != 5 {
		t.Fatalf("%d settings and %d seeds, want 2 rows x 4 h and 5 seeds", len(settings), len(s.Seeds))
	}
	lr := map[string]float64{"fedavg-b2": 0.1, "fedavg-b3": 0.01} // Tables B.2 and B.3, Fashion MNIST
	seen := map[string]int{}
	for _, st := range settings {
		c, label := st.Spec, st.Labels["variant"]
		seen[label]++
		want, ok := lr[label]
		if !ok {
			t.Fatalf("%s: row %q, want fedavg-b2 or fedavg-b3", st.Name, label)
		}
		tr := c.Training
		if c.Aggregation.Rule != "FedAvg" || tr.LearningRate != want || tr.Optimizer != "sgd" || tr.Momentum != 0.9 ||
			tr.BatchSize != 100 || tr.LocalEpochs != 25 || tr.Rounds != 1 || tr.Sampler != nil {
			t.Errorf("%s: %s at %+v; want FedAvg, SGD with momentum 0.9 at %v, batch 100, 25 epochs, one round", st.Name, c.Aggregation.Rule, tr, want)
		}
		if c.Partition.Method != "heterogeneity" || c.Partition.Clients != 5 || c.Dataset.Name != "fashion-mnist" ||
			c.Dataset != medium.Dataset || c.Dataset.ServerFraction != 0.2 {
			t.Errorf("%s: not Hasan's one-round setting on fmnist-medium's examples: %+v %+v", st.Name, c.Partition, c.Dataset)
		}
	}
	if seen["fedavg-b2"] != 4 || seen["fedavg-b3"] != 4 {
		t.Errorf("rows %v, want each at the 4 h", seen)
	}
}
