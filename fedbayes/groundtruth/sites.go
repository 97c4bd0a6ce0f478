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

// siteMethod is one site-based method: its label and its clients' projection.
type siteMethod struct {
	label   string
	project projection
}

// siteMethods are the site-based methods of the lab, in the order of its tables.
var siteMethods = []siteMethod{{PVILabel, MeanFieldVI}, {EPLabel, momentProjection}}

// siteRounds runs T rounds of a site-based method with the parallel schedule and mean-field Gaussian
// sites, on the site arithmetic of package aggregate: the global is the prior times one site per
// client, q = p Π_k t_k, every site starting at 1 (so round 1's cavity is the prior). In each round
// every client k takes its cavity q / t_k as its prior, computes its exact posterior under it (the
// tilted distribution of the linear model, a Gaussian), projects it onto a diagonal Gaussian with
// project, and its site becomes that local approximation divided by the cavity, damped by rho in
// natural parameters; the server multiplies the prior by the new sites. MeanFieldVI as project gives
// partitioned variational inference (Ashman et al. (2022)), momentProjection expectation propagation
// with moment matching (FedEP with exact local inference, Guo et al. (2023)). The problem's prior
// must be diagonal.
//
// On the linear model PVI's fixed point is centralised mean-field VI of the exact global posterior:
// the site precisions tend to diag(X_kᵀX_k)/s2 (reached in round 1 undamped, as 1 − (1 − rho)^t of
// it damped), so the global precision tends to the diagonal of the exact precision, and at a fixed
// point every client's tilted mean equals the global mean, which sums the clients' stationarity
// conditions into the exact normal equations. The same sum gives EP's fixed point the exact mean,
// whatever its site precisions.
//
// visit is called with each round's global (after round t = 1..T); the first error stops the rounds.
// It returns the sites after the last round.
func siteRounds(p *Problem, T int, rho float64, project projection, visit func(t int, q Diagonal) error) ([]aggregate.Natural, error) {
	p0, err := diagonalPrior(p)
	if err != nil {
		return nil, err
	}
	sites := make([]aggregate.Natural, len(p.Clients))
	for k := range sites {
		sites[k] = aggregate.NewNatural(p0.Len())
	}
	for t := 1; t <= T; t++ {
		var q aggregate.Natural
		if sites, q, err = siteRound(p, p0, sites, rho, project); err != nil {
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

// diagonalPrior returns the problem's prior in natural parameters, refusing one with a correlation.
func diagonalPrior(p *Problem) (aggregate.Natural, error) {
	g := p.Model.Prior
	for i := range g.Dim() {
		for j := range g.Dim() {
			if i != j && g.Cov.At(i, j) != 0 {
				return aggregate.Natural{}, fmt.Errorf("groundtruth: the site-based methods need a diagonal prior")
			}
		}
	}
	q := MeanFieldMoment(g)
	p0, err := aggregate.NaturalOf(q.Mean, q.Var)
	if err != nil {
		return aggregate.Natural{}, fmt.Errorf("groundtruth: the sites' prior: %w", err)
	}
	return p0, nil
}

// siteRound is one parallel round from sites: every client's damped new site (siteClientStep) and
// the new global, the prior p0 times them.
func siteRound(p *Problem, p0 aggregate.Natural, sites []aggregate.Natural, rho float64, project projection) ([]aggregate.Natural, aggregate.Natural, error) {
	q, err := aggregate.Product(p0, sites)
	if err != nil {
		return nil, aggregate.Natural{}, err
	}
	next := make([]aggregate.Natural, len(sites))
	for k, c := range p.Clients {
		if next[k], err = siteClientStep(q, sites[k], k, c, p.Model.NoiseVar, rho, project); err != nil {
			return nil, aggregate.Natural{}, err
		}
	}
	if q, err = aggregate.Product(p0, next); err != nil {
		return nil, aggregate.Natural{}, err
	}
	return next, q, nil
}

// siteClientStep is client k's step of a site-based method: its cavity under the global q, its
// exact posterior under the cavity (Bishop (2006), Eqs. 3.50-3.51, noise variance s2), projected with
// project, and its new site damped by rho.
func siteClientStep(q, site aggregate.Natural, k int, c Data, s2, rho float64, project projection) (aggregate.Natural, error) {
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
	post, err := LinearModel{Prior: prior, NoiseVar: s2}.Posterior(c)
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
// M_kj = (1 − δ_kj) D A_k⁻¹ − I (dampingBound; the precisions contract by 1 − rho a round whatever
// rho). Undamped PVI (rho = 1) converges when the bound exceeds 1; the bound is 0 when no damping
// converges. SiteStability gives the same bound from a finite-difference Jacobian (tested).
func PVIStability(p *Problem) (float64, error) {
	if p.Config.Likelihood == Logistic {
		return 0, fmt.Errorf("groundtruth: PVI's stability bound needs a linear problem")
	}
	p0, err := diagonalPrior(p)
	if err != nil {
		return 0, err
	}
	prec0 := mat.NewDiagDense(p0.Len(), p0.Prec)
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
	return dampingBound(eig.Values(nil)), nil
}

// dampingBound is the largest damping rho under which x ← x + rho M x contracts, given the
// eigenvalues mu of M: |1 + rho mu| < 1 for every mu, that is rho < min −2 Re(mu) / |mu|². It is 0
// when some eigenvalue has a non-negative real part (one that is 0 too: a direction that does not
// contract).
func dampingBound(mus []complex128) float64 {
	bound := math.Inf(1)
	for _, mu := range mus {
		if !(real(mu) < 0) || cmplx.Abs(mu) < 1e-9 {
			return 0
		}
		bound = math.Min(bound, -2*real(mu)/(real(mu)*real(mu)+imag(mu)*imag(mu)))
	}
	return bound
}

// siteDim returns the number of unknowns of the sites of p (a precision and a shift per client and
// weight), refusing more than maxStabilityUnknowns.
func siteDim(p *Problem) (int, error) {
	n := 2 * len(p.Clients) * p.Model.Prior.Dim()
	if n > 2*maxStabilityUnknowns {
		return 0, fmt.Errorf("groundtruth: a site method's Jacobian for %d clients × %d weights: at most %d unknowns",
			len(p.Clients), p.Model.Prior.Dim(), 2*maxStabilityUnknowns)
	}
	return n, nil
}

// packSites and unpackSites convert sites to one vector (client by client, precisions then shifts)
// and back.
func packSites(sites []aggregate.Natural) []float64 {
	var z []float64
	for _, t := range sites {
		z = append(append(z, t.Prec...), t.Shift...)
	}
	return z
}

func unpackSites(z []float64, K, d int) []aggregate.Natural {
	sites := make([]aggregate.Natural, K)
	for k := range sites {
		off := 2 * k * d
		sites[k] = aggregate.Natural{Prec: append([]float64(nil), z[off:off+d]...), Shift: append([]float64(nil), z[off+d:off+2*d]...)}
	}
	return sites
}

// fixedSites runs the parallel schedule of project from sites at 1 until no site parameter moves by
// more than 1e-13 (relative, to a scale of 1) in a round, at damping rho, halved after a failure or
// 20,000 rounds without settling, at most six times. It returns the sites at the fixed point.
func fixedSites(p *Problem, project projection, rho float64) ([]aggregate.Natural, error) {
	p0, err := diagonalPrior(p)
	if err != nil {
		return nil, err
	}
	var last error
	for try := 0; try < 6; try, rho = try+1, rho/2 {
		sites := make([]aggregate.Natural, len(p.Clients))
		for k := range sites {
			sites[k] = aggregate.NewNatural(p0.Len())
		}
		for t := 1; t <= 20000; t++ {
			next, _, err := siteRound(p, p0, sites, rho, project)
			if err != nil {
				last = err
				break
			}
			moved, old := 0.0, packSites(sites)
			for i, v := range packSites(next) {
				moved = math.Max(moved, math.Abs(v-old[i])/math.Max(1, math.Abs(v)))
			}
			sites = next
			if moved <= 1e-13 {
				return sites, nil
			}
			last = fmt.Errorf("no fixed point within 20000 rounds at damping %g", rho)
		}
	}
	return nil, fmt.Errorf("groundtruth: a site method's fixed point: %w", last)
}

// SiteStability returns the largest damping under which the parallel schedule of a site method
// (MeanFieldVI: PVI; momentProjection: EP) converges near its fixed point on the linear problem p,
// and that fixed point's sites. The fixed point comes from fixedSites, started at damping start; the
// bound is dampingBound over the eigenvalues of J − I, J the Jacobian of one undamped round on every
// site's precision and shift at the fixed point: the damped round's Jacobian is (1 − rho) I + rho J.
// Client k's new site depends on the others' sites only through the global q = p0 Π_j t_j, so
// J_kj = G_k for j ≠ k and J_kk = G_k + H_k, with G_k its derivative in q's natural parameters and
// H_k in its own site's at a fixed q, each by central differences (step 1e-6, relative to a scale
// of 1).
func SiteStability(p *Problem, project projection, start float64) (float64, []aggregate.Natural, error) {
	n, err := siteDim(p)
	if err != nil {
		return 0, nil, err
	}
	fixed, err := fixedSites(p, project, start)
	if err != nil {
		return 0, nil, err
	}
	p0, err := diagonalPrior(p)
	if err != nil {
		return 0, nil, err
	}
	q, err := aggregate.Product(p0, fixed)
	if err != nil {
		return 0, nil, err
	}
	K, d := len(p.Clients), p.Model.Prior.Dim()
	M := mat.NewDense(n, n, nil)
	for k, c := range p.Clients {
		step := func(qz, tz []float64) ([]float64, error) {
			qn := aggregate.Natural{Prec: qz[:d], Shift: qz[d:]}
			tn := aggregate.Natural{Prec: tz[:d], Shift: tz[d:]}
			next, err := siteClientStep(qn, tn, k, c, p.Model.NoiseVar, 1, project)
			if err != nil {
				return nil, fmt.Errorf("groundtruth: a site method's Jacobian: %w", err)
			}
			return packSites([]aggregate.Natural{next}), nil
		}
		G, err := centralDiff(packSites([]aggregate.Natural{q}), func(x []float64) ([]float64, error) {
			return step(x, packSites(fixed[k:k+1]))
		})
		if err != nil {
			return 0, nil, err
		}
		H, err := centralDiff(packSites(fixed[k:k+1]), func(x []float64) ([]float64, error) {
			return step(packSites([]aggregate.Natural{q}), x)
		})
		if err != nil {
			return 0, nil, err
		}
		for j := range K {
			for a := range 2 * d {
				for b := range 2 * d {
					v := G.At(a, b)
					if j == k {
						v += H.At(a, b)
						if a == b {
							v--
						}
					}
					M.Set(2*k*d+a, 2*j*d+b, v)
				}
			}
		}
	}
	var eig mat.Eigen
	if !eig.Factorize(M, mat.EigenNone) {
		return 0, nil, fmt.Errorf("groundtruth: a site method's Jacobian: the eigenvalue decomposition failed")
	}
	return dampingBound(eig.Values(nil)), fixed, nil
}

// centralDiff returns the Jacobian of f at x by central differences, step 1e-6 relative to a scale
// of 1.
func centralDiff(x []float64, f func([]float64) ([]float64, error)) (*mat.Dense, error) {
	z := append([]float64(nil), x...)
	var J *mat.Dense
	for j := range z {
		h := 1e-6 * math.Max(1, math.Abs(x[j]))
		z[j] = x[j] + h
		up, err := f(z)
		if err != nil {
			return nil, err
		}
		z[j] = x[j] - h
		down, err := f(z)
		if err != nil {
			return nil, err
		}
		z[j] = x[j]
		if J == nil {
			J = mat.NewDense(len(up), len(z), nil)
		}
		for i := range up {
			J.Set(i, j, (up[i]-down[i])/(2*h))
		}
	}
	return J, nil
}

// siteBound returns a site method's stability bound on p: PVIStability's closed form for PVI,
// SiteStability's finite differences for the others (started at half PVI's bound).
func siteBound(p *Problem, m siteMethod) (float64, error) {
	pvi, err := PVIStability(p)
	if err != nil || m.label == PVILabel {
		return pvi, err
	}
	b, _, err := SiteStability(p, m.project, math.Min(1, pvi/2))
	return b, err
}

// siteTrajectory runs T rounds of the site method m on the linear problem p, parallel, damped at half
// its own stability bound (siteBound; at most 1, undamped), measuring every round's global against
// truth as runRounds measures the rules. Every client trains against its cavity, so it is the same
// trajectory under either prior policy. A trajectory that fails stops with the reason.
func siteTrajectory(p *Problem, m siteMethod, T int, truth *Gaussian) (Trajectory, error) {
	bound, err := siteBound(p, m)
	if err != nil {
		return Trajectory{}, err
	}
	rho := math.Min(1, bound/2)
	tr := Trajectory{Label: m.label, Rule: m.label,
		Note: fmt.Sprintf("parallel schedule, damping %.3g (half its stability bound %.3g); every client trains against its cavity", rho, bound)}
	prev := MeanFieldMoment(p.Model.Prior)
	if !(rho > 0) {
		tr.Stopped = fmt.Sprintf("no damping converges (stability bound %g)", bound)
		tr.Final = prev
		return tr, nil
	}
	_, err = siteRounds(p, T, rho, m.project, func(t int, q Diagonal) error {
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

// SiteMaxRounds is the most rounds SiteConvergence runs each site method for.
const SiteMaxRounds = 1000

// SiteNear is the distance to its own fixed point (change's measure: exact posterior sds for the
// means, log-variance) within which SiteConvergence counts a site method as arrived.
const SiteNear = 1e-3

// SiteMethodRun is one site method run to its fixed point on one linear problem (SiteConvergence).
type SiteMethodRun struct {
	Label string `json:"label"`
	// Bound is the method's stability bound (siteBound) and Damping the damping used, min(1, Bound/2).
	Bound   float64 `json:"bound"`
	Damping float64 `json:"damping"`
	// Rounds is the first round from which every later round's global is within SiteNear of the
	// method's fixed point (its global after SiteMaxRounds rounds, or once a round moves it by less than
	// 1e-12); 0 when it did not settle within SiteMaxRounds or Stopped.
	Rounds  int    `json:"rounds"`
	Stopped string `json:"stopped,omitempty"`
	// Ran says the fields below hold the fixed point's distances: its KL(p || q) and KL(q || p) above
	// their floors, its root-mean-square mean error in exact posterior sds, and its variance ratio
	// over mean-field VI's.
	Ran             bool    `json:"ran"`
	ExcessFromTruth float64 `json:"excess_kl_p_q"`
	ExcessToTruth   float64 `json:"excess_kl_q_p"`
	MeanErrorSD     float64 `json:"mean_error_sd"`
	VarOverVI       float64 `json:"var_over_vi"`
}

// SiteRun is every site method run to its fixed point on one linear problem.
type SiteRun struct {
	Methods []SiteMethodRun `json:"methods"`
}

// SiteConvergence runs every site method on the linear problem p to its fixed point, each damped at
// half its own stability bound, and measures how many rounds it takes (SiteMethodRun.Rounds, one
// criterion for every method) and where it ends against the floors.
func SiteConvergence(p *Problem) (SiteRun, error) {
	if p.Config.Likelihood == Logistic {
		return SiteRun{}, fmt.Errorf("groundtruth: the site methods run on linear problems only")
	}
	full, err := posteriors(p, func(prior *Gaussian, c Data) (*Gaussian, error) {
		return LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
	})
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
	var run SiteRun
	for _, m := range siteMethods {
		r, err := siteMethodRun(p, m, exact)
		if err != nil {
			return SiteRun{}, err
		}
		if r.Ran {
			r.ExcessFromTruth -= float64(floorMom.KLFromTruth)
			r.ExcessToTruth -= float64(floorVI.KLToTruth)
			r.VarOverVI /= floorVI.VarRatio
		}
		run.Methods = append(run.Methods, r)
	}
	return run, nil
}

// siteMethodRun runs m on p for up to SiteMaxRounds rounds and fills its SiteMethodRun, its distances
// still absolute (KL both ways, mean error, variance ratio against exact).
func siteMethodRun(p *Problem, m siteMethod, exact *Gaussian) (SiteMethodRun, error) {
	bound, err := siteBound(p, m)
	if err != nil {
		return SiteMethodRun{}, err
	}
	r := SiteMethodRun{Label: m.label, Bound: bound, Damping: math.Min(1, bound/2)}
	if !(r.Damping > 0) {
		r.Stopped = fmt.Sprintf("no damping converges (stability bound %g)", bound)
		return r, nil
	}
	var path []Diagonal
	prev := MeanFieldMoment(p.Model.Prior)
	settled := false
	errDone := errors.New("settled")
	_, err = siteRounds(p, SiteMaxRounds, r.Damping, m.project, func(t int, q Diagonal) error {
		path = append(path, q)
		c := change(prev, q, exact)
		prev = q
		if c <= 1e-12 {
			settled = true
			return errDone
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDone) {
		r.Stopped = err.Error()
		return r, nil
	}
	limit := path[len(path)-1]
	if settled || change(path[len(path)-2], limit, exact) <= 1e-9 {
		r.Rounds = len(path)
		for t := len(path) - 1; t >= 0 && change(path[t], limit, exact) <= SiteNear; t-- {
			r.Rounds = t + 1
		}
	}
	d, err := compareMoments(limit, exact)
	if err != nil {
		return SiteMethodRun{}, err
	}
	r.Ran = true
	r.ExcessFromTruth, r.ExcessToTruth, r.MeanErrorSD, r.VarOverVI = float64(d.KLFromTruth), float64(d.KLToTruth), d.MeanErrorSD, d.VarRatio
	return r, nil
}
