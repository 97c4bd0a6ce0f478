package groundtruth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// LogDensity returns log p(w) up to a constant and writes its gradient into grad (len(w) entries).
type LogDensity func(w, grad []float64) float64

// HMCConfig configures HMC.
type HMCConfig struct {
	// Chains run independently from overdispersed starts (their R-hat needs at least 2).
	Chains int `json:"chains"`
	// Warmup iterations per chain adapt the step size (dual averaging) and a dense mass matrix;
	// Samples iterations per chain are kept.
	Warmup  int `json:"warmup"`
	Samples int `json:"samples"`
	// Leapfrog is the number of leapfrog steps per iteration.
	Leapfrog int `json:"leapfrog"`
	// TargetAccept is the acceptance rate the step size adapts to.
	TargetAccept float64 `json:"target_accept"`
	Seed         uint64  `json:"seed"`
}

// DefaultHMC returns 4 chains of 1,000 warmup and 2,000 kept iterations, 16 leapfrog steps, target
// acceptance 0.8.
func DefaultHMC() HMCConfig {
	return HMCConfig{Chains: 4, Warmup: 1000, Samples: 2000, Leapfrog: 16, TargetAccept: 0.8, Seed: 1}
}

// Validate reports the first invalid field.
func (c HMCConfig) Validate() error {
	switch {
	case c.Chains < 2 || c.Chains > 64:
		return fmt.Errorf("groundtruth: HMC chains %d: want 2 to 64", c.Chains)
	case c.Warmup < 20 || c.Warmup > 1_000_000:
		return fmt.Errorf("groundtruth: HMC warmup %d: want 20 to 1000000", c.Warmup)
	case c.Samples < 20 || c.Samples > 1_000_000:
		return fmt.Errorf("groundtruth: HMC samples %d: want 20 to 1000000", c.Samples)
	case c.Leapfrog < 1 || c.Leapfrog > 1000:
		return fmt.Errorf("groundtruth: HMC leapfrog steps %d: want 1 to 1000", c.Leapfrog)
	case !(c.TargetAccept > 0 && c.TargetAccept < 1):
		return fmt.Errorf("groundtruth: HMC target acceptance %v: want a value in (0, 1)", c.TargetAccept)
	}
	return nil
}

// HMCResult is the output of HMC: the kept draws and their diagnostics.
type HMCResult struct {
	Config HMCConfig `json:"config"`
	// Mean and Cov are the draws' mean and covariance (all chains pooled).
	Mean []float64   `json:"mean"`
	Cov  [][]float64 `json:"cov"`
	// ESS is each parameter's effective sample size and RHat its split R-hat (Gelman et al. (2013),
	// BDA3, Sec. 11.4-11.5); MCSE the Monte Carlo standard error of its mean, sqrt(var / ESS).
	ESS  []float64 `json:"ess"`
	RHat []float64 `json:"rhat"`
	MCSE []float64 `json:"mcse"`
	// Accept is the mean acceptance rate of the kept iterations; StepSize each chain's adapted step.
	Accept   float64   `json:"accept"`
	StepSize []float64 `json:"step_size"`
	// Draws holds the kept draws, chain after chain (not written to JSON).
	Draws [][]float64 `json:"-"`
}

// HMC samples the density with Hamiltonian Monte Carlo (Neal (2011), "MCMC using Hamiltonian
// dynamics", Sec. 5.2): leapfrog trajectories of cfg.Leapfrog steps (the step jittered by ±10 %),
// the step size adapted in warmup by dual averaging (Hoffman & Gelman (2014), Alg. 5) and a diagonal
// dense mass matrix set from warmup draws (the covariance of its second and of its third quarter). Chain c starts at
// init(c, rng). Same seed, same draws.
func HMC(logp LogDensity, d int, init func(chain int, rng *rand.Rand) []float64, cfg HMCConfig) (*HMCResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d < 1 {
		return nil, fmt.Errorf("groundtruth: HMC in dimension %d", d)
	}
	res := &HMCResult{Config: cfg}
	chains := make([][][]float64, cfg.Chains)
	acc := 0.0
	for c := 0; c < cfg.Chains; c++ {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(c)+0x686d63)) // "hmc"
		w := init(c, rng)
		if len(w) != d {
			return nil, fmt.Errorf("groundtruth: HMC chain %d starts in dimension %d, want %d", c, len(w), d)
		}
		draws, a, eps, err := runChain(logp, w, rng, cfg)
		if err != nil {
			return nil, fmt.Errorf("groundtruth: HMC chain %d: %w", c, err)
		}
		chains[c] = draws
		acc += a / float64(cfg.Chains)
		res.StepSize = append(res.StepSize, eps)
		res.Draws = append(res.Draws, draws...)
	}
	res.Accept = acc
	res.Mean = make([]float64, d)
	res.Cov = make([][]float64, d)
	col := make([][]float64, d)
	for i := 0; i < d; i++ {
		col[i] = make([]float64, len(res.Draws))
		for s, w := range res.Draws {
			col[i][s] = w[i]
		}
		res.Mean[i] = stat.Mean(col[i], nil)
	}
	for i := 0; i < d; i++ {
		res.Cov[i] = make([]float64, d)
		for j := 0; j < d; j++ {
			res.Cov[i][j] = stat.Covariance(col[i], col[j], nil)
		}
	}
	for i := 0; i < d; i++ {
		per := make([][]float64, cfg.Chains)
		for c := range chains {
			per[c] = make([]float64, len(chains[c]))
			for s, w := range chains[c] {
				per[c][s] = w[i]
			}
		}
		ess, rhat := essRHat(per)
		res.ESS = append(res.ESS, ess)
		res.RHat = append(res.RHat, rhat)
		res.MCSE = append(res.MCSE, math.Sqrt(res.Cov[i][i]/ess))
	}
	return res, nil
}

