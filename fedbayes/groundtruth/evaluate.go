package groundtruth

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"

	"gonum.org/v1/gonum/mat"
)

// Scored is one posterior (a rule's aggregate or a reference) with its distances to the truth.
type Scored struct {
	// Label names it: a rule with its weighting ("EAA/size"), or a reference.
	Label string `json:"label"`
	// Rule and Weighting are set for a rule's aggregate.
	Rule      string    `json:"rule,omitempty"`
	Weighting Weighting `json:"weighting,omitempty"`
	Q         Diagonal  `json:"q"`
	Distances Distances `json:"distances"`
	// Failed says why a baseline gave no posterior (Q and Distances are then empty).
	Failed string `json:"failed,omitempty"`
}

// The reference labels of Result.References.
const (
	// RefMeanFieldVI is the exact global posterior's best diagonal Gaussian in KL(q || p), what a
	// centralised mean-field VI would learn: the floor of KLToTruth over diagonal Gaussians.
	RefMeanFieldVI = "global mean-field VI"
	// RefMoment is the exact global posterior's marginals (moment matching): the floor of
	// KLFromTruth over diagonal Gaussians.
	RefMoment = "global marginals"
)

// GaussianJSON is a Gaussian written as plain arrays.
type GaussianJSON struct {
	Mean []float64   `json:"mean"`
	Cov  [][]float64 `json:"cov"`
}

func toJSON(g *Gaussian) GaussianJSON {
	d := g.Dim()
	out := GaussianJSON{Mean: append([]float64(nil), g.Mean.RawVector().Data...), Cov: make([][]float64, d)}
	for i := range out.Cov {
		out.Cov[i] = make([]float64, d)
		for j := range out.Cov[i] {
			out.Cov[i][j] = g.Cov.At(i, j)
		}
	}
	return out
}

// Result is one problem solved exactly and every rule measured against it.
type Result struct {
	Config Config `json:"config"`
	// Sizes are the clients' numbers of examples; WTrue the weights that generated the data.
	Sizes []int     `json:"sizes"`
	WTrue []float64 `json:"w_true"`
	// Exact is the exact global posterior, product of the client posteriors over the prior K-1
	// times (GlobalFromClients); ExactPredictive its predictive scores on the held-out data.
	Exact           GaussianJSON `json:"exact"`
	ExactPredictive Predictive   `json:"exact_predictive"`
	// Clients are the diagonal Gaussians the clients sent (MeanFieldVI of their exact posteriors).
	Clients []Diagonal `json:"clients"`
	// References are the floors: the best diagonal Gaussians of the exact posterior (RefMeanFieldVI,
	// RefMoment), the diagonal Gaussian with the smallest excess over both (RefFrontier), and DWC
	// on the clients' marginals (RefDWCMarginals).
	References []Scored `json:"references"`
	// Rules holds every rule's aggregate, in the order of ApplyRules.
	Rules []Scored `json:"rules"`
	// PredictiveRules are the predictive-space methods (RuleOptions.PredictiveSpace).
	PredictiveRules []PredictiveScored `json:"predictive_rules,omitempty"`
	// Reference is the HMC run behind Exact for a logistic problem (nil for the linear one, whose
	// Exact is exact).
	Reference *HMCResult `json:"reference,omitempty"`
	// DrawSets are EP-MCMC's runs on further independent sets of client draws (RuleOptions.DrawSets).
	DrawSets []DrawSet `json:"draw_sets,omitempty"`
}

// Run simulates cfg, computes every client's exact posterior and its mean-field version, the exact
// global posterior, every rule's aggregate, and their distances to the truth.
func Run(cfg Config, opt RuleOptions) (*Result, error) {
	p, err := Simulate(cfg)
	if err != nil {
		return nil, err
	}
	return RunProblem(p, opt)
}

