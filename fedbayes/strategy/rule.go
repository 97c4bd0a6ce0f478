package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
)

// MetricDWCFallbacks counts the parameter elements where DWC's precision was not positive (recorded
// by the DWC strategy each round).
const MetricDWCFallbacks = "dwc_fallbacks"

// Weightings are the client weightings of the parameter-space rules.
var Weightings = []string{"equal", "size", "maxdisc", "fixedpoint"}

// Rule is a parameter-space rule of package aggregate with a client weighting: the server step of
// Ozer et al. (2022), Alg. 1 and Fischer et al. (2024), Alg. 1.
type Rule struct {
	// Rule is the aggregation rule.
	Rule aggregate.Rule
	// Settings are the weighting, PPA's population, DWC's policy and the compatibility mode.
	Settings Settings
}

// NewRule returns the strategy of an aggregate rule, checking the settings it reads.
func NewRule(rule aggregate.Rule, s Settings) (*Rule, error) {
	if rule == aggregate.FedAvg && s.Kind == models.Bayesian {
		return nil, &FieldError{Field: "aggregation.rule", Problem: "FedAvg drops the variances, but model.kind is bayesian; use a Gaussian rule " +
			"(GAA, AALV, ...) or model.kind deterministic or mcdropout"}
	}
	switch s.Weighting {
	case "", "equal", "size":
	case "maxdisc", "fixedpoint":
		if s.Kind != "" && s.Kind != models.Bayesian {
			return nil, &FieldError{Field: "aggregation.weighting", Problem: fmt.Sprintf("%q needs Gaussian posteriors (KL divergences), but model.kind is %q", s.Weighting, s.Kind)}
		}
	default:
		return nil, &FieldError{Field: "aggregation.weighting", Problem: fmt.Sprintf("unknown weighting %q", s.Weighting)}
	}
	return &Rule{Rule: rule, Settings: s}, nil
}

// dwcPolicy maps a DWC policy name to aggregate's.
func dwcPolicy(name string) aggregate.DWCPolicy {
	switch name {
	case "conflation":
		return aggregate.DWCUseConflation
	case "error":
		return aggregate.DWCFail
	}
	return aggregate.DWCKeepPrevious
}

// Aggregate weights the clients of the round and combines them into the new global posterior (Ozer et
// al. (2022), Alg. 1; Fischer et al. (2024), Alg. 1). The previous global is DWC's prior (Fischer et
// al. (2024), Eq. 17) and the fixed point of the distance weighting (Eq. 21).
func (s *Rule) Aggregate(r *Round) (*Global, error) {
	opt := aggregate.Options{
		PopulationSize: s.Settings.Population,
		Seed:           r.Seed,
		DWCPolicy:      dwcPolicy(s.Settings.DWCPolicy),
		BFLP:           s.Settings.Compat == models.CompatBFLP,
		BABFL:          s.Settings.Compat == models.CompatBABFL,
	}
	if s.Rule == aggregate.DWC {
		opt.PreviousGlobal = r.Previous
	}
	weighting := s.Settings.Weighting
	if weighting == "" {
		weighting = "equal"
	}
	var (
		w   []float64
		err error
	)
	switch weighting {
	case "equal":
		w = aggregate.EqualWeights(len(r.Sizes))
	case "size":
		w, err = aggregate.SizeWeights(r.Sizes)
	case "maxdisc":
		if _, err = r.Clients(); err == nil {
			w, err = aggregate.MaxDiscrepancyWeights(r.List, opt)
		}
	case "fixedpoint":
		if _, err = r.Clients(); err == nil {
			w, err = aggregate.FixedPointWeights(r.List, r.Previous, opt)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("client weights (%s): %w", weighting, err)
	}
	g := &Global{}
	var rep aggregate.Report
	if r.Stacked != nil {
		g.Posterior, rep, err = aggregate.StackedWithReport(s.Rule, r.Stacked, w, opt)
	} else {
		g.Posterior, rep, err = aggregate.PosteriorsWithReport(s.Rule, r.List, w, opt)
	}
	if err != nil {
		return nil, err
	}
	g.Weights = rep.Weights
	if s.Rule == aggregate.DWC {
		g.Metrics = map[string]float64{MetricDWCFallbacks: float64(rep.DWCFallbacks)}
	}
	return g, nil
}

func init() {
	for _, rule := range aggregate.Rules() {
		rule := rule
		registerBuiltin(string(rule), func(s Settings) (Strategy, error) { return NewRule(rule, s) })
	}
}
