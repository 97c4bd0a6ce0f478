package groundtruth

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"fedbayes.dev/fedbayes/aggregate"
	"gonum.org/v1/gonum/mat"
)

// The labels of the site-based methods' trajectories in a RoundsResult.
const (
	// PVILabel is partitioned variational inference (Ashman et al. (2022)).
	PVILabel = "PVI"
	// EPLabel is expectation propagation with diagonal sites, as FedEP (Guo et al. (2023)).
	EPLabel = "FedEP"
)

// projection is how a client turns its tilted distribution (its cavity times its likelihood, a
// Gaussian here) into a diagonal local approximation: MeanFieldVI, the KL(q || p) projection of
// partitioned VI, or MeanFieldMoment, the KL(p || q) projection (moment matching) of expectation
// propagation.
type projection func(*Gaussian) (Diagonal, error)

// momentProjection is MeanFieldMoment as a projection.
func momentProjection(g *Gaussian) (Diagonal, error) { return MeanFieldMoment(g), nil }

// pviSites runs partitioned variational inference (Ashman et al. (2022)) with the parallel schedule
// and mean-field Gaussian sites, on the site arithmetic of package aggregate: the global is the
// prior times one site per client, q = p Π_k t_k, every site starting at 1 (so round 1's cavity is
// the prior). In each round every client k takes its cavity q / t_k as its prior, sends the
// mean-field version of its posterior under it (posterior: exact for the linear model, so the local
// step is exact mean-field VI of the tilted distribution; Laplace for the logistic one), and its site
// becomes that local approximation divided by the cavity, damped by rho in natural parameters. The
// server multiplies the prior by the new sites. prior must be diagonal (the problem's prior is).
//
// On the linear model the fixed point is centralised mean-field VI of the exact global posterior:
// each site's precision is diag(X_kᵀX_k)/s2 from round 1 on, so the global precision is the diagonal
// of the exact precision, and at a fixed point every client's tilted mean equals the global mean,
// which sums the clients' stationarity conditions into the exact normal equations.
//
// visit is called with each round's global (after round t = 1..T); the first error stops the rounds.
func pviSites(p *Problem, prior Diagonal, T int, rho float64, posterior func(prior *Gaussian, c Data) (*Gaussian, error),
	visit func(t int, q Diagonal) error) error {
	_, err := siteRounds(p, prior, T, rho, posterior, MeanFieldVI, visit)
	return err
}

// siteRounds runs T rounds of a site-based method with the parallel schedule, as pviSites
// describes, with project as the clients' local step: MeanFieldVI gives partitioned VI,
// momentProjection expectation propagation (FedEP with exact local inference: the tilted distribution
// of the linear model is Gaussian, so its moments are exact, Guo et al. (2023)). It returns the sites
// after the last round.
func siteRounds(p *Problem, prior Diagonal, T int, rho float64, posterior func(prior *Gaussian, c Data) (*Gaussian, error),
	project projection, visit func(t int, q Diagonal) error) ([]aggregate.Natural, error) {
	p0, err := aggregate.NaturalOf(prior.Mean, prior.Var)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: the sites' prior: %w", err)
	}
	K := len(p.Clients)
	sites := make([]aggregate.Natural, K)
	for k := range sites {
		sites[k] = aggregate.NewNatural(p0.Len())
	}
	q := p0.Clone()
	for t := 1; t <= T; t++ {
		next := make([]aggregate.Natural, K)
		for k, c := range p.Clients {
			if next[k], err = siteClientStep(q, sites[k], k, c, rho, posterior, project); err != nil {
				return nil, fmt.Errorf("round %d: %w", t, err)
			}
		}
		sites = next
		if q, err = aggregate.Product(p0, sites); err != nil {
			return nil, fmt.Errorf("round %d: %w", t, err)
		}
		mean, variance, err := q.Moments()
		if err != nil {
			return nil, fmt.Errorf("round %d: the global: %w", t, err)
		}
		if err := visit(t, Diagonal{Mean: mean, Var: variance}); err != nil {
			return nil, err
		}
	}
	return sites, nil
}

// siteClientStep is client k's step of a site-based method: its cavity under the global q, the
// projection of its posterior under the cavity, and its new site damped by rho.
func siteClientStep(q, site aggregate.Natural, k int, c Data, rho float64,
	posterior func(prior *Gaussian, c Data) (*Gaussian, error), project projection) (aggregate.Natural, error) {
	cav, err := aggregate.Cavity(q, site, k)
	if err != nil {
		return aggregate.Natural{}, err
	}
	cm, cv, err := cav.Moments()
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("client %d's cavity: %w", k, err)
	}
	prior, err := Diagonal{Mean: cm, Var: cv}.Full()
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("client %d's cavity as a prior: %w", k, err)
	}
	post, err := posterior(prior, c)
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("client %d: %w", k, err)
	}
	mf, err := project(post)
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("client %d: %w", k, err)
	}
	local, err := aggregate.NaturalOf(mf.Mean, mf.Var)
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("client %d's local approximation: %w", k, err)
	}
	fresh, err := aggregate.SiteFrom(local, cav)
	if err != nil {
		return aggregate.Natural{}, err
	}
	return aggregate.Damp(site, fresh, rho)
}

