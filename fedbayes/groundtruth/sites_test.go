package groundtruth

import (
	"math"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

// maxRelDiff is the largest relative difference (to a scale of at least 1) between the means and
// variances of two diagonal Gaussians.
func maxRelDiff(a, b Diagonal) float64 {
	d := 0.0
	for i := range a.Mean {
		d = math.Max(d, math.Abs(a.Mean[i]-b.Mean[i])/math.Max(1, math.Abs(b.Mean[i])))
		d = math.Max(d, math.Abs(a.Var[i]-b.Var[i])/b.Var[i])
	}
	return d
}

// exactOf returns the exact global posterior of the linear problem p.
func exactOf(t *testing.T, p *Problem) *Gaussian {
	t.Helper()
	full, err := posteriors(p, func(prior *Gaussian, c Data) (*Gaussian, error) {
		return LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := GlobalFromClients(p.Model.Prior, full)
	if err != nil {
		t.Fatal(err)
	}
	return exact
}

// siteDistance runs rounds of a site method at damping rho on p and returns the relative distance of
// its global to target after round 1 and after the last round (+Inf when the run fails: a diverging
// run ends when a cavity or the global stops being a Gaussian).
func siteDistance(t *testing.T, p *Problem, project projection, rounds int, rho float64, target Diagonal) (first, last float64) {
	t.Helper()
	_, err := siteRounds(p, rounds, rho, project, func(r int, q Diagonal) error {
		if r == 1 {
			first = maxRelDiff(q, target)
		}
		last = maxRelDiff(q, target)
		return nil
	})
	if err != nil {
		return first, math.Inf(1)
	}
	return first, last
}

// siteCases are linear problems on which the site methods are checked: IID (correlated features),
// covariate shift, 20 weights and 100 clients.
var siteCases = []struct {
	name string
	cfg  func(c *Config)
}{
	{"iid", func(c *Config) {}},
	{"covariate shift", func(c *Config) { c.Split, c.Heterogeneity = CovariateShift, 0.9 }},
	{"20 weights", func(c *Config) { c.Dims = 20 }},
	{"100 clients", func(c *Config) { c.Clients, c.PerClient = 100, 5 }},
}

func siteProblem(t *testing.T, cfg func(c *Config)) *Problem {
	t.Helper()
	c := DefaultConfig()
	c.Test = 10
	cfg(&c)
	p, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPVIReachesMeanFieldVI checks that parallel PVI at half its stability bound converges to its
// fixed point, centralised mean-field VI of the exact global posterior, to 1e-10 (relative), in every
// case, from a round 1 that is far from it.
func TestPVIReachesMeanFieldVI(t *testing.T) {
	for _, tc := range siteCases {
		t.Run(tc.name, func(t *testing.T) {
			p := siteProblem(t, tc.cfg)
			vi, err := MeanFieldVI(exactOf(t, p))
			if err != nil {
				t.Fatal(err)
			}
			bound, err := PVIStability(p)
			if err != nil {
				t.Fatal(err)
			}
			first, last := siteDistance(t, p, MeanFieldVI, 400, math.Min(1, bound/2), vi)
			if last > 1e-10 {
				t.Errorf("after 400 rounds at damping %.3g PVI is %.3g (relative) from mean-field VI (round 1: %.3g), want at most 1e-10",
					math.Min(1, bound/2), last, first)
			}
			if first < 1e-3 {
				t.Errorf("PVI's round 1 is already %.3g from mean-field VI: the case does not test convergence", first)
			}
		})
	}
}

// TestSiteStabilityBounds checks both methods' stability bounds against the iteration itself: at 0.9
// × the bound each converges to its fixed point, at 1.1 × it diverges (where that damping is at most
// 1); and SiteStability's finite differences give PVIStability's closed form back.
func TestSiteStabilityBounds(t *testing.T) {
	for _, tc := range siteCases {
		t.Run(tc.name, func(t *testing.T) {
			p := siteProblem(t, tc.cfg)
			pvi, fd, _ := stabilityOf(t, p, MeanFieldVI)
			if math.Abs(fd-pvi) > 1e-4*pvi {
				t.Errorf("PVI's bound: finite differences %.6g, closed form %.6g", fd, pvi)
			}
			for _, m := range siteMethods {
				_, bound, fixed := stabilityOf(t, p, m.project)
				if !(bound > 0) {
					t.Fatalf("%s: bound %g, want a positive one on these problems", m.label, bound)
				}
				target := globalOf(t, p, fixed)
				if _, last := siteDistance(t, p, m.project, 1500, math.Min(1, 0.9*bound), target); last > 1e-6 {
					t.Errorf("%s at damping %.4g (0.9 × its bound %.4g) ends %.3g from its fixed point: want convergence", m.label, 0.9*bound, bound, last)
				}
				if 1.1*bound <= 1 {
					if _, last := siteDistance(t, p, m.project, 1500, 1.1*bound, target); last < 1 {
						t.Errorf("%s at damping %.4g (1.1 × its bound %.4g) ends %.3g from its fixed point: want divergence", m.label, 1.1*bound, bound, last)
					}
				}
			}
		})
	}
}

// stabilityOf returns PVI's closed-form bound on p, and project's finite-difference bound with its
// fixed point's sites (SiteStability, started at half PVI's bound).
func stabilityOf(t *testing.T, p *Problem, project projection) (pvi, bound float64, sites []aggregate.Natural) {
	t.Helper()
	pvi, err := PVIStability(p)
	if err != nil {
		t.Fatal(err)
	}
	if bound, sites, err = SiteStability(p, project, math.Min(1, pvi/2)); err != nil {
		t.Fatal(err)
	}
	return pvi, bound, sites
}

// globalOf is the global of sites on p: the prior times the sites, as a diagonal Gaussian.
func globalOf(t *testing.T, p *Problem, sites []aggregate.Natural) Diagonal {
	t.Helper()
	p0, err := diagonalPrior(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := aggregate.Product(p0, sites)
	if err != nil {
		t.Fatal(err)
	}
	m, v, err := q.Moments()
	if err != nil {
		t.Fatal(err)
	}
	return Diagonal{Mean: m, Var: v}
}

// TestEPFixedPoint checks expectation propagation with diagonal sites on the linear problem at its
// fixed point, by the fixed point's definition: the global's mean is the exact posterior mean
// (summing the clients' mean conditions gives the normal equations, for any site precisions), and
// every client's tilted distribution (its cavity times its likelihood) has the global's marginal
// variances. EP's variances have no closed form here; with one weight any cavity method is exact
// after one undamped round (a sanity check only).
func TestEPFixedPoint(t *testing.T) {
	for _, tc := range siteCases {
		t.Run(tc.name, func(t *testing.T) {
			p := siteProblem(t, tc.cfg)
			_, _, sites := stabilityOf(t, p, momentProjection)
			q := globalOf(t, p, sites)
			mom := MeanFieldMoment(exactOf(t, p))
			for i := range q.Mean {
				if math.Abs(q.Mean[i]-mom.Mean[i]) > 1e-10*math.Max(1, math.Abs(mom.Mean[i])) {
					t.Fatalf("weight %d: EP's mean %v, the exact mean %v", i, q.Mean[i], mom.Mean[i])
				}
			}
			global, err := aggregate.NaturalOf(q.Mean, q.Var)
			if err != nil {
				t.Fatal(err)
			}
			for k, c := range p.Clients {
				cav, err := aggregate.Cavity(global, sites[k], k)
				if err != nil {
					t.Fatal(err)
				}
				cm, cv, err := cav.Moments()
				if err != nil {
					t.Fatal(err)
				}
				prior, err := Diagonal{Mean: cm, Var: cv}.Full()
				if err != nil {
					t.Fatal(err)
				}
				tilted, err := LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
				if err != nil {
					t.Fatal(err)
				}
				if d := maxRelDiff(MeanFieldMoment(tilted), q); d > 1e-9 {
					t.Fatalf("client %d: its tilted marginals are %.3g (relative) from the global's", k, d)
				}
			}
		})
	}
	one := siteProblem(t, func(c *Config) { c.Dims = 1 })
	mom := MeanFieldMoment(exactOf(t, one))
	if _, err := siteRounds(one, 1, 1, momentProjection, func(_ int, q Diagonal) error {
		if math.Abs(q.Mean[0]-mom.Mean[0]) > 1e-12 || math.Abs(q.Var[0]/mom.Var[0]-1) > 1e-12 {
			t.Errorf("one weight, one round: EP %v, exact %v", q, mom)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSiteConvergence checks SiteConvergence on the IID case: both methods arrive within a few dozen
// rounds under one criterion, PVI at mean-field VI (KL(q || p) excess below 1e-9), FedEP with a mean
// error of rounding size and variances between mean-field VI's and the marginals'.
func TestSiteConvergence(t *testing.T) {
	p := siteProblem(t, func(c *Config) {})
	run, err := SiteConvergence(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Methods) != 2 || run.Methods[0].Label != PVILabel || run.Methods[1].Label != EPLabel {
		t.Fatalf("methods %+v", run.Methods)
	}
	pvi, ep := run.Methods[0], run.Methods[1]
	if !pvi.Ran || pvi.Rounds < 2 || pvi.Rounds > 100 || math.Abs(pvi.ExcessToTruth) > 1e-9 {
		t.Errorf("PVI: %+v", pvi)
	}
	if !ep.Ran || ep.Rounds < 2 || ep.Rounds > 200 || ep.MeanErrorSD > 1e-9 || !(ep.VarOverVI > 1) {
		t.Errorf("FedEP: %+v (PVI's bound %g)", ep, pvi.Bound)
	}
}
