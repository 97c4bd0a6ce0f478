package engine

import (
	"strings"
	"testing"
)

// TestCompatSpec checks model.compat and evaluation.nll_epsilon in specs (package presets checks the
// BFL-P and BA-BFL presets).
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
}
