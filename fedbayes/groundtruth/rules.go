package groundtruth

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"
)

// Weighting names the client weights given to the weighted rules.
type Weighting string

// The client weightings of Fischer et al. (2024), Eqs. 18-19 (Ozer et al. (2022): FVBA and FVBWA).
const (
	// Equal weights w_k = 1/K (Fischer et al. (2024), Eq. 18).
	Equal Weighting = "equal"
	// Size weights w_k = n_k / sum n_j (Fischer et al. (2024), Eq. 19).
	Size Weighting = "size"
)

// Aggregate is one rule's global posterior after one round.
type Aggregate struct {
	// Rule is the aggregate package's rule; Weighting the client weights it used ("" for the rules
	// that use none: Conflation and DWC).
	Rule      aggregate.Rule `json:"rule"`
	Weighting Weighting      `json:"weighting,omitempty"`
	// Q is the rule's diagonal Gaussian (FedAvg: a point mass, variances 0).
	Q Diagonal `json:"q"`
}

// Label is the rule's name with its weighting, e.g. "EAA/size".
func (a Aggregate) Label() string {
	if a.Weighting == "" {
		return string(a.Rule)
	}
	return string(a.Rule) + "/" + string(a.Weighting)
}

// RuleOptions configures ApplyRules.
type RuleOptions struct {
	// Rules to apply (nil: aggregate.Rules(), every rule). The aliases NWA, WS, WC and LLP are the
	// same rules as EAA, GAA, CF and RKLB (docs/aggregation.md) and give the same numbers.
	Rules []aggregate.Rule
	// Weightings to apply to each weighted rule (nil: Equal and Size).
	Weightings []Weighting
	// PopulationSize is PPA's N (0: aggregate.DefaultPopulationSize); Seed seeds PPA, parameter i
	// with Seed + i.
	PopulationSize int
	Seed           int64
	// Samples, when positive, also runs the sample-based one-round baselines EP-MCMC and FedPA of
	// package predictive on that many draws from each client's exact posterior (linear problems).
	Samples int
	// DrawSets, with Samples, runs EP-MCMC (diagonal and full covariance) again on that many further
	// independent sets of client draws (Result.DrawSets), for its Monte Carlo error.
	DrawSets int
	// PredictiveSpace also runs the predictive-space methods of package predictive (BCM, mixture,
	// beta-PredBayes) on the clients' exact predictives (linear problems).
	PredictiveSpace bool
}

// ApplyRules aggregates the clients' diagonal Gaussians with every rule, one parameter at a time
// with aggregate.Scalar (the float64 form of each rule). sizes are the clients' numbers of
// examples (for Size weights); prior is the prior's diagonal, which DWC takes as the previous global
// N(mu_o, s2_o) (Fischer et al. (2024), Eq. 17: at the first round the previous global is the prior).
func ApplyRules(clients []Diagonal, sizes []int, prior Diagonal, opt RuleOptions) ([]Aggregate, error) {
	K := len(clients)
	if K == 0 {
		return nil, fmt.Errorf("groundtruth: no clients")
	}
	if len(sizes) != K {
		return nil, fmt.Errorf("groundtruth: %d sizes for %d clients", len(sizes), K)
	}
	d := prior.Dim()
	for k, c := range clients {
		if c.Dim() != d || len(c.Var) != d {
			return nil, fmt.Errorf("groundtruth: client %d has dimension %d, the prior %d", k, c.Dim(), d)
		}
	}
	rules := opt.Rules
	if rules == nil {
		rules = aggregate.Rules()
	}
	weightings := opt.Weightings
	if weightings == nil {
		weightings = []Weighting{Equal, Size}
	}
	weights := map[Weighting][]float64{}
	for _, wt := range weightings {
		switch wt {
		case Equal:
			weights[wt] = aggregate.EqualWeights(K)
		case Size:
			w, err := aggregate.SizeWeights(sizes)
			if err != nil {
				return nil, fmt.Errorf("groundtruth: size weights: %w", err)
			}
			weights[wt] = w
		default:
			return nil, fmt.Errorf("groundtruth: unknown weighting %q (want %q or %q)", wt, Equal, Size)
		}
	}
	var out []Aggregate
	marg := make([]aggregate.Gaussian, K)
	for _, r := range rules {
		wts := weightings
		if !r.Weighted() {
			wts = []Weighting{""}
		}
		for _, wt := range wts {
			a := Aggregate{Rule: r, Weighting: wt, Q: Diagonal{Mean: make([]float64, d), Var: make([]float64, d)}}
			w := weights[wt] // nil for the unweighted rules: equal weights, unused
			for i := 0; i < d; i++ {
				for k, c := range clients {
					marg[k] = c.Marginal(i)
				}
				prev := prior.Marginal(i)
				g, err := aggregate.Scalar(r, marg, w, aggregate.Options{
					Previous: &prev, DWCPolicy: aggregate.DWCKeepPrevious,
					PopulationSize: opt.PopulationSize, Seed: opt.Seed + int64(i),
				})
				if err != nil {
					return nil, fmt.Errorf("groundtruth: %s, parameter %d: %w", a.Label(), i, err)
				}
				a.Q.Mean[i], a.Q.Var[i] = g.Mean, g.Var
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// parseRule is aggregate.ParseRule with this package's error prefix.
func parseRule(name string) (aggregate.Rule, error) {
	r, err := aggregate.ParseRule(name)
	if err != nil {
		return "", fmt.Errorf("groundtruth: %w", err)
	}
	return r, nil
}