// maxStabilityUnknowns bounds the size of the iteration matrix PVIStability builds (clients × weights
// unknowns, a dense square matrix of that order).
const maxStabilityUnknowns = 2000

// PVIStability returns the largest damping under which parallel PVI converges on the linear problem
// p: the bound rho < min over the eigenvalues mu of M of -2 Re(mu) / |mu|^2, where I + rho M is the
// Jacobian of one round's map on the sites' shifts once their precisions have settled (they settle
// to diag(X_kᵀX_k)/s2 for any damping). With D the global precision (diagonal), D_k client k's site
// precision and Λ_k = X_kᵀX_k/s2, client k's new mean given the others' sites is
// A_k⁻¹ (p0's shift + Σ_{j≠k} shift_j + X_kᵀy_k/s2) with A_k = D − D_k + Λ_k, so the block
// M_kj = (1 − δ_kj) D A_k⁻¹ − I. Undamped PVI (rho = 1) converges when the bound exceeds 1; the bound
// is 0 when an eigenvalue has a non-negative real part (no damping converges).
func PVIStability(p *Problem) (float64, error) {
	if p.Config.Likelihood == Logistic {
		return 0, fmt.Errorf("groundtruth: PVI's stability bound needs a linear problem")
	}
	prec0, _, err := p.Model.Prior.natural()
	if err != nil {
		return 0, err
	}
	d, K := p.Model.Prior.Dim(), len(p.Clients)
	if K*d > maxStabilityUnknowns {
		return 0, fmt.Errorf("groundtruth: PVI's stability bound for %d clients × %d weights: at most %d unknowns", K, d, maxStabilityUnknowns)
	}
	lik := make([]*mat.SymDense, K)
	D := make([]float64, d)
	for i := range D {
		D[i] = prec0.At(i, i)
	}
	for k, c := range p.Clients {
		lik[k] = mat.NewSymDense(d, nil)
		if c.N() > 0 {
			lik[k].SymOuterK(1/p.Model.NoiseVar, c.X.T())
		}
		for i := range D {
			D[i] += lik[k].At(i, i)
		}
	}
	M := mat.NewDense(K*d, K*d, nil)
	for k := range K {
		A := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				A.Set(i, j, lik[k].At(i, j))
			}
			A.Set(i, i, D[i])
		}
		var inv mat.Dense
		if err := inv.Inverse(A); err != nil {
			return 0, fmt.Errorf("groundtruth: client %d's tilted precision: %w", k, err)
		}
		for j := range K {
			for a := range d {
				for b := range d {
					v := 0.0
					if j != k {
						v = D[a] * inv.At(a, b)
					}
					if a == b {
						v--
					}
					M.Set(k*d+a, j*d+b, v)
				}
			}
		}
	}
	var eig mat.Eigen
	if !eig.Factorize(M, mat.EigenNone) {
		return 0, fmt.Errorf("groundtruth: PVI's iteration matrix: the eigenvalue decomposition failed")
	}
	bound := math.Inf(1)
	for _, mu := range eig.Values(nil) {
		if cmplx.Abs(mu) < 1e-12 {
			continue
		}
		if real(mu) >= 0 {
			return 0, nil
		}
		bound = math.Min(bound, -2*real(mu)/(real(mu)*real(mu)+imag(mu)*imag(mu)))
	}
	return bound, nil
}

// siteTrajectory runs T rounds of a site-based method (label, with project as its local step;
// siteRounds) on the linear problem p, parallel, damped at half PVI's stability bound (at most 1:
// undamped), measuring every round's global against truth as runRounds measures the rules. Every
// client trains against its cavity, so it is the same trajectory under either prior policy. The
// bound is PVI's; expectation propagation converges under it in every regime of the lab (tested),
// and a trajectory that diverges stops with the reason.
func siteTrajectory(p *Problem, label string, project projection, T int, truth *Gaussian,
	posterior func(prior *Gaussian, c Data) (*Gaussian, error)) (Trajectory, error) {
	bound, err := PVIStability(p)
	if err != nil {
		return Trajectory{}, err
	}
	rho := math.Min(1, bound/2)
	tr := Trajectory{Label: label, Rule: label,
		Note: fmt.Sprintf("parallel schedule, damping %.3g (half PVI's stability bound %.3g); every client trains against its cavity", rho, bound)}
	prev := MeanFieldMoment(p.Model.Prior)
	if !(rho > 0) {
		tr.Stopped = fmt.Sprintf("no damping converges (stability bound %g)", bound)
		tr.Final = prev
		return tr, nil
	}
	_, err = siteRounds(p, prev, T, rho, posterior, project, func(t int, q Diagonal) error {
		dist, err := compareMoments(q, truth)
		if err != nil {
			return fmt.Errorf("round %d: %w", t, err)
		}
		tr.Points = append(tr.Points, RoundPoint{Round: t, KLToTruth: dist.KLToTruth, KLFromTruth: dist.KLFromTruth,
			W2: dist.W2, MeanErrorSD: dist.MeanErrorSD, VarRatio: dist.VarRatio, Change: change(prev, q, truth), Held: held(prev, q)})
		prev = q
		return nil
	})
	if err != nil {
		tr.Stopped = err.Error()
	}
	tr.Final = prev
	return tr, nil
}

