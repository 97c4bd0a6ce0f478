package groundtruth

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
	"gonum.org/v1/gonum/mat"
)

// Gaussian is a multivariate Gaussian N(Mean, Cov) with a full, positive definite covariance.
type Gaussian struct {
	Mean *mat.VecDense
	Cov  *mat.SymDense
}

// Dim returns the dimension of g.
func (g *Gaussian) Dim() int { return g.Mean.Len() }

// NewGaussian checks mean and cov (finite, matching sizes, cov positive definite) and returns N(mean, cov).
func NewGaussian(mean []float64, cov *mat.SymDense) (*Gaussian, error) {
	d := len(mean)
	if d == 0 {
		return nil, fmt.Errorf("groundtruth: Gaussian of dimension 0")
	}
	if cov == nil || cov.SymmetricDim() != d {
		return nil, fmt.Errorf("groundtruth: covariance does not match the mean's dimension %d", d)
	}
	for i, m := range mean {
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return nil, fmt.Errorf("groundtruth: mean[%d] is %v", i, m)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		return nil, fmt.Errorf("groundtruth: covariance is not positive definite")
	}
	c := mat.NewSymDense(d, nil)
	c.CopySym(cov)
	return &Gaussian{Mean: mat.NewVecDense(d, append([]float64(nil), mean...)), Cov: c}, nil
}

// fromNatural returns the Gaussian with precision prec and precision-times-mean h.
func fromNatural(prec *mat.SymDense, h *mat.VecDense) (*Gaussian, error) {
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		return nil, fmt.Errorf("groundtruth: precision matrix is not positive definite")
	}
	d := prec.SymmetricDim()
	cov := mat.NewSymDense(d, nil)
	if err := ch.InverseTo(cov); err != nil {
		return nil, fmt.Errorf("groundtruth: inverting the precision: %w", err)
	}
	mean := mat.NewVecDense(d, nil)
	if err := ch.SolveVecTo(mean, h); err != nil {
		return nil, fmt.Errorf("groundtruth: solving for the mean: %w", err)
	}
	return &Gaussian{Mean: mean, Cov: cov}, nil
}

// natural returns the precision L = Cov^-1 and h = L Mean of g.
func (g *Gaussian) natural() (*mat.SymDense, *mat.VecDense, error) {
	var ch mat.Cholesky
	if !ch.Factorize(g.Cov) {
		return nil, nil, fmt.Errorf("groundtruth: covariance is not positive definite")
	}
	prec := mat.NewSymDense(g.Dim(), nil)
	if err := ch.InverseTo(prec); err != nil {
		return nil, nil, fmt.Errorf("groundtruth: inverting the covariance: %w", err)
	}
	h := mat.NewVecDense(g.Dim(), nil)
	h.MulVec(prec, g.Mean)
	return prec, h, nil
}

// Marginal returns the univariate marginal of parameter i, N(Mean_i, Cov_ii).
func (g *Gaussian) Marginal(i int) aggregate.Gaussian {
	return aggregate.Gaussian{Mean: g.Mean.AtVec(i), Var: g.Cov.At(i, i)}
}

// Diagonal is a mean-field (diagonal) Gaussian: independent N(Mean[i], Var[i]). It is what a client
// sends the server and what a parameter-space rule returns. A variance of 0 is a point mass (FedAvg).
type Diagonal struct {
	Mean, Var []float64
}

// Dim returns the dimension of q.
func (q Diagonal) Dim() int { return len(q.Mean) }

// Marginal returns parameter i as a univariate Gaussian.
func (q Diagonal) Marginal(i int) aggregate.Gaussian {
	return aggregate.Gaussian{Mean: q.Mean[i], Var: q.Var[i]}
}

// PointMass reports whether some variance of q is 0.
func (q Diagonal) PointMass() bool {
	for _, v := range q.Var {
		if v == 0 {
			return true
		}
	}
	return false
}

// Full returns q as a Gaussian with a diagonal covariance (q must have positive variances).
func (q Diagonal) Full() (*Gaussian, error) {
	return NewGaussian(q.Mean, mat.NewSymDense(q.Dim(), diagData(q.Var)))
}

// diagData returns the row-major data of the diagonal matrix diag(v).
func diagData(v []float64) []float64 {
	d := len(v)
	out := make([]float64, d*d)
	for i, x := range v {
		out[i*d+i] = x
	}
	return out
}

// MeanFieldVI returns the diagonal Gaussian closest to g in KL(q || g), what mean-field variational
// inference converges to on a Gaussian posterior: the exact mean and the variances 1 / L_ii, L the
// precision of g (Bishop (2006), Sec. 10.1.2). These variances never exceed the marginal ones, with
// equality when g's precision is diagonal.
func MeanFieldVI(g *Gaussian) (Diagonal, error) {
	prec, _, err := g.natural()
	if err != nil {
		return Diagonal{}, err
	}
	q := Diagonal{Mean: make([]float64, g.Dim()), Var: make([]float64, g.Dim())}
	for i := range q.Mean {
		q.Mean[i] = g.Mean.AtVec(i)
		q.Var[i] = 1 / prec.At(i, i)
	}
	return q, nil
}

// MeanFieldMoment returns the diagonal Gaussian closest to g in KL(g || q): the exact mean and the
// exact marginal variances Cov_ii (moment matching).
func MeanFieldMoment(g *Gaussian) Diagonal {
	q := Diagonal{Mean: make([]float64, g.Dim()), Var: make([]float64, g.Dim())}
	for i := range q.Mean {
		q.Mean[i] = g.Mean.AtVec(i)
		q.Var[i] = g.Cov.At(i, i)
	}
	return q
}