// metric is HMC's mass matrix as its inverse: the momentum p ~ N(0, M), M = sigma^-1, the velocity
// sigma p and the kinetic energy p^T sigma p / 2. It starts at the identity and is set to the
// covariance of warmup draws (a dense metric, which also undoes correlation between weights).
type metric struct {
	sigma *mat.SymDense
	l     mat.TriDense // sigma = L L^T
}

func newMetric(d int) *metric {
	m := &metric{sigma: mat.NewSymDense(d, nil)}
	for i := 0; i < d; i++ {
		m.sigma.SetSym(i, i, 1)
	}
	var ch mat.Cholesky
	ch.Factorize(m.sigma)
	ch.LTo(&m.l)
	return m
}

// setFrom sets sigma to the covariance of draws (regularised towards its diagonal as Stan does,
// (n sigma + 1e-3 * 5 I) / (n + 5)), keeping the old one if that is not positive definite.
func (m *metric) setFrom(draws [][]float64) {
	d := m.sigma.SymmetricDim()
	x := mat.NewDense(len(draws), d, nil)
	for s, w := range draws {
		x.SetRow(s, w)
	}
	var cov mat.SymDense
	stat.CovarianceMatrix(&cov, x, nil)
	n := float64(len(draws))
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := n / (n + 5) * cov.At(i, j)
			if i == j {
				v += 1e-3 * 5 / (n + 5)
			}
			cov.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(&cov) {
		return
	}
	m.sigma = mat.NewSymDense(d, nil)
	m.sigma.CopySym(&cov)
	ch.LTo(&m.l)
}

// momentum draws p ~ N(0, sigma^-1): p = L^-T z.
func (m *metric) momentum(p []float64, rng *rand.Rand) {
	z := mat.NewVecDense(len(p), nil)
	for i := range p {
		z.SetVec(i, rng.NormFloat64())
	}
	pv := mat.NewVecDense(len(p), p)
	_ = pv.SolveVec(m.l.T(), z) // L is triangular with a positive diagonal: never singular
}

// velocity writes sigma p into v.
func (m *metric) velocity(v, p []float64) {
	mat.NewVecDense(len(v), v).MulVec(m.sigma, mat.NewVecDense(len(p), p))
}

func (m *metric) kinetic(p []float64) float64 {
	pv := mat.NewVecDense(len(p), p)
	return 0.5 * mat.Inner(pv, m.sigma, pv)
}

// leapfrog runs n leapfrog steps of size eps from (w, p) with gradient grad, in place, and returns
// the log density at the end (grad updated).
func leapfrog(logp LogDensity, m *metric, w, p, grad, vel []float64, eps float64, n int) float64 {
	lp := 0.0
	for l := 0; l < n; l++ {
		for i := range p {
			p[i] += 0.5 * eps * grad[i]
		}
		m.velocity(vel, p)
		for i := range w {
			w[i] += eps * vel[i]
		}
		lp = logp(w, grad)
		for i := range p {
			p[i] += 0.5 * eps * grad[i]
		}
	}
	return lp
}

// runChain runs one chain: warmup, then cfg.Samples kept draws. Warmup adapts the step size by dual
// averaging throughout; the draws of its second quarter set the metric at its midpoint, and the
// draws of its third quarter set it again at three quarters, each time restarting the step size.
func runChain(logp LogDensity, w []float64, rng *rand.Rand, cfg HMCConfig) (draws [][]float64, accept, eps float64, err error) {
	d := len(w)
	grad := make([]float64, d)
	lp := logp(w, grad)
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return nil, 0, 0, fmt.Errorf("log density %v at the start", lp)
	}
	m := newMetric(d)
	eps = findStep(logp, m, w, grad, lp, rng)
	da := newDualAveraging(eps, cfg.TargetAccept)
	q1, q2, q3 := cfg.Warmup/4, cfg.Warmup/2, 3*cfg.Warmup/4
	var window [][]float64
	wn, gn, p, vel := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	for it := 0; it < cfg.Warmup+cfg.Samples; it++ {
		step := eps
		if it < cfg.Warmup {
			step = da.step()
		}
		step *= 1 + 0.1*(2*rng.Float64()-1)
		m.momentum(p, rng)
		h0 := -lp + m.kinetic(p)
		copy(wn, w)
		copy(gn, grad)
		lpn := leapfrog(logp, m, wn, p, gn, vel, step, cfg.Leapfrog)
		a := 0.0
		if h1 := -lpn + m.kinetic(p); !math.IsNaN(h1) && !math.IsInf(h1, 0) {
			a = math.Min(1, math.Exp(h0-h1))
		}
		if rng.Float64() < a {
			copy(w, wn)
			copy(grad, gn)
			lp = lpn
		}
		switch {
		case it < cfg.Warmup:
			da.update(a)
			if it >= q1 && it < q3 {
				window = append(window, append([]float64(nil), w...))
			}
			if (it == q2-1 || it == q3-1) && len(window) > 2*d+10 {
				m.setFrom(window)
				window = window[:0]
				eps = findStep(logp, m, w, grad, lp, rng)
				da = newDualAveraging(eps, cfg.TargetAccept)
			}
			if it == cfg.Warmup-1 {
				eps = da.final()
			}
		default:
			accept += a / float64(cfg.Samples)
			draws = append(draws, append([]float64(nil), w...))
		}
	}
	return draws, accept, eps, nil
}

