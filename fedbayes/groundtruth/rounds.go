package groundtruth

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
)

// PriorPolicy names the prior a client trains against in round t > 1.
type PriorPolicy string

// The two prior policies of the papers (docs/engine.md, training.prior).
const (
	// FixedPrior keeps the problem's prior N(m0, S0) every round; the global model is only the
	// clients' starting point (Ozer et al. (2022), Alg. 1; the engine's default training.prior: fixed).
	// A client that reaches its exact posterior forgets the starting point, so its message is the same
	// every round: only a rule that reads the previous global (DWC) moves after round 1.
	FixedPrior PriorPolicy = "fixed"
	// UpdatedPrior makes the previous round's global the clients' prior (Fischer et al. (2024),
	// Sec. 3.7; the engine's training.prior: previous-global): client k's posterior in round t is
	// g_{t-1}(w) p(D_k | w), normalised.
	UpdatedPrior PriorPolicy = "previous-global"
)

// PriorPolicies returns both policies, fixed first.
func PriorPolicies() []PriorPolicy { return []PriorPolicy{FixedPrior, UpdatedPrior} }

// DefaultRounds is the number of federated rounds of RunRounds when RoundsOptions.Rounds is 0.
const DefaultRounds = 20

// RoundsOptions configures RunRounds.
type RoundsOptions struct {
	// Rounds is the number of federated rounds T (0: DefaultRounds).
	Rounds int
	// Prior is the clients' prior from round 2 on ("": FixedPrior).
	Prior PriorPolicy
	// Rules to run (nil: aggregate.Rules(), every rule); Weighting the client weights of the weighted
	// rules ("": Size). PopulationSize and Seed are PPA's, as in RuleOptions; PPA gets the same seed
	// every round, so that a rule whose inputs do not change gives the same global.
	Rules          []aggregate.Rule
	Weighting      Weighting
	PopulationSize int
	Seed           int64
	// Sites adds the site-based methods' trajectories after the rules' (linear problems only;
	// siteTrajectory): partitioned VI and expectation propagation.
	Sites bool
}

// RoundPoint is one rule's global after round Round, measured against the exact global posterior
// (the same in every round: the prior times all likelihoods, counted once).
type RoundPoint struct {
	Round int `json:"round"`
	// KL both ways (nats, whole vector; +Inf for a point mass), W2, the mean error in exact posterior
	// standard deviations (root mean square over weights) and the geometric mean variance ratio, as
	// in Distances.
	KLToTruth   Value   `json:"kl_q_p"`
	KLFromTruth Value   `json:"kl_p_q"`
	W2          float64 `json:"w2"`
	MeanErrorSD float64 `json:"mean_error_sd"`
	VarRatio    float64 `json:"var_ratio"`
	// Change is how far the global moved in this round: the largest over weights of
	// |m_t - m_{t-1}| / sd_exact and |log v_t - log v_{t-1}| (round 1: from the prior's diagonal; the
	// variance term is left out where a variance is 0).
	Change float64 `json:"change"`
	// Held counts the weights whose global equals the previous round's exactly: for DWC, the weights
	// where its precision was not positive and aggregate.DWCKeepPrevious kept the previous global.
	Held int `json:"held,omitempty"`
}

// Trajectory is one rule over the rounds.
type Trajectory struct {
	Label     string    `json:"label"`
	Rule      string    `json:"rule"`
	Weighting Weighting `json:"weighting,omitempty"`
	// Points holds rounds 1.. in order; fewer than the rounds asked when Stopped is set.
	Points []RoundPoint `json:"points"`
	// Final is the global after the last round reached.
	Final Diagonal `json:"final"`
	// Stopped says why the rule gave no global in the round after its last point ("" when it ran
	// every round).
	Stopped string `json:"stopped,omitempty"`
	// Note says when the rule could not follow the prior policy (FedAvg's point mass is no prior: its
	// clients keep the problem's prior).
	Note string `json:"note,omitempty"`
}

// RoundsResult is every rule over T federated rounds on one linear problem.
type RoundsResult struct {
	Config Config      `json:"config"`
	Prior  PriorPolicy `json:"prior"`
	Rounds int         `json:"rounds"`
	// Clients is the number of clients.
	Clients int `json:"clients"`
	// FloorKLToTruth and FloorKLFromTruth are the floors of Result.References: KL(q || p) of the
	// global mean-field VI and KL(p || q) of the global marginals.
	FloorKLToTruth   float64 `json:"floor_kl_q_p"`
	FloorKLFromTruth float64 `json:"floor_kl_p_q"`
	// FloorVarRatio is the variance ratio of the global mean-field VI: the shrinkage of the best
	// diagonal Gaussian in KL(q || p) (below 1 when the posterior's precision is not diagonal).
	FloorVarRatio float64 `json:"floor_var_ratio"`
	// FrontierExcess is the smallest excess over those floors any diagonal Gaussian has (Frontier):
	// what RoundsSummary.ToFrontier measures the rounds against.
	FrontierExcess float64      `json:"frontier_excess"`
	Trajectories   []Trajectory `json:"trajectories"`
}

