package strategy

import (
	"errors"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
)

// TestSharedRefusals checks the refusals the built-in strategies share: each names its field and
// says what the strategy needs, and lets a valid setting through.
func TestSharedRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		field string // "" when the check passes
		says  string
	}{
		{"server set present", requireServer(Settings{HasServer: true}, "x", hasanServer), "", ""},
		{"server set missing", requireServer(Settings{}, "FedX distils", hasanServer), "dataset.server_fraction", "FedX distils: set a server fraction (Hasan (2023) keeps 0.2)"},
		{"classification", requireClassification(Settings{}, "x"), "", ""},
		{"regression", requireClassification(Settings{Regression: true}, "FedX votes"), "aggregation.rule", "FedX votes; it is for classification"},
		{"sampling clients", requireSampler(Settings{Sampling: true}, "x"), "", ""},
		{"optimising clients", requireSampler(Settings{}, "FedX reads samples"), "training.sampler", "FedX reads samples: set a sampler"},
		{"SWA within epochs", checkDistilled("a.distill", predictive.DistillConfig{Epochs: 3, SWACycles: 3}, false), "", ""},
		{"SWA beyond epochs", checkDistilled("a.distill", predictive.DistillConfig{Epochs: 2, SWACycles: 3}, false), "a.distill.swa_cycles", "3 SWA cycles in 2 distillation epochs"},
		{"SWA of a Bayesian student", checkDistilled("a.distill", predictive.DistillConfig{Epochs: 4, SWACycles: 2}, true), "a.distill.swa_cycles", "Bayesian student"},
		{"no SWA, Bayesian student", checkDistilled("a.distill", predictive.DistillConfig{Epochs: 4}, true), "", ""},
		{"valid configuration", invalid("a.b", nil), "", ""},
		{"invalid configuration", invalid("a.b", errors.New("rho -1: want at least 0")), "a.b", "rho -1"},
		{"first of several", firstError(nil, requireSampler(Settings{}, "y"), requireServer(Settings{}, "z", "")), "training.sampler", "y: set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.field == "" {
				if tc.err != nil {
					t.Fatalf("refused: %v", tc.err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(tc.err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Problem, tc.says) {
				t.Fatalf("got %v, want a refusal of %s saying %q", tc.err, tc.field, tc.says)
			}
		})
	}
}
