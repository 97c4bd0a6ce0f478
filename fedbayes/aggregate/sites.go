package aggregate

import (
	"fmt"
	"math"
)

// Natural is a diagonal Gaussian factor in natural parameters: per parameter i, the precision
// Prec[i] = 1/v_i and the precision-weighted mean Shift[i] = m_i/v_i. It is the form in which the
// site-based methods keep their approximations, because multiplying and dividing Gaussian factors
// adds and subtracts their natural parameters (partitioned variational inference, Ashman et al.
// (2022); expectation propagation, Vehtari et al. (2020); FedEP, Guo et al. (2023)): the global approximation is the prior times one site per client,
//
//	q(w) ∝ p(w) Π_k t_k(w),   Prec_q = Prec_0 + Σ_k Prec_k,   Shift_q = Shift_0 + Σ_k Shift_k,
//
// and client k's cavity is q without its own site, q_{-k} = q / t_k. A site is an unnormalised
// factor, not a density: its precision may be zero (a site that has learned nothing, as every site
// starts) or negative (a factor that widens the global); only a global or a cavity must have positive
// precision everywhere to be a Gaussian.
type Natural struct {
	Prec, Shift []float64
}

// NewNatural returns a zero factor of n parameters: precision 0 and shift 0 everywhere, the site of
// a client that has sent nothing yet (the factor 1).
func NewNatural(n int) Natural {
	return Natural{Prec: make([]float64, n), Shift: make([]float64, n)}
}

// NaturalOf returns the natural parameters of the diagonal Gaussian N(mean, variance). It fails,
// naming the parameter, when a variance is not positive and finite or a mean is not finite.
func NaturalOf(mean, variance []float64) (Natural, error) {
	if len(mean) != len(variance) {
		return Natural{}, fmt.Errorf("aggregate: %d means and %d variances", len(mean), len(variance))
	}
	n := NewNatural(len(mean))
	for i, v := range variance {
		if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) {
			return Natural{}, fmt.Errorf("aggregate: parameter %d: mean %g, variance %g: want a finite mean and a positive finite variance", i, mean[i], v)
		}
		n.Prec[i] = 1 / v
		n.Shift[i] = mean[i] / v
	}
	return n, nil
}

// Len returns the number of parameters of f.
func (f Natural) Len() int { return len(f.Prec) }

// sameShape fails, naming what and who, unless every factor has n precisions and n shifts.
func sameShape(n int, who string, fs ...Natural) error {
	for _, f := range fs {
		if len(f.Prec) != n || len(f.Shift) != n {
			return fmt.Errorf("aggregate: %s: a factor of %d precisions and %d shifts, want %d of each", who, len(f.Prec), len(f.Shift), n)
		}
	}
	return nil
}

// Clone returns a copy of f that shares no memory with it.
func (f Natural) Clone() Natural {
	return Natural{Prec: append([]float64(nil), f.Prec...), Shift: append([]float64(nil), f.Shift...)}
}

// Moments returns the mean and variance of f as a Gaussian. It fails, naming the parameter, when a
// precision is not positive (f is then no density) or a moment is not finite.
func (f Natural) Moments() (mean, variance []float64, err error) {
	if err := sameShape(f.Len(), "moments", f); err != nil {
		return nil, nil, err
	}
	mean, variance = make([]float64, f.Len()), make([]float64, f.Len())
	for i, p := range f.Prec {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, nil, fmt.Errorf("aggregate: parameter %d: precision %g is not positive and finite: no Gaussian", i, p)
		}
		variance[i], mean[i] = 1/p, f.Shift[i]/p
		if math.IsInf(mean[i], 0) || math.IsNaN(mean[i]) {
			return nil, nil, fmt.Errorf("aggregate: parameter %d: precision %g and shift %g give mean %g", i, p, f.Shift[i], mean[i])
		}
	}
	return mean, variance, nil
}

// Product returns the product of the prior and the sites in natural parameters, the global
// approximation q ∝ p Π_k t_k. Every factor must have the prior's length.
func Product(prior Natural, sites []Natural) (Natural, error) {
	if err := sameShape(prior.Len(), "the prior", prior); err != nil {
		return Natural{}, err
	}
	q := prior.Clone()
	for k, t := range sites {
		if err := sameShape(q.Len(), fmt.Sprintf("site %d against the prior", k), t); err != nil {
			return Natural{}, err
		}
		for i := range q.Prec {
			q.Prec[i] += t.Prec[i]
			q.Shift[i] += t.Shift[i]
		}
	}
	return q, nil
}

// Cavity returns client k's cavity q / t_k, the global without the client's own site: what the client
// uses as its prior in partitioned VI and expectation propagation. It fails, naming the client and
// the parameter, when the cavity's precision is not positive (the site holds more precision than the
// global), never clamping it.
func Cavity(q, site Natural, client int) (Natural, error) {
	if err := sameShape(q.Len(), fmt.Sprintf("client %d's cavity", client), q, site); err != nil {
		return Natural{}, err
	}
	c := NewNatural(q.Len())
	for i := range q.Prec {
		c.Prec[i] = q.Prec[i] - site.Prec[i]
		c.Shift[i] = q.Shift[i] - site.Shift[i]
		if !(c.Prec[i] > 0) || math.IsInf(c.Prec[i], 0) {
			return Natural{}, fmt.Errorf("aggregate: client %d: parameter %d: cavity precision %g (global %g, site %g) is not positive",
				client, i, c.Prec[i], q.Prec[i], site.Prec[i])
		}
	}
	return c, nil
}

// SiteFrom returns the site that turns cavity into the client's new approximation local: local /
// cavity, in natural parameters local - cavity (t_k ← q_k / q_{-k}, Ashman et al. (2022)).
func SiteFrom(local, cavity Natural) (Natural, error) {
	if err := sameShape(cavity.Len(), "a new site", local, cavity); err != nil {
		return Natural{}, err
	}
	t := NewNatural(local.Len())
	for i := range t.Prec {
		t.Prec[i] = local.Prec[i] - cavity.Prec[i]
		t.Shift[i] = local.Shift[i] - cavity.Shift[i]
	}
	return t, nil
}

// Damp returns the damped site update (1 - rho) old + rho fresh in natural parameters, a geometric
// interpolation of the two factors, t_k ← t_fresh^rho t_old^(1-rho) (Guo et al. (2023); Vehtari et al.
// (2020)). rho = 1 takes the fresh site as it is; rho must lie in (0, 1].
func Damp(old, fresh Natural, rho float64) (Natural, error) {
	if !(rho > 0 && rho <= 1) {
		return Natural{}, fmt.Errorf("aggregate: damping %g: want a value in (0, 1]", rho)
	}
	if err := sameShape(old.Len(), "damping a site", old, fresh); err != nil {
		return Natural{}, err
	}
	t := NewNatural(old.Len())
	for i := range t.Prec {
		t.Prec[i] = (1-rho)*old.Prec[i] + rho*fresh.Prec[i]
		t.Shift[i] = (1-rho)*old.Shift[i] + rho*fresh.Shift[i]
	}
	return t, nil
}
