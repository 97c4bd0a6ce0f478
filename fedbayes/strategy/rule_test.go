package strategy

import (
	"errors"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
)

// TestCheckRule checks the one validation of the parameter-space rules' options: the field at
// fault and the message (the engine's spec errors quote them unchanged), the order of the checks,
// and that NewRule refuses what CheckRule refuses, including the population and DWC policy it
// once left to the engine (PPA with one sample failed at round 1; an unknown policy ran as
// keep-previous).
func TestCheckRule(t *testing.T) {
	bayes, det := models.Bayesian, models.Deterministic
	for _, tc := range []struct {
		name        string
		rule        aggregate.Rule
		s           Settings
		field, want string // want: the whole problem; field "" for no error
	}{
		{"defaults", aggregate.GAA, Settings{}, "", ""},
		{"every option", aggregate.PPA, Settings{Kind: bayes, Weighting: "fixedpoint", Population: 7, DWCPolicy: "error"}, "", ""},
		{"fedavg deterministic", aggregate.FedAvg, Settings{Kind: det, Weighting: "size"}, "", ""},
		{"fedavg bayesian", aggregate.FedAvg, Settings{Kind: bayes}, "aggregation.rule",
			"FedAvg drops the variances, but model.kind is bayesian; use a Gaussian rule (GAA, AALV, ...) or model.kind deterministic or mcdropout"},
		{"unknown weighting", aggregate.GAA, Settings{Weighting: "kl"}, "aggregation.weighting", `"kl" is not one of equal, size, maxdisc, fixedpoint`},
		{"long weighting cut", aggregate.GAA, Settings{Weighting: strings.Repeat("w", 500)}, "aggregation.weighting",
			`"` + strings.Repeat("w", 400) + `... (500 bytes)" is not one of equal, size, maxdisc, fixedpoint`},
		{"maxdisc deterministic", aggregate.GAA, Settings{Kind: det, Weighting: "maxdisc"}, "aggregation.weighting",
			`"maxdisc" needs Gaussian posteriors (KL divergences), but model.kind is "deterministic"`},
		{"fixedpoint kind unstated", aggregate.GAA, Settings{Weighting: "fixedpoint"}, "", ""},
		{"negative population", aggregate.PPA, Settings{Population: -3}, "aggregation.population", "-3; must be >= 0 (0 means 1000)"},
		{"population one", aggregate.PPA, Settings{Population: 1}, "aggregation.population",
			"1: PPA takes the variance of a population of N samples drawn from the clients, and one sample has none; use at least 2 (0 means 1000)"},
		{"population off PPA", aggregate.EAA, Settings{Population: 5}, "aggregation.population", "set, but aggregation.rule is EAA; it applies to PPA"},
		{"unknown DWC policy", aggregate.DWC, Settings{DWCPolicy: "nope"}, "aggregation.dwc_policy", `"nope" is not one of keep-previous, conflation, error`},
		// Order: the rule, then the weighting, then the population, then the policy.
		{"fedavg before weighting", aggregate.FedAvg, Settings{Kind: bayes, Weighting: "kl"}, "aggregation.rule", ""},
		{"weighting before population", aggregate.GAA, Settings{Weighting: "kl", Population: 1}, "aggregation.weighting", ""},
		{"population before policy", aggregate.GAA, Settings{Population: 1, DWCPolicy: "nope"}, "aggregation.population", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRule(tc.rule, tc.s)
			_, newErr := NewRule(tc.rule, tc.s)
			if tc.field == "" {
				if err != nil || newErr != nil {
					t.Fatalf("CheckRule = %v, NewRule = %v; want no error", err, newErr)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || (tc.want != "" && fe.Problem != tc.want) {
				t.Fatalf("CheckRule = %#v, want field %s: %s", err, tc.field, tc.want)
			}
			if newErr == nil || newErr.Error() != err.Error() {
				t.Errorf("NewRule = %v, want CheckRule's %v", newErr, err)
			}
		})
	}
}

// TestCheckNotRule checks that a strategy other than a rule refuses PPA's population, with the
// rule's message, and takes the other settings.
func TestCheckNotRule(t *testing.T) {
	var fe *FieldError
	err := CheckNotRule("bcm", Settings{Population: 5})
	if !errors.As(err, &fe) || fe.Field != "aggregation.population" || fe.Problem != "set, but aggregation.rule is bcm; it applies to PPA" {
		t.Errorf("CheckNotRule(bcm, population 5) = %#v", err)
	}
	if err := CheckNotRule("bcm", Settings{Kind: models.Deterministic, Weighting: "size", DWCPolicy: "error"}); err != nil {
		t.Errorf("CheckNotRule without a population = %v", err)
	}
}
