package groundtruth

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// LinearModel is Bayesian linear regression y = x^T w + e, e ~ N(0, NoiseVar), with the Gaussian
// prior w ~ Prior. Its posterior is Gaussian in closed form (Bishop (2006), Eqs. 3.50-3.51;
// Hasan (2023), Sec. 2.1).
type LinearModel struct {
	Prior    *Gaussian
	NoiseVar float64
}

// Data is one client's (or the held-out) examples: X is n x d, Y has n targets.
type Data struct {
	X *mat.Dense
	Y []float64
}

// N returns the number of examples.
func (d Data) N() int { return len(d.Y) }

func (m LinearModel) check(data Data, who string) error {
	if m.Prior == nil {
		return fmt.Errorf("groundtruth: linear model without a prior")
	}
	if !(m.NoiseVar > 0) || math.IsInf(m.NoiseVar, 0) {
		return fmt.Errorf("groundtruth: noise variance %v: want positive and finite", m.NoiseVar)
	}
	if data.X == nil {
		if len(data.Y) != 0 {
			return fmt.Errorf("groundtruth: %s: %d targets but no inputs", who, len(data.Y))
		}
		return nil
	}
	r, c := data.X.Dims()
	if r != len(data.Y) {
		return fmt.Errorf("groundtruth: %s: %d input rows but %d targets", who, r, len(data.Y))
	}
	if c != m.Prior.Dim() {
		return fmt.Errorf("groundtruth: %s: %d features but the prior has dimension %d", who, c, m.Prior.Dim())
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := data.X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("groundtruth: %s: x[%d][%d] is %v", who, i, j, v)
			}
		}
		if v := data.Y[i]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("groundtruth: %s: y[%d] is %v", who, i, v)
		}
	}
	return nil
}

// Posterior returns the exact posterior given data: precision L = S0^-1 + X^T X / s2 and mean
// L^-1 (S0^-1 m0 + X^T y / s2) (Bishop (2006), Eqs. 3.50-3.51). With no data it is the prior.
func (m LinearModel) Posterior(data Data) (*Gaussian, error) {
	if err := m.check(data, "data"); err != nil {
		return nil, err
	}
	prec, h, err := m.Prior.natural()
	if err != nil {
		return nil, fmt.Errorf("groundtruth: prior: %w", err)
	}
	if data.N() > 0 {
		var xtx mat.SymDense
		xtx.SymOuterK(1/m.NoiseVar, data.X.T())
		prec.AddSym(prec, &xtx)
		var xty mat.VecDense
		xty.MulVec(data.X.T(), mat.NewVecDense(data.N(), data.Y))
		h.AddScaledVec(h, 1/m.NoiseVar, &xty)
	}
	return fromNatural(prec, h)
}

// GlobalFromClients returns the posterior given all clients' data from the client posteriors alone:
// their product divided by the prior K-1 times, p(w | D) ∝ prod_k p(w | D_k) / p(w)^(K-1)
// (Neiswanger et al. 2014; Hasan (2023), Eq. 2.13; Al-Shedivat et al. 2021, Sec. 3). In natural
// parameters: L = sum_k L_k - (K-1) S0^-1 and L m = sum_k L_k m_k - (K-1) S0^-1 m0. Exact for any
// likelihood whose clients' data are independent given w.
func GlobalFromClients(prior *Gaussian, clients []*Gaussian) (*Gaussian, error) {
	if prior == nil {
		return nil, fmt.Errorf("groundtruth: no prior")
	}
	if len(clients) == 0 {
		return nil, fmt.Errorf("groundtruth: no clients")
	}
	p0, h0, err := prior.natural()
	if err != nil {
		return nil, fmt.Errorf("groundtruth: prior: %w", err)
	}
	d := prior.Dim()
	prec := mat.NewSymDense(d, nil)
	h := mat.NewVecDense(d, nil)
	for k, c := range clients {
		if c == nil || c.Dim() != d {
			return nil, fmt.Errorf("groundtruth: client %d: dimension does not match the prior's %d", k, d)
		}
		pk, hk, err := c.natural()
		if err != nil {
			return nil, fmt.Errorf("groundtruth: client %d: %w", k, err)
		}
		prec.AddSym(prec, pk)
		h.AddVec(h, hk)
	}
	K1 := float64(len(clients) - 1)
	var scaled mat.SymDense
	scaled.ScaleSym(-K1, p0)
	prec.AddSym(prec, &scaled)
	h.AddScaledVec(h, -K1, h0)
	g, err := fromNatural(prec, h)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: product of the clients divided by the prior: %w", err)
	}
	return g, nil
}

// Centralised fits the posterior on all the data at once by a different route than Posterior, as a
// check: the augmented least-squares problem [X / s; U] w = [y / s; U m0] (U^T U = S0^-1, the
// prior as pseudo-observations), solved by QR, with covariance R^-1 R^-T from its triangular factor.
func (m LinearModel) Centralised(clients []Data) (*Gaussian, error) {
	d := m.Prior.Dim()
	n := 0
	for k, c := range clients {
		if err := m.check(c, fmt.Sprintf("client %d", k)); err != nil {
			return nil, err
		}
		n += c.N()
	}
	p0, h0, err := m.Prior.natural()
	if err != nil {
		return nil, fmt.Errorf("groundtruth: prior: %w", err)
	}
	var ch mat.Cholesky
	if !ch.Factorize(p0) {
		return nil, fmt.Errorf("groundtruth: prior precision is not positive definite")
	}
	var u mat.TriDense
	ch.UTo(&u) // p0 = U^T U
	a := mat.NewDense(n+d, d, nil)
	b := mat.NewVecDense(n+d, nil)
	s := math.Sqrt(m.NoiseVar)
	row := 0
	for _, c := range clients {
		for i := 0; i < c.N(); i++ {
			for j := 0; j < d; j++ {
				a.Set(row, j, c.X.At(i, j)/s)
			}
			b.SetVec(row, c.Y[i]/s)
			row++
		}
	}
	// U m0 = U^-T (U^T U m0) = U^-T h0.
	um0 := mat.NewVecDense(d, nil)
	if err := um0.SolveVec(u.T(), h0); err != nil {
		return nil, fmt.Errorf("groundtruth: prior factor: %w", err)
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			a.Set(n+i, j, u.At(i, j))
		}
		b.SetVec(n+i, um0.AtVec(i))
	}
	var qr mat.QR
	qr.Factorize(a)
	w := mat.NewDense(d, 1, nil)
	if err := qr.SolveTo(w, false, b); err != nil {
		return nil, fmt.Errorf("groundtruth: least squares: %w", err)
	}
	var r mat.Dense
	qr.RTo(&r)
	rt := mat.NewTriDense(d, mat.Upper, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			rt.SetTri(i, j, r.At(i, j))
		}
	}
	var rinv mat.TriDense
	if err := rinv.InverseTri(rt); err != nil {
		return nil, fmt.Errorf("groundtruth: inverting R: %w", err)
	}
	cov := mat.NewSymDense(d, nil)
	cov.SymOuterK(1, &rinv)
	return &Gaussian{Mean: mat.NewVecDense(d, w.RawMatrix().Data), Cov: cov}, nil
}
