package groundtruth

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"fedbayes.dev/fedbayes/aggregate"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Value is a float64 that is written to JSON as a number, or as the strings "+Inf", "-Inf" and
// "NaN" when it is not finite (a point mass has an infinite KL divergence to any Gaussian).
type Value float64

// MarshalJSON writes v as a number or as "+Inf", "-Inf" or "NaN".
func (v Value) MarshalJSON() ([]byte, error) {
	f := float64(v)
	switch {
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "+Inf":
			*v = Value(math.Inf(1))
		case "-Inf":
			*v = Value(math.Inf(-1))
		case "NaN":
			*v = Value(math.NaN())
		default:
			return fmt.Errorf("groundtruth: %q is not a number", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*v = Value(f)
	return nil
}

// KL returns KL(p || q) between two multivariate Gaussians:
// (tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - d + log det Sq - log det Sp) / 2
// (Bishop (2006), Eq. 2.155 / Rasmussen & Williams (2006), Eq. A.23), clamped at 0 against rounding.
func KL(p, q *Gaussian) (float64, error) {
	if p.Dim() != q.Dim() {
		return 0, fmt.Errorf("groundtruth: KL between dimensions %d and %d", p.Dim(), q.Dim())
	}
	var cp, cq mat.Cholesky
	if !cp.Factorize(p.Cov) || !cq.Factorize(q.Cov) {
		return 0, fmt.Errorf("groundtruth: KL: a covariance is not positive definite")
	}
	d := p.Dim()
	var sol mat.Dense
	if err := cq.SolveTo(&sol, p.Cov); err != nil {
		return 0, fmt.Errorf("groundtruth: KL: %w", err)
	}
	tr := mat.Trace(&sol)
	var diff, s mat.VecDense
	diff.SubVec(q.Mean, p.Mean)
	if err := cq.SolveVecTo(&s, &diff); err != nil {
		return 0, fmt.Errorf("groundtruth: KL: %w", err)
	}
	quad := mat.Dot(&diff, &s)
	return math.Max(0, 0.5*(tr+quad-float64(d)+cq.LogDet()-cp.LogDet())), nil
}

// sqrtPSD returns the symmetric square root of a positive semi-definite matrix, from its
// eigendecomposition (negative rounding eigenvalues count as 0).
func sqrtPSD(a mat.Symmetric) (*mat.SymDense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, fmt.Errorf("groundtruth: eigendecomposition failed")
	}
	vals := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	n := len(vals)
	for j := 0; j < n; j++ {
		s := math.Sqrt(math.Max(vals[j], 0))
		for i := 0; i < n; i++ {
			v.Set(i, j, v.At(i, j)*math.Sqrt(s))
		}
	}
	out := mat.NewSymDense(n, nil)
	out.SymOuterK(1, &v) // V diag(sqrt(l)) V^T
	return out, nil
}

// W2 returns the 2-Wasserstein distance between N(m1, S1) and N(m2, S2):
// W2^2 = |m1 - m2|^2 + tr S1 + tr S2 - 2 tr (S2^1/2 S1 S2^1/2)^1/2 (Givens & Shortt (1984);
// Jamoussi et al. (BA-BFL), Eq. 9 is its barycenter in one dimension). Covariances may be singular
// (a point mass has covariance 0).
func W2(m1 []float64, s1 mat.Symmetric, m2 []float64, s2 mat.Symmetric) (float64, error) {
	if len(m1) != len(m2) || s1.SymmetricDim() != len(m1) || s2.SymmetricDim() != len(m2) {
		return 0, fmt.Errorf("groundtruth: W2: dimensions do not match")
	}
	r2, err := sqrtPSD(s2)
	if err != nil {
		return 0, err
	}
	var t mat.Dense
	t.Mul(r2, s1)
	t.Mul(&t, r2)
	ts := mat.NewSymDense(len(m1), nil)
	for i := 0; i < len(m1); i++ {
		for j := i; j < len(m1); j++ {
			ts.SetSym(i, j, 0.5*(t.At(i, j)+t.At(j, i)))
		}
	}
	cross, err := sqrtPSD(ts)
	if err != nil {
		return 0, err
	}
	w := mat.Trace(s1) + mat.Trace(s2) - 2*mat.Trace(cross)
	for i := range m1 {
		w += (m1[i] - m2[i]) * (m1[i] - m2[i])
	}
	return math.Sqrt(math.Max(w, 0)), nil
}

// W2Scalar returns the 2-Wasserstein distance between two univariate Gaussians,
// sqrt((m1 - m2)^2 + (s1 - s2)^2) with s the standard deviations.
func W2Scalar(p, q aggregate.Gaussian) float64 {
	dm, ds := p.Mean-q.Mean, math.Sqrt(p.Var)-math.Sqrt(q.Var)
	return math.Sqrt(dm*dm + ds*ds)
}

// klScalar is aggregate.KL(p || q), +Inf when p or q is a point mass (and they differ).
func klScalar(p, q aggregate.Gaussian) float64 {
	if p.Var == 0 || q.Var == 0 {
		if p == q {
			return 0
		}
		return math.Inf(1)
	}
	return aggregate.KL(p, q)
}

// ParamDistance holds the distances of one parameter's marginal to the exact marginal.
type ParamDistance struct {
	// KLToTruth is KL(q_i || p_i), KLFromTruth KL(p_i || q_i), W2 the 2-Wasserstein distance, and
	// VarRatio v_q,i / S_ii, for the rule's marginal q_i and the exact marginal p_i.
	KLToTruth   Value   `json:"kl_q_p"`
	KLFromTruth Value   `json:"kl_p_q"`
	W2          float64 `json:"w2"`
	VarRatio    float64 `json:"var_ratio"`
}

// Distances compares a diagonal Gaussian q with the exact posterior p.
type Distances struct {
	// KLToTruth is KL(q || p), the mode-seeking direction that mean-field VI minimises; KLFromTruth
	// is KL(p || q), large where q is over-confident. Both over the whole weight vector; +Inf for a
	// point mass.
	KLToTruth   Value `json:"kl_q_p"`
	KLFromTruth Value `json:"kl_p_q"`
	// W2 is the 2-Wasserstein distance over the whole weight vector.
	W2 float64 `json:"w2"`
	// MeanError is |m_q - m_p| (Euclidean); MeanErrorSD is the root mean square of
	// (m_q,i - m_p,i) / sqrt(S_ii), the error in units of the exact posterior standard deviations.
	MeanError   float64 `json:"mean_error"`
	MeanErrorSD float64 `json:"mean_error_sd"`
	// VarRatio is the geometric mean over parameters of v_q,i / S_ii: below 1 the rule is
	// over-confident, above 1 under-confident. VarRatioMin and VarRatioMax are its extremes.
	VarRatio    float64 `json:"var_ratio"`
	VarRatioMin float64 `json:"var_ratio_min"`
	VarRatioMax float64 `json:"var_ratio_max"`
	// PerParam holds the same per parameter, against the exact marginals.
	PerParam []ParamDistance `json:"per_param"`
	// Predictive scores of q on the held-out data.
	Predictive Predictive `json:"predictive"`
}

// Compare returns the distances of q to the exact posterior p, and q's predictive scores on test
// under the linear model with noise variance noiseVar.
func Compare(q Diagonal, p *Gaussian, noiseVar float64, test Data) (Distances, error) {
	out, err := compareMoments(q, p)
	if err != nil {
		return Distances{}, err
	}
	out.Predictive, err = Score(q.Mean, mat.NewSymDense(q.Dim(), diagData(q.Var)), noiseVar, test)
	if err != nil {
		return Distances{}, err
	}
	return out, nil
}

// compareMoments returns every distance of q to p but the predictive scores.
func compareMoments(q Diagonal, p *Gaussian) (Distances, error) {
	d := p.Dim()
	if q.Dim() != d || len(q.Var) != d {
		return Distances{}, fmt.Errorf("groundtruth: compare: q has dimension %d, p %d", q.Dim(), d)
	}
	for i := range q.Var {
		if !(q.Var[i] >= 0) || math.IsInf(q.Var[i], 0) || math.IsNaN(q.Mean[i]) || math.IsInf(q.Mean[i], 0) {
			return Distances{}, fmt.Errorf("groundtruth: compare: parameter %d: N(%v, %v) is not a Gaussian", i, q.Mean[i], q.Var[i])
		}
	}
	return compareGaussian(&Gaussian{Mean: mat.NewVecDense(d, q.Mean), Cov: mat.NewSymDense(d, diagData(q.Var))}, q.PointMass(), p)
}

// compareGaussian returns every distance of the Gaussian q (of any covariance; pointMass when a
// variance is 0, whose KL divergences are +Inf) to p but the predictive scores; the per-weight
// figures compare q's marginals with p's.
func compareGaussian(qg *Gaussian, pointMass bool, p *Gaussian) (Distances, error) {
	d := p.Dim()
	var out Distances
	if pointMass {
		out.KLToTruth, out.KLFromTruth = Value(math.Inf(1)), Value(math.Inf(1))
	} else {
		a, err := KL(qg, p)
		if err != nil {
			return Distances{}, err
		}
		b, err := KL(p, qg)
		if err != nil {
			return Distances{}, err
		}
		out.KLToTruth, out.KLFromTruth = Value(a), Value(b)
	}
	w, err := W2(qg.Mean.RawVector().Data, qg.Cov, p.Mean.RawVector().Data, p.Cov)
	if err != nil {
		return Distances{}, err
	}
	out.W2 = w
	q := MeanFieldMoment(qg)
	logSum := 0.0
	out.VarRatioMin, out.VarRatioMax = math.Inf(1), 0
	for i := 0; i < d; i++ {
		pi, qi := p.Marginal(i), q.Marginal(i)
		dm := qi.Mean - pi.Mean
		out.MeanError += dm * dm
		out.MeanErrorSD += dm * dm / pi.Var
		r := qi.Var / pi.Var
		logSum += math.Log(r)
		out.VarRatioMin = math.Min(out.VarRatioMin, r)
		out.VarRatioMax = math.Max(out.VarRatioMax, r)
		out.PerParam = append(out.PerParam, ParamDistance{
			KLToTruth: Value(klScalar(qi, pi)), KLFromTruth: Value(klScalar(pi, qi)), W2: W2Scalar(qi, pi), VarRatio: r,
		})
	}
	out.MeanError = math.Sqrt(out.MeanError)
	out.MeanErrorSD = math.Sqrt(out.MeanErrorSD / float64(d))
	out.VarRatio = math.Exp(logSum / float64(d))
	return out, nil
}

// Predictive holds a posterior's predictive scores on held-out data.
type Predictive struct {
	// NLL is the mean negative log density of the held-out targets under the posterior predictive
	// (linear: N(x^T m, x^T S x + s2); logistic: the probability of the label, see ScoreLogistic).
	// Coverage90 is, for the linear model, the fraction of targets inside the predictive's central
	// 90 % interval, and for the logistic model the fraction of held-out inputs whose true logit
	// x^T w* lies inside the posterior's central 90 % interval of x^T w.
	NLL        float64 `json:"nll"`
	Coverage90 float64 `json:"coverage90"`
}

// Score returns the predictive NLL and 90 % interval coverage of the posterior N(mean, cov) (cov
// positive semi-definite) on test, for the linear model with noise variance noiseVar.
func Score(mean []float64, cov mat.Symmetric, noiseVar float64, test Data) (Predictive, error) {
	if test.N() == 0 {
		return Predictive{}, fmt.Errorf("groundtruth: no held-out data")
	}
	_, c := test.X.Dims()
	if c != len(mean) || cov.SymmetricDim() != len(mean) {
		return Predictive{}, fmt.Errorf("groundtruth: score: %d features, posterior of dimension %d", c, len(mean))
	}
	z := distuv.UnitNormal.Quantile(0.95)
	m := mat.NewVecDense(len(mean), mean)
	var out Predictive
	for i := 0; i < test.N(); i++ {
		x := test.X.RowView(i)
		mu := mat.Dot(x, m)
		v := mat.Inner(x, cov, x) + noiseVar
		sd := math.Sqrt(v)
		out.NLL -= distuv.Normal{Mu: mu, Sigma: sd}.LogProb(test.Y[i])
		if math.Abs(test.Y[i]-mu) <= z*sd {
			out.Coverage90++
		}
	}
	n := float64(test.N())
	out.NLL /= n
	out.Coverage90 /= n
	return out, nil
}
