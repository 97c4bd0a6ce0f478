package predictive

import (
	"fmt"
	"math"
	"slices"

	"fedbayes.dev/fedbayes/posterior"
)

// DefaultFedPARho is the shrinkage hyperparameter rho of FedPA that Hasan (2023) tuned for every
// classification set (Tables B.2-B.3, "Cov. Param").
const DefaultFedPARho = 0.4

// FedPAConfig configures FedPA. Zero values take the documented defaults.
type FedPAConfig struct {
	// Rho is the shrinkage hyperparameter rho >= 0 of Al-Shedivat et al. (2021), Sec. 4 (the weight
	// of the sample covariance against the identity; nil means DefaultFedPARho). Rho = 0 makes every
	// client covariance the identity and FedPA becomes FedAvg.
	Rho *float64 `json:"rho,omitempty"`
	// ServerLR is the server step size eta_s (default 1). One round of the server's SGD or
	// SGD-with-momentum is the step x0 - eta_s Delta; Hasan (2023) tuned 0.5 for Fashion-MNIST
	// (Tables B.2-B.3, "Server LR").
	ServerLR float64 `json:"server_lr,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c FedPAConfig) WithDefaults() FedPAConfig {
	if c.Rho == nil {
		r := DefaultFedPARho
		c.Rho = &r
	}
	if c.ServerLR == 0 {
		c.ServerLR = 1
	}
	return c
}

// Validate reports the first invalid field by its JSON name (call after WithDefaults).
func (c FedPAConfig) Validate() error {
	if c.Rho == nil || !(*c.Rho >= 0) || math.IsInf(*c.Rho, 0) {
		v := any(nil)
		if c.Rho != nil {
			v = *c.Rho
		}
		return fmt.Errorf("predictive: fedpa.rho = %v: want a finite value >= 0", v)
	}
	if !(c.ServerLR > 0) || math.IsInf(c.ServerLR, 0) {
		return fmt.Errorf("predictive: fedpa.server_lr = %v: want positive and finite", c.ServerLR)
	}
	return nil
}

// FedPA is one round of federated posterior averaging (Al-Shedivat et al. 2021, "Federated
// learning via posterior averaging"), the one-round FedPA baseline of Hasan (2023), Sec. 3.3.4 and
// Table 3.1, with the clients' posterior samples drawn by SG-MCMC (Sample) instead of the paper's
// iterate-averaged SGD.
//
// init is the global model x0 the clients started from (unstacked); samples are the clients'
// posterior samples, each a stacked posterior [K, ...] (Samples.Models); weights are the client
// weights q_k (nil: equal; normally the client sizes, normalised here).
//
// Client k summarises its l samples x_1..x_l (all parameters as one vector) by their mean mu_k and
// the shrinkage covariance of Al-Shedivat et al. (2021), Sec. 4:
//
//	Sigma_k = rho_l I + (1 - rho_l) S_k,   rho_l = 1 / (1 + (l - 1) rho),
//
// S_k the unbiased sample covariance, and sends Delta_k = Sigma_k^{-1} (x0 - mu_k), the gradient at
// x0 of its Gaussian approximation's negative log density (their Sec. 3). Sigma_k is rho_l times
// I + rho D D^T with D the l centred samples, so Delta_k is solved exactly with the Woodbury
// identity in O(l^2 d) time and O(l d) memory, in float64; it equals the paper's dynamic program
// (their Sec. 4, as the authors' compute_post_avg_delta_dp runs it; tested against it). The server
// takes one step of its SGD on sum_k q_k Delta_k, the gradient at x0 of the negative log of the
// product of the client Gaussians (their Sec. 3):
//
//	x = x0 - eta_s sum_k q_k Delta_k.
//
// The product's mode is the fixed point of this step; with rho = 0 every Sigma_k is the identity and
// x is FedAvg's sum_k q_k mu_k at eta_s = 1. The prior of the samplers (N(0, 5e4^2), Hasan (2023),
// Sec. 3.3.3) is flat at these scales and is not divided out. The result is an unstacked
// deterministic posterior (point estimate), like FedAvgModel's.
func FedPA(init *posterior.Posterior, samples []*posterior.Posterior, weights []float64, cfg FedPAConfig) (*posterior.Posterior, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("predictive: FedPA: no samples")
	}
	x0, err := flatten(init)
	if err != nil {
		return nil, err
	}
	flat := make([]*flatParams, len(samples))
	K := 0
	for s, p := range samples {
		f, err := flatten(p)
		if err != nil {
			return nil, err
		}
		if len(f.names) != len(x0.names) {
			return nil, fmt.Errorf("predictive: FedPA: sample %d has %d parameters, the initial model %d", s, len(f.names), len(x0.names))
		}
		for i, name := range f.names {
			if name != x0.names[i] || len(f.dims[i]) == 0 || !slices.Equal(f.dims[i][1:], x0.dims[i]) {
				return nil, fmt.Errorf("predictive: FedPA: sample %d: parameter %q %v is not the initial model's %q %v with a client axis",
					s, name, f.dims[i], x0.names[i], x0.dims[i])
			}
			if s == 0 && i == 0 {
				K = f.dims[i][0]
			}
			if f.dims[i][0] != K {
				return nil, fmt.Errorf("predictive: FedPA: sample %d: parameter %q has %d clients, want %d", s, name, f.dims[i][0], K)
			}
		}
		flat[s] = f
	}
	q, err := normalizeWeights(weights, K)
	if err != nil {
		return nil, fmt.Errorf("predictive: FedPA: %w", err)
	}
	x := x0.float64s()
	delta := make([]float64, len(x))
	for k := 0; k < K; k++ {
		xs := make([][]float64, len(flat))
		for s, f := range flat {
			xs[s] = f.client(k).float64s()
		}
		dk, err := fedPADelta(x, xs, *cfg.Rho)
		if err != nil {
			return nil, fmt.Errorf("predictive: FedPA: client %d: %w", k, err)
		}
		for j, v := range dk {
			delta[j] += q[k] * v
		}
	}
	out := x0.clone()
	j := 0
	for _, v := range out.values {
		for i := range v {
			g := x[j] - cfg.ServerLR*delta[j]
			if math.IsNaN(g) || math.IsInf(g, 0) || math.Abs(g) > math.MaxFloat32 {
				return nil, fmt.Errorf("predictive: FedPA: global parameter %d is %v, not a finite float32", j, g)
			}
			v[i] = float32(g)
			j++
		}
	}
	return out.posterior()
}

// fedPADelta returns one client's Delta = Sigma^{-1} (x0 - mu) for its samples xs (l vectors of
// x0's length) and the shrinkage Sigma = rho_l (I + rho D D^T) of FedPA, by the Woodbury identity:
//
//	(I + rho D D^T)^{-1} v = v - rho D (I + rho D^T D)^{-1} D^T v,
//
// D the centred samples as columns, the l x l system solved by Cholesky (or, when there are more
// samples than parameters, the d x d system I + rho D D^T directly).
func fedPADelta(x0 []float64, xs [][]float64, rho float64) ([]float64, error) {
	l := len(xs)
	d := len(x0)
	mu := make([]float64, d)
	for s, v := range xs {
		if len(v) != d {
			return nil, fmt.Errorf("sample %d has %d values, want %d", s, len(v), d)
		}
		for j, e := range v {
			mu[j] += e / float64(l)
		}
	}
	rhoL := 1 / (1 + float64(l-1)*rho)
	v := make([]float64, d)
	for j := range v {
		v[j] = x0[j] - mu[j]
	}
	if l > 1 && rho > 0 && l > d {
		// More samples than parameters (small problems only): solve the d x d system directly.
		a := make([]float64, d*d)
		for _, x := range xs {
			for i := 0; i < d; i++ {
				for j := 0; j <= i; j++ {
					a[i*d+j] += rho * (x[i] - mu[i]) * (x[j] - mu[j])
				}
			}
		}
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				a[j*d+i] = a[i*d+j]
			}
			a[i*d+i]++
		}
		y, err := solveSPD(a, v, d)
		if err != nil {
			return nil, err
		}
		v = y
	} else if l > 1 && rho > 0 {
		// Gram matrix A = I + rho D^T D and b = D^T v, accumulated over the parameters.
		a := make([]float64, l*l)
		b := make([]float64, l)
		for j := 0; j < d; j++ {
			for s := 0; s < l; s++ {
				ds := xs[s][j] - mu[j]
				b[s] += ds * v[j]
				for r := 0; r <= s; r++ {
					a[s*l+r] += ds * (xs[r][j] - mu[j])
				}
			}
		}
		for s := 0; s < l; s++ {
			for r := 0; r <= s; r++ {
				a[s*l+r] *= rho
				a[r*l+s] = a[s*l+r]
			}
			a[s*l+s]++
		}
		y, err := solveSPD(a, b, l)
		if err != nil {
			return nil, err
		}
		for j := 0; j < d; j++ {
			var c float64
			for s := 0; s < l; s++ {
				c += (xs[s][j] - mu[j]) * y[s]
			}
			v[j] -= rho * c
		}
	}
	for j := range v {
		v[j] /= rhoL
	}
	return v, nil
}

// solveSPD solves A y = b for a symmetric positive definite n x n matrix (row-major) by Cholesky.
func solveSPD(a, b []float64, n int) ([]float64, error) {
	L := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= L[i*n+k] * L[j*n+k]
			}
			if i == j {
				if !(s > 0) {
					return nil, fmt.Errorf("the sample Gram matrix is not positive definite (pivot %d is %v)", i, s)
				}
				L[i*n+i] = math.Sqrt(s)
			} else {
				L[i*n+j] = s / L[j*n+j]
			}
		}
	}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := b[i]
		for k := 0; k < i; k++ {
			s -= L[i*n+k] * y[k]
		}
		y[i] = s / L[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= L[k*n+i] * y[k]
		}
		y[i] = s / L[i*n+i]
	}
	return y, nil
}

// float64s concatenates every parameter's values of f, in order, as float64.
func (f *flatParams) float64s() []float64 {
	n := 0
	for _, v := range f.values {
		n += len(v)
	}
	out := make([]float64, 0, n)
	for _, v := range f.values {
		for _, e := range v {
			out = append(out, float64(e))
		}
	}
	return out
}
