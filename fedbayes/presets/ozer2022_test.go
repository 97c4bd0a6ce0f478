package presets

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/models"
)

// TestCompatPresets checks the BFL-P and BA-BFL presets: model.compat on the spec and on every
// variant that replaces the model, BFL-P's scores (ECE over 100 bins, NLL epsilon 1e-8), and BA-BFL's
// budget.
func TestCompatPresets(t *testing.T) {
	s, err := Preset("ozer2022-fmnist-c10-dirichlet" + BFLPSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if s.Model.Compat != "bfl-p" || s.Evaluation.Bins != 100 || s.Evaluation.NLLEpsilon != 1e-8 {
		t.Errorf("BFL-P preset: compat %q, bins %d, nll epsilon %v", s.Model.Compat, s.Evaluation.Bins, s.Evaluation.NLLEpsilon)
	}
	j, err := Preset("jamoussi-fmnist" + BABFLSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if j.Model.Compat != "ba-bfl" || j.Training.LocalEpochs != 50 || len(j.Seeds) != 3 {
		t.Errorf("BA-BFL preset: compat %q, E %d, %d seeds; want ba-bfl, 50, 3", j.Model.Compat, j.Training.LocalEpochs, len(j.Seeds))
	}
	for _, v := range append(s.Variants, j.Variants...) {
		if m, ok := v.Set["model"]; ok && !strings.Contains(string(m), `"compat":"bfl-p"`) {
			if !strings.Contains(string(m), `"compat":"ba-bfl"`) {
				t.Errorf("variant %s replaces the model without compat: %s", v.Label, m)
			}
		}
	}
}

// TestTextModeDefaults: the paper presets' text mode starts the variances at
// models.DefaultInitLogVar and trains them with Adam at models.DefaultSpreadLearningRate (issue 33);
// engine's TestVariancesLearnOnFashionMNIST runs ozer2022-fmnist-c10-iid's text mode written out with
// these values.
func TestTextModeDefaults(t *testing.T) {
	s, err := Preset("ozer2022-fmnist-c10-iid")
	if err != nil {
		t.Fatal(err)
	}
	m, tr := s.Model, s.Training
	if m.Arch != "lenet" || m.Kind != "bayesian" || m.BayesianLayers != 3 || m.Estimator != "local" || m.VarParam != "logvar" ||
		m.PriorStd != 1 || m.InitLogVar != models.DefaultInitLogVar {
		t.Errorf("model %+v is not the text mode's", m)
	}
	if tr.Optimizer != "sgd" || tr.LearningRate != 0.01 || tr.Momentum != 0.9 || tr.WeightDecay != 1e-5 || tr.BatchSize != 64 ||
		tr.VarianceOptimizer != string(models.Adam) || tr.VarianceLR != models.DefaultSpreadLearningRate {
		t.Errorf("training %+v is not the text mode's", tr)
	}
}
