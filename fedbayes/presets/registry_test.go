package presets

import (
	"strings"
	"testing"
)

// TestPresets expands every preset and its Fast cut, and checks ozer2022-fmnist-c10-iid against the
// setting of Ozer et al. (2022)'s Table 1, a reduced preset's budget, and the refusal of unknown names.
func TestPresets(t *testing.T) {
	for _, name := range PresetNames() {
		t.Run(name, func(t *testing.T) {
			s, settings := expandPreset(t, name)
			if PresetAbout(name) == "" {
				t.Error("no description")
			}
			fast, err := Fast(s).Expand()
			if err != nil {
				t.Fatalf("Fast(preset) does not validate: %v", err)
			}
			if len(fast) != len(settings) || fast[0].Spec.Training.Rounds > 3 || len(fast[0].Spec.Seeds) != 1 {
				t.Errorf("Fast: %d settings (want %d), rounds %d, seeds %v", len(fast), len(settings), fast[0].Spec.Training.Rounds, fast[0].Spec.Seeds)
			}
		})
	}
	s, _ := Preset("ozer2022-fmnist-c10-iid")
	settings, _ := s.Expand()
	d := settings[2].Spec // FVBA-EAA
	if len(settings) != 12 || d.Training.Rounds != 50 || d.Training.LocalEpochs != 10 || d.Partition.Clients != 10 ||
		d.Training.Momentum != 0.9 || d.Training.WeightDecay != 1e-5 || len(d.Seeds) != 5 || d.Model.BayesianLayers != 3 ||
		d.Aggregation.Rule != "EAA" || d.Aggregation.Weighting != "equal" || settings[2].Name != "ozer2022-fmnist-c10-iid-FVBA-EAA" {
		t.Errorf("ozer2022-fmnist-c10-iid is not the Table-1 setting: %d settings, %s %+v", len(settings), settings[2].Name, d.Training)
	}
	if fed := settings[0].Spec; fed.Model.Kind != "deterministic" || fed.Aggregation.Rule != "FedAvg" || fed.Aggregation.Weighting != "equal" || settings[0].Labels["variant"] != "FED" {
		t.Errorf("FED row: %+v %+v %v", fed.Model, fed.Aggregation, settings[0].Labels)
	}
	s, _ = Preset("ozer2022-fmnist-c100-dirichlet-reduced")
	if !strings.HasPrefix(s.Budget, "reduced:") || s.Training.Rounds >= 500 || s.Partition.Participation != 0.1 || s.Name != "ozer2022-fmnist-c100-dirichlet-reduced" {
		t.Errorf("reduced preset: %s %q rounds %d participation %v", s.Name, s.Budget, s.Training.Rounds, s.Partition.Participation)
	}
	if _, err := Preset("nope"); err == nil || !strings.Contains(err.Error(), "ozer2022-fmnist-c10-iid") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := Preset("quick-digits-reduced"); err == nil {
		t.Errorf("quick-digits has no reduced form, but Preset accepted it")
	}
}