// RunProblem is Run on a problem already simulated (linear; RunLogistic runs a logistic one).
func RunProblem(p *Problem, opt RuleOptions) (*Result, error) {
	if p.Config.Likelihood == Logistic {
		return nil, fmt.Errorf("groundtruth: a logistic problem has no exact posterior: use RunLogistic")
	}
	K := len(p.Clients)
	full := make([]*Gaussian, K)
	mf := make([]Diagonal, K)
	for k, c := range p.Clients {
		g, err := p.Model.Posterior(c)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
		full[k] = g
		if mf[k], err = MeanFieldVI(g); err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
	}
	exact, err := GlobalFromClients(p.Model.Prior, full)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: p.Config, Sizes: p.Sizes(), WTrue: p.WTrue, Exact: toJSON(exact), Clients: mf}
	if res.ExactPredictive, err = Score(exact.Mean.RawVector().Data, exact.Cov, p.Model.NoiseVar, p.Test); err != nil {
		return nil, err
	}
	score := func(q Diagonal) (Distances, error) { return Compare(q, exact, p.Model.NoiseVar, p.Test) }
	marginals := make([]Diagonal, K)
	for k, g := range full {
		marginals[k] = MeanFieldMoment(g)
	}
	if err := scoreRules(res, exact, p.Model.Prior, marginals, RefDWCMarginals, opt, score); err != nil {
		return nil, err
	}
	if opt.PredictiveSpace {
		if res.PredictiveRules, err = predictiveSpace(p, full, exact); err != nil {
			return nil, err
		}
	}
	if opt.Samples > 0 {
		qs, fulls, failed, err := sampleBaselines(full, res.Sizes, p.Model.Prior, opt.Samples, uint64(opt.Seed))
		if err != nil {
			return nil, err
		}
		for _, label := range []string{LabelEPMCMC, LabelEPMCMCFull, LabelFedPA, LabelFedPAIterated} {
			if msg, bad := failed[label]; bad {
				res.Rules = append(res.Rules, Scored{Label: label, Rule: label, Failed: msg})
				continue
			}
			var dist Distances
			q, isDiag := qs[label]
			if isDiag {
				dist, err = Compare(q, exact, p.Model.NoiseVar, p.Test)
			} else {
				g := fulls[label]
				q = MeanFieldMoment(g)
				if dist, err = compareGaussian(g, false, exact); err == nil {
					dist.Predictive, err = Score(g.Mean.RawVector().Data, g.Cov, p.Model.NoiseVar, p.Test)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("groundtruth: %s: %w", label, err)
			}
			res.Rules = append(res.Rules, Scored{Label: label, Rule: label, Q: q, Distances: dist})
		}
		if opt.DrawSets > 0 {
			if res.DrawSets, err = drawSets(full, p.Model.Prior, exact, opt.Samples, opt.DrawSets, uint64(opt.Seed)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// scoreRules measures against truth, with score, the references (truth's best diagonal Gaussians,
// the frontier between them, and DWC on the clients' marginals, labelled dwcLabel) and every
// rule's aggregate of res.Clients under the prior's marginals, appending them to res.References and
// res.Rules.
func scoreRules(res *Result, truth, prior *Gaussian, marginals []Diagonal, dwcLabel string, opt RuleOptions, score func(Diagonal) (Distances, error)) error {
	vi, err := MeanFieldVI(truth)
	if err != nil {
		return err
	}
	frontier, _, err := Frontier(truth)
	if err != nil {
		return err
	}
	for _, ref := range []struct {
		label string
		q     Diagonal
	}{{RefMeanFieldVI, vi}, {RefMoment, MeanFieldMoment(truth)}, {RefFrontier, frontier}} {
		dist, err := score(ref.q)
		if err != nil {
			return fmt.Errorf("groundtruth: %s: %w", ref.label, err)
		}
		res.References = append(res.References, Scored{Label: ref.label, Q: ref.q, Distances: dist})
	}
	// DWC on the clients' marginals, with the policy that reports a weight whose combined
	// precision is not positive instead of keeping the previous global there.
	if q, err := dwcOn(marginals, prior); err != nil {
		res.References = append(res.References, Scored{Label: dwcLabel, Failed: err.Error()})
	} else if dist, err := score(q); err != nil {
		return fmt.Errorf("groundtruth: %s: %w", dwcLabel, err)
	} else {
		res.References = append(res.References, Scored{Label: dwcLabel, Q: q, Distances: dist})
	}
	aggs, err := ApplyRules(res.Clients, res.Sizes, MeanFieldMoment(prior), opt)
	if err != nil {
		return err
	}
	for _, a := range aggs {
		dist, err := score(a.Q)
		if err != nil {
			return fmt.Errorf("groundtruth: %s: %w", a.Label(), err)
		}
		res.Rules = append(res.Rules, Scored{Label: a.Label(), Rule: string(a.Rule), Weighting: a.Weighting, Q: a.Q, Distances: dist})
	}
	return nil
}

// ExactGaussian returns the exact global posterior of r as a Gaussian.
func (r *Result) ExactGaussian() (*Gaussian, error) {
	d := len(r.Exact.Mean)
	cov := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		if len(r.Exact.Cov[i]) != d {
			return nil, fmt.Errorf("groundtruth: exact covariance row %d has %d entries, want %d", i, len(r.Exact.Cov[i]), d)
		}
		for j := i; j < d; j++ {
			cov.SetSym(i, j, r.Exact.Cov[i][j])
		}
	}
	return NewGaussian(r.Exact.Mean, cov)
}

// dwcOn is DWC (Fischer et al. (2024), Eq. 17) on the clients' diagonal Gaussians with the prior's
// marginals as the previous global and the policy DWCFail: an error names the first weight whose
// combined precision is not positive.
func dwcOn(clients []Diagonal, prior *Gaussian) (Diagonal, error) {
	d := prior.Dim()
	q := Diagonal{Mean: make([]float64, d), Var: make([]float64, d)}
	marg := make([]aggregate.Gaussian, len(clients))
	pm := MeanFieldMoment(prior)
	for i := range d {
		for k, c := range clients {
			marg[k] = c.Marginal(i)
		}
		prev := pm.Marginal(i)
		g, err := aggregate.Scalar(aggregate.DWC, marg, nil, aggregate.Options{Previous: &prev, DWCPolicy: aggregate.DWCFail})
		if err != nil {
			return Diagonal{}, fmt.Errorf("weight %d: %w", i, err)
		}
		q.Mean[i], q.Var[i] = g.Mean, g.Var
	}
	return q, nil
}
