package engine

import (
	"strings"
	"testing"
)

// TestCompatSpec checks model.compat and evaluation.nll_epsilon in specs, and the BFL-P presets.
func TestCompatSpec(t *testing.T) {
	base := `{"dataset": {"name": "digits"}, "partition": {"method": "iid", "clients": 2},
		"model": {"arch": "mlp", "kind": "bayesian", "compat": %s}, "evaluation": {"nll_epsilon": %s},
		"training": {"rounds": 1, "local_epochs": 1, "batch_size": 8, "optimizer": "sgd", "lr": 0.1}, "seeds": [0]}`
	for _, c := range []struct{ compat, eps, want string }{
		{`"bfl-p"`, `1e-8`, ""},
		{`"bflp"`, `0`, "model.compat"},
		{`"bfl-p"`, `-1`, "evaluation.nll_epsilon"},
	} {
		raw := strings.Replace(strings.Replace(base, "%s", c.compat, 1), "%s", c.eps, 1)
		_, err := ParseSpec([]byte(raw))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("compat %s eps %s: %v", c.compat, c.eps, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("compat %s eps %s: got %v, want an error naming %s", c.compat, c.eps, err, c.want)
		}
	}
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
