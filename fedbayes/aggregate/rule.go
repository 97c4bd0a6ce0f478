// Package aggregate combines K client posteriors (mean-field Gaussians, one mean and variance per
// parameter) into one global posterior, with every parameter-space rule of the papers behind
// fedbayes, the client weighting schemes of Fischer et al. (2024), and the FedBE global model
// distributions of Chen & Chao.
//
// Two forms share the same rules (docs/aggregation.md has every formula):
//
//   - a float64 scalar form (Scalar, MixtureDensity) for toy univariate Gaussians, teaching and plots;
//   - a tensor form (Posteriors, Stacked) that aggregates a whole model's posterior (every Gaussian
//     parameter with the chosen rule, every deterministic parameter with the weighted mean) in one
//     call, on fused multi-core CPU kernels (PPA, and every rule with Options.Graph, on a GoMLX
//     graph on any backend). It takes and returns log-variances, the parameterisation of
//     posterior.Posterior.
//
// Weights are the normalised client weights w_k (beta_k in Ozer et al. (2022), omega_k in Fischer
// et al. (2024)): finite, non-negative and summing to one, unless Options.Normalize is set.
package aggregate

import (
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/backends"
)

// Rule names an aggregation rule. Its value is the short name used on the command line.
type Rule string

// The aggregation rules. Each formula is given per parameter for clients k = 1..K with means mu_k,
// variances s2_k and normalised weights w_k.
const (
	// EAA is empirical arithmetic aggregation, also called naive weighted averaging (NWA) and the
	// centred linear pool: mean sum w mu, variance sum w s2. Ozer et al. (2022), Eq. 4;
	// Fischer et al. (2024), Eq. 10.
	EAA Rule = "EAA"
	// GAA is Gaussian arithmetic aggregation, also called the weighted sum of normal distributions
	// (WS), the law of sum w_k X_k for independent X_k: mean sum w mu, variance sum w^2 s2.
	// Ozer et al. (2022), Eq. 5; Fischer et al. (2024), Eq. 11.
	GAA Rule = "GAA"
	// AALV is arithmetic aggregation of log-variances: mean sum w mu, log-variance sum w log s2.
	// Ozer et al. (2022), Eq. 6.
	AALV Rule = "AALV"
	// PPA is population pooling: N samples, round(N w_k) of them drawn from client k, and the
	// population's mean and (biased, 1/N) variance. Ozer et al. (2022), Eq. 7. Sampled: it uses
	// Options.PopulationSize and Options.Seed.
	PPA Rule = "PPA"
	// LP is the linear pool (mixture sum w N(mu_k, s2_k)) matched by its first two moments: mean
	// mu_g = sum w mu, variance sum w (s2 + (mu - mu_g)^2). Fischer et al. (2024), Eqs. 12-14.
	// MixtureDensity gives the exact mixture density in the scalar form.
	LP Rule = "LP"
	// Conflation is the normalised product of the client densities (inverse-variance weighting);
	// the weights are not used: mean sum(mu/s2) / sum(1/s2), variance 1 / sum(1/s2).
	// Fischer et al. (2024), Eq. 15.
	Conflation Rule = "Conflation"
	// CF is weighted conflation: mean sum(w mu/s2) / sum(w/s2), variance w_max / sum(w/s2).
	// Ozer et al. (2022), Eq. 8; Fischer et al. (2024), Eq. 16.
	CF Rule = "CF"
	// RKLB is the reverse-KL barycenter (log-linear pool) of the clients: mean as CF, variance
	// 1 / sum(w/s2). Jamoussi et al. (BA-BFL), Eq. 8.
	RKLB Rule = "RKLB"
	// WB is the Wasserstein-2 barycenter of independent Gaussians: mean sum w mu, standard deviation
	// sum w s (variance (sum w s)^2). Jamoussi et al. (BA-BFL), Eq. 9.
	WB Rule = "WB"
	// DWC is distributed weight consolidation, a Bayesian update of the previous global posterior
	// N(mu_o, s2_o) by the K clients: precision P = sum 1/s2 - (K-1)/s2_o, mean
	// (sum mu/s2 - (K-1) mu_o/s2_o) / P, variance 1/P. Fischer et al. (2024), Eq. 17. The weights are
	// not used. It needs the previous global (Options.Previous, Options.PreviousGlobal); where P is
	// not positive, Options.DWCPolicy applies (see DWCPolicy).
	DWC Rule = "DWC"
	// FedAvg is the weighted mean of point estimates, McMahan et al. (2017): mean sum w mu. Variances
	// are ignored and the result is a point mass: variance 0 in the scalar form, a deterministic
	// parameter (LogVar nil) in the tensor form. Use AALV to average log-variances as parameters.
	FedAvg Rule = "FedAvg"
)

// Rules returns every rule, in the order of the documentation table.
func Rules() []Rule {
	return []Rule{EAA, GAA, AALV, PPA, LP, Conflation, CF, RKLB, WB, DWC, FedAvg}
}

// ParseRule returns the rule with the given name; the match ignores case and also accepts the
// aliases NWA (EAA), WS (GAA), WC (CF) and LLP (RKLB).
func ParseRule(name string) (Rule, error) {
	aliases := map[string]Rule{"NWA": EAA, "WS": GAA, "WC": CF, "LLP": RKLB}
	up := strings.ToUpper(strings.TrimSpace(name))
	if r, ok := aliases[up]; ok {
		return r, nil
	}
	for _, r := range Rules() {
		if strings.ToUpper(string(r)) == up {
			return r, nil
		}
	}
	names := make([]string, 0, len(Rules()))
	for _, r := range Rules() {
		names = append(names, string(r))
	}
	return "", fmt.Errorf("aggregate: unknown rule %q; known rules: %s (aliases NWA, WS, WC, LLP)",
		name, strings.Join(names, ", "))
}