// RunRounds runs T federated rounds of every rule on a linear problem, as the papers' training loop
// does (Ozer et al. (2022), Alg. 1): in round t every client computes its exact posterior given its
// data and the round's prior (the problem's prior under FixedPrior; the previous global, a diagonal
// Gaussian, under UpdatedPrior: precision diag(1/v) + X_k^T X_k / s2, Bishop (2006), Eqs. 3.50-3.51),
// sends its mean-field version (MeanFieldVI, as in round one), and the server applies the rule
// (DWC with the previous global as its prior, Fischer et al. (2024), Eq. 17); the result is the next
// round's global. Each rule runs its own trajectory. Every round's global is measured against the one
// exact global posterior, the prior times all likelihoods (GlobalFromClients). Round 1 gives the
// same globals, bit for bit, as RunProblem. With opt.Sites, partitioned VI and expectation
// propagation (siteTrajectory) follow the rules: their clients train against their cavities instead
// of a prior the policy sets.
//
// A rule that fails in some round (for instance a precision that is not positive, or a global outside
// float64) ends its trajectory there with the reason in Trajectory.Stopped; that is a finding, not
// an error.
func RunRounds(p *Problem, opt RoundsOptions) (*RoundsResult, error) {
	if p.Config.Likelihood == Logistic {
		return nil, fmt.Errorf("groundtruth: rounds need the exact posterior of a linear problem: use RunRoundsLogistic")
	}
	posterior := func(prior *Gaussian, c Data) (*Gaussian, error) {
		return LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
	}
	full, err := posteriors(p, posterior)
	if err != nil {
		return nil, err
	}
	if len(full) == 0 {
		return nil, fmt.Errorf("groundtruth: no clients")
	}
	exact, err := GlobalFromClients(p.Model.Prior, full)
	if err != nil {
		return nil, err
	}
	out, err := runRounds(p, opt, full, exact, posterior)
	if err != nil {
		return nil, err
	}
	if opt.Sites {
		for _, m := range siteMethods {
			tr, err := siteTrajectory(p, m, out.Rounds, exact)
			if err != nil {
				return nil, err
			}
			out.Trajectories = append(out.Trajectories, tr)
		}
	}
	return out, nil
}

// RunRoundsLogistic is RunRounds for a logistic problem: each client sends the mean-field version of
// its Laplace approximation (Bishop (2006), Sec. 4.4) under the round's prior, and every round's
// global is measured against the HMC reference of HMCReference (cached in cacheDir, as RunLogistic).
// Round 1 gives the same globals, bit for bit, as RunLogistic.
func RunRoundsLogistic(p *Problem, opt RoundsOptions, hc HMCConfig, cacheDir string) (*RoundsResult, error) {
	if p.Config.Likelihood != Logistic {
		return nil, fmt.Errorf("groundtruth: RunRoundsLogistic on a %q problem", p.Config.Likelihood)
	}
	posterior := func(prior *Gaussian, c Data) (*Gaussian, error) { return LogisticModel{Prior: prior}.Laplace(c) }
	full, err := posteriors(p, posterior)
	if err != nil {
		return nil, err
	}
	_, truth, err := hmcTruth(p, hc, cacheDir)
	if err != nil {
		return nil, err
	}
	return runRounds(p, opt, full, truth, posterior)
}

