package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/predictive"
)

// The refusals the built-in strategies share, each naming the spec field to change.

// hasanServer is the server share Hasan (2023) keeps, quoted where a strategy needs a server set.
const hasanServer = "Hasan (2023) keeps 0.2"

// requireServer refuses an experiment without a server set; use says what the strategy does on it
// and keep what share the strategy's paper keeps.
func requireServer(s Settings, use, keep string) error {
	if s.HasServer {
		return nil
	}
	return &FieldError{Field: "dataset.server_fraction", Problem: use + ": set a server fraction (" + keep + ")"}
}

// requireClassification refuses a regression experiment; what says what the strategy does with
// classes.
func requireClassification(s Settings, what string) error {
	if !s.Regression {
		return nil
	}
	return &FieldError{Field: "aggregation.rule", Problem: what + "; it is for classification"}
}

// requireSampler refuses clients that do not sample; what says what the strategy does with the
// samples.
func requireSampler(s Settings, what string) error {
	if s.Sampling {
		return nil
	}
	return &FieldError{Field: "training.sampler", Problem: what + ": set a sampler (cSGHMC or SGLD)"}
}

// checkDistilled checks a distillation with the strategy's defaults applied (at path, the distill
// object's field path): a momentum only where the optimizer is SGD (Adam is the default of some
// strategies, so a momentum given without an optimizer is checked here, before anything runs), no
// more SWA cycles than epochs, and, when bayesianStudent, no SWA at all: SWA averages point
// estimates.
func checkDistilled(path string, d predictive.DistillConfig, bayesianStudent bool) error {
	if d.Momentum != 0 && d.Optimizer != "sgd" {
		return &FieldError{Field: path + ".momentum", Problem: fmt.Sprintf("%v, but the distillation's optimizer is %s; momentum is SGD's (set optimizer sgd)", d.Momentum, d.Optimizer)}
	}
	if d.SWACycles > d.Epochs {
		return &FieldError{Field: path + ".swa_cycles", Problem: fmt.Sprintf("%d SWA cycles in %d distillation epochs; at most one cycle per epoch", d.SWACycles, d.Epochs)}
	}
	if d.SWACycles > 0 && bayesianStudent {
		return &FieldError{Field: path + ".swa_cycles", Problem: "SWA averages point estimates; a Bayesian student is distilled without it (0)"}
	}
	return nil
}

// invalid refuses, at field, a strategy configuration whose Validate returned err; nil passes.
func invalid(field string, err error) error {
	if err == nil {
		return nil
	}
	return &FieldError{Field: field, Problem: err.Error()}
}

// firstError returns the first non-nil error of errs.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