// findStep is the heuristic of Hoffman & Gelman (2014), Alg. 4: double or halve the step until one
// leapfrog step's acceptance crosses 1/2.
func findStep(logp LogDensity, m *metric, w, grad []float64, lp float64, rng *rand.Rand) float64 {
	d := len(w)
	eps := 0.1
	wn, gn, p, vel := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	logAccept := func() float64 {
		m.momentum(p, rng)
		h0 := -lp + m.kinetic(p)
		copy(wn, w)
		copy(gn, grad)
		lpn := leapfrog(logp, m, wn, p, gn, vel, eps, 1)
		v := h0 - (-lpn + m.kinetic(p))
		if math.IsNaN(v) {
			return math.Inf(-1)
		}
		return v
	}
	dir := 1.0
	if logAccept() < math.Log(0.5) {
		dir = -1
	}
	for k := 0; k < 50; k++ {
		la := logAccept()
		if (dir > 0 && la < math.Log(0.5)) || (dir < 0 && la > math.Log(0.5)) {
			break
		}
		eps *= math.Pow(2, dir)
	}
	return eps
}

// dualAveraging adapts the step size to a target acceptance rate (Hoffman & Gelman (2014), Alg. 5,
// with gamma = 0.05, t0 = 10, kappa = 0.75).
type dualAveraging struct {
	mu, target, hBar, logEps, logEpsBar float64
	t                                   int
}

func newDualAveraging(eps, target float64) *dualAveraging {
	return &dualAveraging{mu: math.Log(10 * eps), target: target, logEps: math.Log(eps)}
}

func (d *dualAveraging) step() float64 { return math.Exp(d.logEps) }

func (d *dualAveraging) update(accept float64) {
	d.t++
	t := float64(d.t)
	d.hBar = (1-1/(t+10))*d.hBar + (d.target-accept)/(t+10)
	d.logEps = d.mu - math.Sqrt(t)/0.05*d.hBar
	eta := math.Pow(t, -0.75)
	d.logEpsBar = eta*d.logEps + (1-eta)*d.logEpsBar
}

func (d *dualAveraging) final() float64 { return math.Exp(d.logEpsBar) }

// essRHat returns the effective sample size and the split R-hat of one parameter's chains (Gelman
// et al. (2013), BDA3, Eqs. 11.1-11.4 for R-hat on split chains, 11.5-11.8 for the ESS with Geyer's
// initial positive sequence).
func essRHat(chains [][]float64) (ess, rhat float64) {
	var split [][]float64
	for _, c := range chains {
		n := len(c) / 2
		split = append(split, c[:n], c[len(c)-n:])
	}
	m, n := len(split), len(split[0])
	means := make([]float64, m)
	W := 0.0
	for j, c := range split {
		means[j] = stat.Mean(c, nil)
		W += stat.Variance(c, nil) / float64(m)
	}
	B := float64(n) * stat.Variance(means, nil)
	varPlus := float64(n-1)/float64(n)*W + B/float64(n)
	if W == 0 {
		return float64(m * n), 1
	}
	rhat = math.Sqrt(varPlus / W)
	rho := func(t int) float64 {
		v := 0.0
		for _, c := range split {
			for i := t; i < n; i++ {
				d := c[i] - c[i-t]
				v += d * d
			}
		}
		v /= float64(m * (n - t))
		return 1 - v/(2*varPlus)
	}
	// Geyer's initial positive sequence: P_k = rho_2k + rho_2k+1 (rho_0 = 1), summed while positive.
	sum := 0.0
	for k := 0; 2*k+1 < n; k++ {
		r0 := 1.0
		if k > 0 {
			r0 = rho(2 * k)
		}
		pair := r0 + rho(2*k+1)
		if pair < 0 {
			break
		}
		sum += pair
	}
	ess = float64(m*n) / math.Max(-1+2*sum, 1e-300)
	return ess, rhat
}
