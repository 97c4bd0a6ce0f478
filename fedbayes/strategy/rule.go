package strategy

import (
	"fmt"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
)

// MetricDWCFallbacks counts the parameter elements where DWC's precision was not positive (recorded
// by the DWC strategy each round).
const MetricDWCFallbacks = "dwc_fallbacks"

// Weightings are the client weightings of the parameter-space rules.
var Weightings = []string{"equal", "size", "maxdisc", "fixedpoint"}

// DWCPolicies are DWC's policies where the precision is not positive (aggregate.DWCPolicy).
var DWCPolicies = []string{"keep-previous", "conflation", "error"}

// Rule is a parameter-space rule of package aggregate with a client weighting: the server step of
// Ozer et al. (2022), Alg. 1 and Fischer et al. (2024), Alg. 1.
type Rule struct {
	// Rule is the aggregation rule.
	Rule aggregate.Rule
	// Settings are the weighting, PPA's population, DWC's policy and the compatibility mode.
	Settings Settings
}

// NewRule returns the strategy of an aggregate rule, checking the settings it reads (CheckRule).
func NewRule(rule aggregate.Rule, s Settings) (*Rule, error) {
	if err := CheckRule(rule, s); err != nil {
		return nil, err
	}
	return &Rule{Rule: rule, Settings: s}, nil
}

// CheckRule checks the options a parameter-space rule reads, in this order, and returns a
// *FieldError naming the first field at fault: FedAvg is not for Bayesian models (it drops the
// variances); the weighting is one of Weightings ("" is equal), and maxdisc and fixedpoint need
// Gaussian posteriors (model kind bayesian, or not stated); PPA's population is 0 (the default) or
// at least 2, and is set only for PPA; the DWC policy is one of DWCPolicies ("" is keep-previous).
// It is the one check of these options: NewRule calls it, and so does the engine's validation of
// a spec. A rule takes no aggregation.options: the weighting, population and policy are its options.
func CheckRule(rule aggregate.Rule, s Settings) error {
	if HasOptions(s) {
		return &FieldError{Field: OptionsField, Problem: fmt.Sprintf("set, but aggregation.rule is %s: a parameter-space rule takes no options of its own "+
			"(aggregation.weighting, aggregation.population and aggregation.dwc_policy configure it)", rule)}
	}
	if rule == aggregate.FedAvg && s.Kind == models.Bayesian {
		return &FieldError{Field: "aggregation.rule", Problem: "FedAvg drops the variances, but model.kind is bayesian; use a Gaussian rule " +
			"(GAA, AALV, ...) or model.kind deterministic or mcdropout"}
	}
	if s.Weighting != "" && !slices.Contains(Weightings, s.Weighting) {
		return notOneOf("aggregation.weighting", s.Weighting, Weightings)
	}
	if (s.Weighting == "maxdisc" || s.Weighting == "fixedpoint") && s.Kind != "" && s.Kind != models.Bayesian {
		return &FieldError{Field: "aggregation.weighting", Problem: fmt.Sprintf("%q needs Gaussian posteriors (KL divergences), but model.kind is %q", s.Weighting, s.Kind)}
	}
	if s.Population < 0 {
		return &FieldError{Field: "aggregation.population", Problem: fmt.Sprintf("%d; must be >= 0 (0 means %d)", s.Population, aggregate.DefaultPopulationSize)}
	}
	if s.Population == 1 {
		// PPA pools N samples drawn from the clients and takes their mean and variance: one sample
		// has no variance (the aggregation fails at round 1).
		return &FieldError{Field: "aggregation.population", Problem: fmt.Sprintf("1: PPA takes the variance of a population of N samples drawn from the clients, and one sample has none; use at least 2 (0 means %d)", aggregate.DefaultPopulationSize)}
	}
	if s.Population != 0 && rule != aggregate.PPA {
		return populationUnused(string(rule))
	}
	if s.DWCPolicy != "" && !slices.Contains(DWCPolicies, s.DWCPolicy) {
		return notOneOf("aggregation.dwc_policy", s.DWCPolicy, DWCPolicies)
	}
	return nil
}

// CheckNotRule checks the settings of the strategy name, which is not a parameter-space rule,
// against the options only a rule reads: PPA's population must be unset (a *FieldError otherwise).
func CheckNotRule(name string, s Settings) error {
	if s.Population != 0 {
		return populationUnused(name)
	}
	return nil
}

// populationUnused is the error of a population given to a strategy other than PPA.
func populationUnused(name string) *FieldError {
	return &FieldError{Field: "aggregation.population", Problem: fmt.Sprintf("set, but aggregation.rule is %s; it applies to PPA", name)}
}

// maxQuoted is the longest value quoted whole in an error message; a longer one (a swept value of
// megabytes) is cut, as the engine cuts the values it quotes.
const maxQuoted = 400

// notOneOf is the error of a value of field that is not one of allowed.
func notOneOf(field, v string, allowed []string) *FieldError {
	if len(v) > maxQuoted {
		v = v[:maxQuoted] + fmt.Sprintf("... (%d bytes)", len(v))
	}
	return &FieldError{Field: field, Problem: fmt.Sprintf("%q is not one of %s", v, strings.Join(allowed, ", "))}
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
