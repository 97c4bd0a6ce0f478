package models

import "fmt"

// Compat names a reference implementation whose behaviour a model follows where that code differs
// from its paper's text. The zero value follows the text.
type Compat string

const (
	// CompatNone (the default) follows the papers' text and fedbayes's own defaults.
	CompatNone Compat = ""
	// CompatBFLP follows the public code of Ozer et al. (2022), BFL-P (github.com/ituvisionlab/BFL-P,
	// architectures.py, class VBLinear and BCNN), in every point where it differs from the paper:
	//
	//   - log sigma^2 of every Gaussian weight starts at N(-9, 0.001^2) (BFLPInitLogVar, BFLPInitLogVarStd:
	//     torch's normal_(mean, std), so 0.001 is a standard deviation);
	//   - log sigma^2 is clamped to [BFLPLogVarMin, BFLPLogVarMax] = [-8, 8] where it is used: the forward
	//     pass and the KL (and, in package aggregate, Options.BFLP, the aggregation). Below -8 the clamp
	//     passes no gradient, so a log-variance that starts at -9 stays frozen except for the weight
	//     decay; the posterior exchanged carries the raw, unclamped values;
	//   - the local-reparameterisation variance gets BFLPVarianceFloor (1e-8) added before its square
	//     root;
	//   - biases are deterministic (point estimates, zero at start, averaged like FedAvg, outside the KL);
	//   - the means of Gaussian weights start at N(0, 1/fan_in) instead of He-normal N(0, 2/fan_in);
	//   - deterministic weight layers (BFL-P's nn.Conv2d and nn.Linear) start with PyTorch's default
	//     initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
	//
	// It needs VarParam LogVarParam.
	CompatBFLP Compat = "bfl-p"
	// CompatBABFL follows the public code of Jamoussi et al. (BA-BFL,
	// github.com/NourJamoussi/Information-Geometry-for-Bayesian-Federated-Learning, BFL/): a fork of
	// BFL-P whose VBLinear layers are BFL-P's unchanged (every CompatBFLP point above holds for the
	// model), but whose aggregation is rewritten (utils/FL/update.py and aggregation_functions.py): raw,
	// unclamped variances in every rule, and GAA normalised by sum w_k^2 (aggregate.Options.BABFL).
	CompatBABFL Compat = "ba-bfl"
)

// vblinear reports whether the model's layers follow BFL-P's VBLinear (CompatBFLP and CompatBABFL).
func (c Config) vblinear() bool { return c.Compat == CompatBFLP || c.Compat == CompatBABFL }

// Constants of CompatBFLP, read from BFL-P's VBLinear.
const (
	BFLPLogVarMin     = -8.0
	BFLPLogVarMax     = 8.0
	BFLPInitLogVar    = -9.0
	BFLPInitLogVarStd = 1e-3
	BFLPVarianceFloor = 1e-8
)

// Compats returns every compatibility mode, the default first.
func Compats() []Compat { return []Compat{CompatNone, CompatBFLP, CompatBABFL} }

// ParseCompat returns the mode with the given name ("" or "paper" for the default).
func ParseCompat(name string) (Compat, error) {
	switch name {
	case "", "paper", "none":
		return CompatNone, nil
	case string(CompatBFLP):
		return CompatBFLP, nil
	case string(CompatBABFL):
		return CompatBABFL, nil
	}
	return "", fmt.Errorf("models: unknown compatibility mode %q; want %q (the paper's text, default), %q or %q", name, "paper", CompatBFLP, CompatBABFL)
}

// LogVarRange returns the clamp range of log sigma^2 where the model uses it (forward pass, KL), its
// defaults filled in: [BFLPLogVarMin, BFLPLogVarMax] for CompatBFLP and CompatBABFL, else
// [LogVarMin, LogVarMax]. A log-variance at or beyond a bound gets no gradient from the clamp.
func (c Config) LogVarRange() (lo, hi float64) { return c.withDefaults().logVarRange() }

// logVarRange is the clamp range of log sigma^2 where it is used (forward pass, KL).
func (c Config) logVarRange() (lo, hi float64) {
	if c.vblinear() {
		return BFLPLogVarMin, BFLPLogVarMax
	}
	return LogVarMin, LogVarMax
}
