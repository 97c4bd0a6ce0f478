package plots

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"
)

// ToyRules aggregates univariate Gaussian clients with each rule (aggregate.Scalar) and draws the
// toy aggregation chart with the exact mixture, as in Ozer et al. (2022), Fig. 1 and Jamoussi et
// al. (BA-BFL), Fig. 1. It also returns the aggregated Gaussians, in the order drawn.
//
// rules nil means every rule of aggregate.Rules() that has a density here: FedAvg (a point mass)
// is left out, and DWC is included only when opt.Previous is set. A rule named explicitly that
// fails (FedAvg, DWC without a previous global) is an error.
func ToyRules(name, title string, clients []aggregate.Gaussian, weights []float64, rules []aggregate.Rule, opt aggregate.Options) (*Chart, []NamedGaussian, error) {
	explicit := rules != nil
	if !explicit {
		for _, r := range aggregate.Rules() {
			if r == aggregate.FedAvg || (r == aggregate.DWC && opt.Previous == nil) {
				continue
			}
			rules = append(rules, r)
		}
	}
	d := Toy{Title: title, Weights: weights, Mixture: true}
	for _, c := range clients {
		d.Clients = append(d.Clients, Gaussian1D{Mean: c.Mean, Var: c.Var})
	}
	for _, r := range rules {
		g, err := aggregate.Scalar(r, clients, weights, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("plots: toy aggregation %q, rule %s: %w", name, r, err)
		}
		if g.Var <= 0 {
			return nil, nil, fmt.Errorf("plots: toy aggregation %q, rule %s: variance %g has no density to draw", name, r, g.Var)
		}
		d.Aggregates = append(d.Aggregates, NamedGaussian{Name: string(r), Mean: g.Mean, Var: g.Var})
	}
	c, err := ToyAggregation(name, d)
	if err != nil {
		return nil, nil, err
	}
	return c, d.Aggregates, nil
}