// runRounds runs the rounds of RunRounds: full are the clients' round-1 posteriors (under the
// problem's prior), truth the global posterior every round is measured against, and posterior
// computes a client's posterior under another prior.
func runRounds(p *Problem, opt RoundsOptions, full []*Gaussian, truth *Gaussian,
	posterior func(prior *Gaussian, c Data) (*Gaussian, error)) (*RoundsResult, error) {
	T := opt.Rounds
	if T == 0 {
		T = DefaultRounds
	}
	if T < 1 || T > 10000 {
		return nil, fmt.Errorf("groundtruth: rounds %d: want 1 to 10000", T)
	}
	policy := opt.Prior
	if policy == "" {
		policy = FixedPrior
	}
	if policy != FixedPrior && policy != UpdatedPrior {
		return nil, fmt.Errorf("groundtruth: unknown prior policy %q (want %q or %q)", policy, FixedPrior, UpdatedPrior)
	}
	wt := opt.Weighting
	if wt == "" {
		wt = Size
	}
	if wt != Equal && wt != Size {
		return nil, fmt.Errorf("groundtruth: unknown weighting %q (want %q or %q)", wt, Equal, Size)
	}
	rules := opt.Rules
	if rules == nil {
		rules = aggregate.Rules()
	}
	K := len(p.Clients)
	if K == 0 || len(full) != K {
		return nil, fmt.Errorf("groundtruth: %d client posteriors for %d clients", len(full), K)
	}
	fixedMF := make([]Diagonal, K)
	for k, g := range full {
		var err error
		if fixedMF[k], err = MeanFieldVI(g); err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
	}
	vi, err := MeanFieldVI(truth)
	if err != nil {
		return nil, err
	}
	floorVI, err := compareMoments(vi, truth)
	if err != nil {
		return nil, err
	}
	floorMom, err := compareMoments(MeanFieldMoment(truth), truth)
	if err != nil {
		return nil, err
	}
	_, frontier, err := Frontier(truth)
	if err != nil {
		return nil, err
	}
	out := &RoundsResult{Config: p.Config, Prior: policy, Rounds: T, Clients: K,
		FloorKLToTruth: float64(floorVI.KLToTruth), FloorKLFromTruth: float64(floorMom.KLFromTruth), FloorVarRatio: floorVI.VarRatio,
		FrontierExcess: frontier}
	sizes := p.Sizes()
	priorDiag := MeanFieldMoment(p.Model.Prior)
	for _, r := range rules {
		ro := RuleOptions{Rules: []aggregate.Rule{r}, Weightings: []Weighting{wt},
			PopulationSize: opt.PopulationSize, Seed: opt.Seed}
		tr := Trajectory{Rule: string(r)}
		if r.Weighted() {
			tr.Weighting = wt
		}
		tr.Label = Aggregate{Rule: r, Weighting: tr.Weighting}.Label()
		updated := policy == UpdatedPrior
		if updated && r == aggregate.FedAvg {
			updated = false
			tr.Note = "a point mass is no prior: its clients keep the problem's prior"
		}
		prev := priorDiag
		for t := 1; t <= T; t++ {
			msgs := fixedMF
			if updated && t > 1 {
				if msgs, err = clientsUnder(p, prev, posterior); err != nil {
					tr.Stopped = fmt.Sprintf("round %d: %v", t, err)
					break
				}
			}
			aggs, err := ApplyRules(msgs, sizes, prev, ro)
			if err != nil {
				tr.Stopped = fmt.Sprintf("round %d: %v", t, err)
				break
			}
			q := aggs[0].Q
			dist, err := compareMoments(q, truth)
			if err != nil {
				tr.Stopped = fmt.Sprintf("round %d: %v", t, err)
				break
			}
			tr.Points = append(tr.Points, RoundPoint{Round: t, KLToTruth: dist.KLToTruth, KLFromTruth: dist.KLFromTruth,
				W2: dist.W2, MeanErrorSD: dist.MeanErrorSD, VarRatio: dist.VarRatio, Change: change(prev, q, truth), Held: held(prev, q)})
			prev = q
		}
		tr.Final = prev
		out.Trajectories = append(out.Trajectories, tr)
	}
	return out, nil
}

// posteriors returns every client's posterior under the problem's prior.
func posteriors(p *Problem, posterior func(prior *Gaussian, c Data) (*Gaussian, error)) ([]*Gaussian, error) {
	full := make([]*Gaussian, len(p.Clients))
	for k, c := range p.Clients {
		g, err := posterior(p.Model.Prior, c)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
		full[k] = g
	}
	return full, nil
}

// clientsUnder returns every client's mean-field message when its prior is the diagonal Gaussian g:
// the MeanFieldVI of its posterior under g (posterior: exact for the linear model, Laplace for the
// logistic one).
func clientsUnder(p *Problem, g Diagonal, posterior func(prior *Gaussian, c Data) (*Gaussian, error)) ([]Diagonal, error) {
	if g.PointMass() {
		return nil, fmt.Errorf("groundtruth: the previous global has a variance 0 and cannot be a prior")
	}
	prior, err := g.Full()
	if err != nil {
		return nil, fmt.Errorf("groundtruth: the previous global as a prior: %w", err)
	}
	out := make([]Diagonal, len(p.Clients))
	for k, c := range p.Clients {
		post, err := posterior(prior, c)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
		if out[k], err = MeanFieldVI(post); err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
	}
	return out, nil
}

// change is the largest over weights of |Δmean| / sd_exact and |Δ log variance| between two globals
// (the variance term is left out when either variance is 0: a point mass).
func change(prev, q Diagonal, exact *Gaussian) float64 {
	c := 0.0
	for i := range q.Mean {
		c = math.Max(c, math.Abs(q.Mean[i]-prev.Mean[i])/math.Sqrt(exact.Cov.At(i, i)))
		if q.Var[i] != prev.Var[i] && q.Var[i] > 0 && prev.Var[i] > 0 {
			c = math.Max(c, math.Abs(math.Log(q.Var[i])-math.Log(prev.Var[i])))
		}
	}
	return c
}

// held counts the weights whose mean and variance are the same in prev and q.
func held(prev, q Diagonal) int {
	n := 0
	for i := range q.Mean {
		if q.Mean[i] == prev.Mean[i] && q.Var[i] == prev.Var[i] {
			n++
		}
	}
	return n
}