// SiteRounds is the most rounds SiteConvergence runs each site-based method for.
const SiteRounds = 1000

// SiteRun is how the site-based methods reach their fixed points on one linear problem, each run
// parallel at half PVI's stability bound for up to SiteRounds rounds.
type SiteRun struct {
	// Bound is PVI's stability bound (PVIStability) and Damping the damping used, min(1, Bound/2).
	Bound   float64 `json:"bound"`
	Damping float64 `json:"damping"`
	// PVIRounds is the first round at which PVI's KL(q || p) is within ConvergedNats of mean-field
	// VI's (0: not within SiteRounds, or stopped).
	PVIRounds int `json:"pvi_rounds"`
	// EPRounds is the first round at which expectation propagation's global moved by at most
	// SettledChange (0: not within SiteRounds, or stopped); EPStopped says why it stopped, if it did.
	EPRounds  int    `json:"ep_rounds"`
	EPStopped string `json:"ep_stopped,omitempty"`
	// EP's global at that round (or the last): its KL(p || q) and KL(q || p) above their floors, its
	// root-mean-square mean error in exact posterior sds, and its variance ratio over mean-field VI's.
	EPExcessFromTruth float64 `json:"ep_excess_kl_p_q"`
	EPExcessToTruth   float64 `json:"ep_excess_kl_q_p"`
	EPMeanErrorSD     float64 `json:"ep_mean_error_sd"`
	EPVarOverVI       float64 `json:"ep_var_over_vi"`
}

// SiteConvergence runs PVI and EP (siteRounds) on the linear problem p until they reach their fixed
// points, as SiteRun records.
func SiteConvergence(p *Problem) (SiteRun, error) {
	if p.Config.Likelihood == Logistic {
		return SiteRun{}, fmt.Errorf("groundtruth: the site-based methods' convergence needs a linear problem")
	}
	post := func(prior *Gaussian, c Data) (*Gaussian, error) {
		return LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
	}
	full, err := posteriors(p, post)
	if err != nil {
		return SiteRun{}, err
	}
	exact, err := GlobalFromClients(p.Model.Prior, full)
	if err != nil {
		return SiteRun{}, err
	}
	vi, err := MeanFieldVI(exact)
	if err != nil {
		return SiteRun{}, err
	}
	floorVI, err := compareMoments(vi, exact)
	if err != nil {
		return SiteRun{}, err
	}
	floorMom, err := compareMoments(MeanFieldMoment(exact), exact)
	if err != nil {
		return SiteRun{}, err
	}
	bound, err := PVIStability(p)
	if err != nil {
		return SiteRun{}, err
	}
	run := SiteRun{Bound: bound, Damping: math.Min(1, bound/2)}
	if !(run.Damping > 0) {
		run.EPStopped = fmt.Sprintf("no damping converges (stability bound %g)", bound)
		return run, nil
	}
	prior := MeanFieldMoment(p.Model.Prior)
	errDone := errors.New("done")
	_, err = siteRounds(p, prior, SiteRounds, run.Damping, post, MeanFieldVI, func(t int, q Diagonal) error {
		d, err := compareMoments(q, exact)
		if err != nil {
			return err
		}
		if float64(d.KLToTruth)-float64(floorVI.KLToTruth) <= ConvergedNats {
			run.PVIRounds = t
			return errDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDone) {
		run.PVIRounds = 0
	}
	prev, last := prior, prior
	_, err = siteRounds(p, prior, SiteRounds, run.Damping, post, momentProjection, func(t int, q Diagonal) error {
		last = q
		if change(prev, q, exact) <= SettledChange {
			run.EPRounds = t
			return errDone
		}
		prev = q
		return nil
	})
	if err != nil && !errors.Is(err, errDone) {
		run.EPStopped = err.Error()
	}
	d, err := compareMoments(last, exact)
	if err != nil {
		return SiteRun{}, err
	}
	run.EPExcessFromTruth = float64(d.KLFromTruth) - float64(floorMom.KLFromTruth)
	run.EPExcessToTruth = float64(d.KLToTruth) - float64(floorVI.KLToTruth)
	run.EPMeanErrorSD = d.MeanErrorSD
	run.EPVarOverVI = d.VarRatio / floorVI.VarRatio
	return run, nil
}
