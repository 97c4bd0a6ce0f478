package groundtruth

import (
	"math"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

// linearPosterior is the exact posterior of client data c under prior, for the problem p.
func linearPosterior(p *Problem) func(prior *Gaussian, c Data) (*Gaussian, error) {
	return func(prior *Gaussian, c Data) (*Gaussian, error) {
		return LinearModel{Prior: prior, NoiseVar: p.Model.NoiseVar}.Posterior(c)
	}
}

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

// pviFromPrior runs rounds of parallel PVI at damping rho on p and returns the relative distance to
// mean-field VI of the exact global posterior after round 1 and after the last round.
func pviFromPrior(t *testing.T, p *Problem, rounds int, rho float64) (first, last float64) {
	t.Helper()
	post := linearPosterior(p)
	full, err := posteriors(p, post)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := GlobalFromClients(p.Model.Prior, full)
	if err != nil {
		t.Fatal(err)
	}
	vi, err := MeanFieldVI(exact)
	if err != nil {
		t.Fatal(err)
	}
	err = pviSites(p, MeanFieldMoment(p.Model.Prior), rounds, rho, post, func(r int, q Diagonal) error {
		if r == 1 {
			first = maxRelDiff(q, vi)
		}
		last = maxRelDiff(q, vi)
		return nil
	})
	if err != nil {
		// A diverging run ends when a cavity or the global stops being a Gaussian.
		return first, math.Inf(1)
	}
	return first, last
}

// pviCases are linear problems on which PVI is checked: IID (correlated features), covariate shift,
// 20 weights and 100 clients.
var pviCases = []struct {
	name string
	cfg  func(c *Config)
}{
	{"iid", func(c *Config) {}},
	{"covariate shift", func(c *Config) { c.Split, c.Heterogeneity = CovariateShift, 0.9 }},
	{"20 weights", func(c *Config) { c.Dims = 20 }},
	{"100 clients", func(c *Config) { c.Clients, c.PerClient = 100, 5 }},
}

func pviProblem(t *testing.T, cfg func(c *Config)) *Problem {
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
// fixed point, centralised mean-field VI of the exact global posterior, to rounding error, in every
// case, from a round 1 that is far from it.
func TestPVIReachesMeanFieldVI(t *testing.T) {
	for _, tc := range pviCases {
		t.Run(tc.name, func(t *testing.T) {
			p := pviProblem(t, tc.cfg)
			bound, err := PVIStability(p)
			if err != nil {
				t.Fatal(err)
			}
			first, last := pviFromPrior(t, p, 400, math.Min(1, bound/2))
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

// TestPVIStabilityBound checks the stability bound against the iteration itself: 10 % below the
// bound PVI converges, 10 % above it diverges (where the bound is under 1, so that the damping above
// it is a valid one).
func TestPVIStabilityBound(t *testing.T) {
	for _, tc := range pviCases {
		t.Run(tc.name, func(t *testing.T) {
			p := pviProblem(t, tc.cfg)
			bound, err := PVIStability(p)
			if err != nil {
				t.Fatal(err)
			}
			if !(bound > 0) {
				t.Fatalf("bound %g: want a positive one on these problems", bound)
			}
			if _, last := pviFromPrior(t, p, 1500, math.Min(1, 0.9*bound)); last > 1e-6 {
				t.Errorf("at damping %.4g (0.9 × the bound %.4g) PVI ends %.3g from its fixed point: want convergence", 0.9*bound, bound, last)
			}
			if 1.1*bound <= 1 {
				if _, last := pviFromPrior(t, p, 1500, 1.1*bound); last < 1 {
					t.Errorf("at damping %.4g (1.1 × the bound %.4g) PVI ends %.3g from its fixed point: want divergence", 1.1*bound, bound, last)
				}
			}
		})
	}
}

// TestEPFixedPoint checks expectation propagation with diagonal sites on the linear problem at its
// fixed point (400 rounds at half PVI's stability bound), by the fixed point's definition: the global's
// mean is the exact posterior mean (summing the clients' mean conditions gives the normal equations,
// for any site precisions), and every client's tilted distribution (its cavity times its likelihood)
// has the global's marginal variances. With one weight EP is exact after one undamped round.
func TestEPFixedPoint(t *testing.T) {
	for _, tc := range pviCases {
		t.Run(tc.name, func(t *testing.T) {
			p := pviProblem(t, tc.cfg)
			post := linearPosterior(p)
			full, err := posteriors(p, post)
			if err != nil {
				t.Fatal(err)
			}
			exact, err := GlobalFromClients(p.Model.Prior, full)
			if err != nil {
				t.Fatal(err)
			}
			bound, err := PVIStability(p)
			if err != nil {
				t.Fatal(err)
			}
			var q Diagonal
			sites, err := siteRounds(p, MeanFieldMoment(p.Model.Prior), 400, math.Min(1, bound/2), post, momentProjection,
				func(_ int, g Diagonal) error { q = g; return nil })
			if err != nil {
				t.Fatal(err)
			}
			mom := MeanFieldMoment(exact)
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
				tilted, err := post(prior, c)
				if err != nil {
					t.Fatal(err)
				}
				tm := MeanFieldMoment(tilted)
				if d := maxRelDiff(tm, q); d > 1e-9 {
					t.Fatalf("client %d: its tilted marginals are %.3g (relative) from the global's", k, d)
				}
			}
		})
	}
	one := pviProblem(t, func(c *Config) { c.Dims = 1 })
	post := linearPosterior(one)
	full, err := posteriors(one, post)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := GlobalFromClients(one.Model.Prior, full)
	if err != nil {
		t.Fatal(err)
	}
	mom := MeanFieldMoment(exact)
	if _, err := siteRounds(one, MeanFieldMoment(one.Model.Prior), 1, 1, post, momentProjection, func(_ int, q Diagonal) error {
		if math.Abs(q.Mean[0]-mom.Mean[0]) > 1e-12 || math.Abs(q.Var[0]/mom.Var[0]-1) > 1e-12 {
			t.Errorf("one weight, one round: EP %v, exact %v", q, mom)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