// Weighted reports whether the rule uses the client weights (Conflation and DWC do not; their
// weights are still validated).
func (r Rule) Weighted() bool { return r != Conflation && r != DWC }

// DWCPolicy says what DWC does for a parameter element whose combined precision
// P = sum 1/s2_k - (K-1)/s2_o is not positive: the clients are jointly less certain than the previous
// global, and Fischer et al. (2024), Eq. 17 has no Gaussian answer. P counts as not positive when
// P <= DWCRelativeFloor * sum 1/s2_k, since below that it is rounding noise of a difference of
// large terms.
type DWCPolicy int

const (
	// DWCKeepPrevious (the default) keeps the previous global's mean and variance for that element:
	// the round brings no usable information about it.
	DWCKeepPrevious DWCPolicy = iota
	// DWCUseConflation uses the clients' conflation (Eq. 15, the update without the prior removed).
	DWCUseConflation
	// DWCFail returns an error naming the parameter and the first element affected.
	DWCFail
)

// DWCRelativeFloor is the relative threshold of DWCPolicy: a combined DWC precision at most this
// fraction of the clients' total precision is treated as not positive.
const DWCRelativeFloor = 1e-4

// String returns the policy's name.
func (p DWCPolicy) String() string {
	switch p {
	case DWCKeepPrevious:
		return "keep-previous"
	case DWCUseConflation:
		return "conflation"
	case DWCFail:
		return "error"
	}
	return fmt.Sprintf("DWCPolicy(%d)", int(p))
}

// MaxDiscrepancyReading is how Fischer et al. (2024), Eq. 20 turns the KL divergences of client k to
// the others into its weight: the printed equation can be read as the inverse of the largest divergence
// or as the largest inverse divergence (the inverse of the smallest). docs/aggregation.md discusses it.
type MaxDiscrepancyReading int

const (
	// InverseOfMax is gamma_k = 1 / max_j KL(q_k || q_j): a client far from any other gets little weight.
	InverseOfMax MaxDiscrepancyReading = iota
	// MaxOfInverse is gamma_k = max_{j != k} 1 / KL(q_k || q_j): a client close to some other gets much
	// weight.
	MaxOfInverse
)

// DefaultPopulationSize is PPA's population size N when Options.PopulationSize is 0.
const DefaultPopulationSize = 1000

// Options carries what some rules need besides clients and weights. The zero value is valid for
// every rule but DWC.
type Options struct {
	// Normalize divides the weights by their sum instead of requiring that they sum to one. Weights
	// must still be finite and non-negative with a positive sum.
	Normalize bool
	// PopulationSize is PPA's N (DefaultPopulationSize when 0).
	PopulationSize int
	// Seed seeds PPA's sampling: the same seed gives the same result.
	Seed int64
	// Previous is the previous global N(mu_o, s2_o) for DWC in the scalar form.
	Previous *Gaussian
	// PreviousGlobal is the previous global posterior for DWC in the tensor form; it must have the
	// clients' parameters (names, shapes, Gaussian or not).
	PreviousGlobal *posterior.Posterior
	// DWCPolicy says what DWC does where its combined precision is not positive.
	DWCPolicy DWCPolicy
	// Backend runs PPA's tensor form, and every rule's with Graph; nil means backend.Default().
	Backend backends.Backend
	// Graph runs the closed-form rules' tensor form as a GoMLX graph on Backend instead of the fused
	// CPU kernels: the implementation before the kernels, kept as a reference (on the pure-Go backend
	// it takes 1.3 to 2.9 times their CPU time at K = 100). Weighted means agree bit for bit, other
	// outputs to float32 rounding (docs/aggregation.md, Numerics and Speed).
	Graph bool
	// MaxDiscrepancy chooses the reading of Fischer et al. (2024), Eq. 20 for MaxDiscrepancyWeights:
	// InverseOfMax (the default, gamma_k = 1 / max_j KL(q_k || q_j)) or MaxOfInverse
	// (gamma_k = max_{j != k} 1 / KL(q_k || q_j) = 1 / min_{j != k} KL).
	MaxDiscrepancy MaxDiscrepancyReading
	// BABFL makes the tensor form behave like the public code of Jamoussi et al. (BA-BFL, a fork of
	// BFL-P with its own aggregation): GAA's variance is sum w_k^2 s2_k / sum w_k^2 (numpy's average
	// with weights w_k^2), and no clamp anywhere; the other rules are the papers' equations. The scalar
	// form ignores it.
	BABFL bool
	// BFLP makes the tensor form behave like the public code of Ozer et al. (2022), BFL-P, where it
	// differs from the paper's equations: clamped client log-variances (all rules but AALV), clamped
	// partial sums in EAA and GAA, floor(w_k N) samples and the unbiased variance in PPA (bflp.go has
	// the details). The scalar form ignores it.
	BFLP bool
}

func (o Options) populationSize() (int, error) {
	switch {
	case o.PopulationSize == 0:
		return DefaultPopulationSize, nil
	case o.PopulationSize < 0:
		return 0, fmt.Errorf("aggregate: PPA population size %d is negative", o.PopulationSize)
	case o.PopulationSize > MaxPopulationSize:
		return 0, fmt.Errorf("aggregate: PPA population size %d is too large; at most %d", o.PopulationSize, MaxPopulationSize)
	}
	return o.PopulationSize, nil
}
