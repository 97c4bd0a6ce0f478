package engine

import (
	"slices"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
)

// TestHasanPresetsAreEnginePresets checks that every one-round preset of Hasan's runner is an engine
// preset that runs the same experiment: one setting per method and h, one round, the same data,
// clients, MLP, seeds and sampler, and each method's server options.
func TestHasanPresetsAreEnginePresets(t *testing.T) {
	for _, name := range predictive.PresetNames() {
		t.Run(name, func(t *testing.T) {
			ps, err := predictive.Preset(name)
			if err != nil {
				t.Fatal(err)
			}
			ps = ps.WithDefaults()
			_, settings := expandPreset(t, name)
			if want := len(ps.Methods) * len(ps.H); len(settings) != want {
				t.Fatalf("%d settings, want %d methods x %d h", len(settings), len(ps.Methods), len(ps.H))
			}
			seen := map[string]bool{}
			for _, st := range settings {
				c, m := st.Spec, st.Labels["variant"]
				seen[m] = true
				if c.Training.Rounds != 1 || c.Dataset.Name != ps.Dataset || c.Partition.Clients != ps.Clients ||
					!slices.Equal(c.Model.Hidden, ps.Hidden) || !slices.Equal(c.Seeds, ps.Seeds) || !c.Dataset.SplitPerSeed ||
					c.Dataset.Subsample != ps.Subsample || c.Dataset.ServerFraction != ps.ServerFraction {
					t.Errorf("%s: the setting differs from the preset's data, clients, MLP or seeds: %+v", st.Name, c)
				}
				if !slices.Contains(ps.H, c.Partition.H) || c.Partition.Method != "heterogeneity" {
					t.Errorf("%s: partition %+v, want heterogeneity with h in %v", st.Name, c.Partition, ps.H)
				}
				sampling := slices.Contains([]string{predictive.MethodFedPA, predictive.MethodEPMCMC, predictive.MethodBCM, predictive.MethodMixture,
					predictive.MethodBeta, predictive.MethodDBCM, predictive.MethodDBeta}, m)
				if sampling != (c.Training.Sampler != nil) {
					t.Errorf("%s: sampler %v, want sampling %v", st.Name, c.Training.Sampler, sampling)
				}
				if sampling && *c.Training.Sampler != ps.Sampler {
					t.Errorf("%s: sampler %+v, want the preset's %+v", st.Name, *c.Training.Sampler, ps.Sampler)
				}
				if !sampling && m != predictive.MethodFedKT && (c.Training.LocalEpochs != ps.Local.Epochs || c.Training.LearningRate != ps.Local.LearningRate) {
					t.Errorf("%s: local training %+v, want the preset's %+v", st.Name, c.Training, ps.Local)
				}
				switch m {
				case predictive.MethodFedKT:
					if k := c.Aggregation.Server.FedKT; k == nil || k.Students != ps.FedKT.Students || k.Teachers != ps.FedKT.Teachers || k.Local.Epochs != ps.Local.Epochs {
						t.Errorf("%s: fedkt %+v, want the preset's %+v with its local training", st.Name, k, ps.FedKT)
					}
				case predictive.MethodFedPA:
					if c.Aggregation.Server.ServerLR != ps.FedPA.ServerLR {
						t.Errorf("%s: server_lr %v, want %v", st.Name, c.Aggregation.Server.ServerLR, ps.FedPA.ServerLR)
					}
				case predictive.MethodEPMCMC:
					if c.Evaluation.Samples != ps.EPDraws {
						t.Errorf("%s: %d drawn networks, want %d", st.Name, c.Evaluation.Samples, ps.EPDraws)
					}
				case predictive.MethodOneshot, predictive.MethodDBCM, predictive.MethodDBeta:
					if d := c.Aggregation.Server.Distill; d == nil || *d != ps.Distill {
						t.Errorf("%s: distillation %+v, want %+v", st.Name, d, ps.Distill)
					}
					if start := c.Aggregation.Server.StudentStart; (m != predictive.MethodOneshot) != (start == "previous") {
						t.Errorf("%s: student_start %q, want previous for the distilled ensembles only", st.Name, start)
					}
				case predictive.MethodFedBE:
					if sv := c.Aggregation.Server; sv.Samples != ps.FedBE.Samples || *sv.Distill != ps.FedBE.Distill {
						t.Errorf("%s: fedbe %+v, want %+v", st.Name, sv, ps.FedBE)
					}
				}
			}
			for _, m := range ps.Methods {
				if !seen[m] {
					t.Errorf("method %s has no setting", m)
				}
			}
		})
	}
}

// TestFromPredictiveRefuses checks that a predictive spec the engine cannot run as written is refused.
func TestFromPredictiveRefuses(t *testing.T) {
	ps, err := predictive.Preset("digits-fast")
	if err != nil {
		t.Fatal(err)
	}
	bad := ps
	bad.Beta.GridPoints = 11
	if _, err := FromPredictive(bad); err == nil {
		t.Error("beta.grid_points was accepted")
	}
	bad = ps
	bad.H = []float64{2}
	if _, err := FromPredictive(bad); err == nil {
		t.Error("h = 2 was accepted")
	}
}
