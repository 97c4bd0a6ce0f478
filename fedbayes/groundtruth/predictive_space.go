package groundtruth

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/predictive"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The labels of the predictive-space methods of package predictive (Hasan (2023)).
const (
	// LabelBCM is the Bayesian Committee Machine, the product of the client predictives divided by
	// the prior predictive K-1 times (Hasan (2023), Eqs. 3.4-3.5).
	LabelBCM = "BCM"
	// LabelMixture is the size-weighted mixture of the client predictives, moment matched (Hasan
	// (2023), Eqs. 4.6-4.7).
	LabelMixture = "mixture"
	// LabelBetaPredBayes interpolates the two with beta fitted on the server set (Hasan (2023),
	// Eqs. 4.9-4.11).
	LabelBetaPredBayes = "β-PredBayes"
)

// PredictiveScored is a predictive-space method's Gaussian predictive on the held-out inputs,
// compared with the exact posterior predictive.
type PredictiveScored struct {
	Label string `json:"label"`
	// Beta is beta-PredBayes's fitted beta (1 for the BCM, 0 for the mixture).
	Beta float64 `json:"beta"`
	// KLToTruth and KLFromTruth are the means over the held-out inputs of KL(q(y|x) || p(y|x)) and
	// KL(p(y|x) || q(y|x)) between the method's predictive q and the exact one p (univariate
	// Gaussians); VarRatio the geometric mean of their variances' ratio q/p.
	KLToTruth   float64    `json:"kl_q_p"`
	KLFromTruth float64    `json:"kl_p_q"`
	VarRatio    float64    `json:"var_ratio"`
	Predictive  Predictive `json:"predictive"`
}

// clientPredictives returns each client's exact posterior predictive N(x^T m_k, x^T S_k x + s2) on
// the inputs of data, as the float32 tables of predictive.NewGaussAggregate, and the prior's.
func clientPredictives(full []*Gaussian, prior *Gaussian, noiseVar float64, x *mat.Dense) (means, vars [][]float32, pm, pv []float32) {
	n, _ := x.Dims()
	one := func(g *Gaussian) ([]float32, []float32) {
		m, v := make([]float32, n), make([]float32, n)
		for i := 0; i < n; i++ {
			row := x.RowView(i)
			m[i] = float32(mat.Dot(row, g.Mean))
			v[i] = float32(mat.Inner(row, g.Cov, row) + noiseVar)
		}
		return m, v
	}
	for _, g := range full {
		m, v := one(g)
		means, vars = append(means, m), append(vars, v)
	}
	pm, pv = one(prior)
	return means, vars, pm, pv
}

// predictiveSpace runs the BCM, the mixture and beta-PredBayes of package predictive on the
// clients' exact posterior predictives (clients with a perfect sampler), beta fitted on the server
// set, and compares each with the exact global predictive on the held-out inputs.
func predictiveSpace(p *Problem, full []*Gaussian, exact *Gaussian) ([]PredictiveScored, error) {
	w := make([]float64, len(p.Clients))
	for k, c := range p.Clients {
		w[k] = float64(c.N())
	}
	f32 := func(y []float64) []float32 {
		out := make([]float32, len(y))
		for i, v := range y {
			out[i] = float32(v)
		}
		return out
	}
	m, v, pm, pv := clientPredictives(full, p.Model.Prior, p.Model.NoiseVar, p.Server.X)
	server, err := predictive.NewGaussAggregate(m, v, w, pm, pv)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: predictive space, server set: %w", err)
	}
	fit, err := predictive.FitBetaGauss(server, f32(p.Server.Y), predictive.FitOptions{})
	if err != nil {
		return nil, fmt.Errorf("groundtruth: fitting beta: %w", err)
	}
	m, v, pm, pv = clientPredictives(full, p.Model.Prior, p.Model.NoiseVar, p.Test.X)
	agg, err := predictive.NewGaussAggregate(m, v, w, pm, pv)
	if err != nil {
		return nil, fmt.Errorf("groundtruth: predictive space: %w", err)
	}
	z := distuv.UnitNormal.Quantile(0.95)
	var out []PredictiveScored
	for _, meth := range []struct {
		label string
		beta  float64
	}{{LabelBCM, 1}, {LabelMixture, 0}, {LabelBetaPredBayes, fit.Beta}} {
		qm, qv := agg.Beta(meth.beta)
		s := PredictiveScored{Label: meth.label, Beta: meth.beta}
		logRatio := 0.0
		n := float64(p.Test.N())
		for i := 0; i < p.Test.N(); i++ {
			row := p.Test.X.RowView(i)
			em := mat.Dot(row, exact.Mean)
			ev := mat.Inner(row, exact.Cov, row) + p.Model.NoiseVar
			mq, vq := float64(qm[i]), float64(qv[i])
			if !(vq > 0) || math.IsInf(vq, 0) || math.IsNaN(mq) {
				return nil, fmt.Errorf("groundtruth: %s: held-out example %d: predictive N(%v, %v)", meth.label, i, mq, vq)
			}
			d := mq - em
			s.KLToTruth += 0.5 * (math.Log(ev/vq) + (vq+d*d)/ev - 1) / n
			s.KLFromTruth += 0.5 * (math.Log(vq/ev) + (ev+d*d)/vq - 1) / n
			logRatio += math.Log(vq/ev) / n
			y := p.Test.Y[i]
			s.Predictive.NLL -= distuv.Normal{Mu: mq, Sigma: math.Sqrt(vq)}.LogProb(y) / n
			if math.Abs(y-mq) <= z*math.Sqrt(vq) {
				s.Predictive.Coverage90 += 1 / n
			}
		}
		s.VarRatio = math.Exp(logRatio)
		out = append(out, s)
	}
	return out, nil
}
