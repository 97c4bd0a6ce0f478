package groundtruth

import (
	"math"
	"math/rand/v2"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"

	"gonum.org/v1/gonum/mat"
)

// TestFrontierByHand checks Frontier on cases computed by hand: two weights of unit variance and
// correlation ρ = √0.75 have Λ_ii = 1/(1 − ρ²) = 4, so r = 4, t = √r = 2: variances 0.5 (between
// mean-field VI's 0.25 and the marginals' 1) and an excess of 2 · ½ (2 − 1 − log 2) = 1 − log 2 nats
// over each floor. A diagonal posterior has the excess 0 and its own variances.
func TestFrontierByHand(t *testing.T) {
	rho := math.Sqrt(0.75)
	p, err := NewGaussian([]float64{1, -2}, mat.NewSymDense(2, []float64{1, rho, rho, 1}))
	if err != nil {
		t.Fatal(err)
	}
	q, excess, err := Frontier(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - math.Log(2); math.Abs(excess-want) > 1e-12 {
		t.Errorf("excess %.15g, want 1 - log 2 = %.15g", excess, want)
	}
	for i, want := range []float64{0.5, 0.5} {
		if math.Abs(q.Var[i]-want) > 1e-12 || q.Mean[i] != p.Mean.AtVec(i) {
			t.Errorf("weight %d: N(%v, %v), want N(%v, %v)", i, q.Mean[i], q.Var[i], p.Mean.AtVec(i), want)
		}
	}
	// The excess is what the page computes from the KL divergences (Summary.Excess).
	checkFrontierKL(t, p, q, excess)

	diag, err := NewGaussian([]float64{0, 3}, mat.NewSymDense(2, []float64{2, 0, 0, 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	q, excess, err = Frontier(diag)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(excess) > 1e-15 || math.Abs(q.Var[0]-2) > 1e-15 || math.Abs(q.Var[1]-0.5) > 1e-15 {
		t.Errorf("diagonal posterior: excess %v, variances %v; want 0 and [2 0.5]", excess, q.Var)
	}
}

// checkFrontierKL checks that q's two excesses over p's floors, from the KL divergences, are equal
// and equal to excess.
func checkFrontierKL(t *testing.T, p *Gaussian, q Diagonal, excess float64) {
	t.Helper()
	vi, err := MeanFieldVI(p)
	if err != nil {
		t.Fatal(err)
	}
	kl := func(a, b *Gaussian) float64 {
		v, err := KL(a, b)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	full := func(d Diagonal) *Gaussian {
		g, err := d.Full()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	toVI := kl(full(q), p) - kl(full(vi), p)
	toMom := kl(p, full(q)) - kl(p, full(MeanFieldMoment(p)))
	if math.Abs(toVI-excess) > 1e-9 || math.Abs(toMom-excess) > 1e-9 {
		t.Errorf("excesses from the KL divergences %.12g and %.12g, want both %.12g", toVI, toMom, excess)
	}
}

// TestFrontierIsMinimax checks, on random correlated posteriors of 2 to 8 weights, that Frontier's
// two excesses agree with the KL divergences, and that no perturbation of its log variances has a
// smaller larger excess (the minimax property the page's verdicts rely on).
func TestFrontierIsMinimax(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for trial := range 20 {
		d := 2 + trial%7
		a := mat.NewDense(d, d, nil)
		for i := range d {
			for j := range d {
				a.Set(i, j, rng.NormFloat64())
			}
		}
		cov := mat.NewSymDense(d, nil)
		cov.SymOuterK(1, a)
		for i := range d {
			cov.SetSym(i, i, cov.At(i, i)+0.1)
		}
		mean := make([]float64, d)
		p, err := NewGaussian(mean, cov)
		if err != nil {
			t.Fatal(err)
		}
		q, excess, err := Frontier(p)
		if err != nil {
			t.Fatal(err)
		}
		checkFrontierKL(t, p, q, excess)
		prec, _, err := p.natural()
		if err != nil {
			t.Fatal(err)
		}
		larger := func(v []float64) float64 {
			var toVI, toMom float64
			for i := range v {
				ti, ri := prec.At(i, i)*v[i], prec.At(i, i)*cov.At(i, i)
				toVI += 0.5 * (ti - 1 - math.Log(ti))
				toMom += 0.5 * (ri/ti - 1 - math.Log(ri/ti))
			}
			return math.Max(toVI, toMom)
		}
		if got := larger(q.Var); math.Abs(got-excess) > 1e-9 {
			t.Fatalf("trial %d: excess %v, recomputed %v", trial, excess, got)
		}
		for range 200 {
			v := make([]float64, d)
			for i := range v {
				v[i] = q.Var[i] * math.Exp(0.05*rng.NormFloat64())
			}
			if got := larger(v); got < excess-1e-9 {
				t.Fatalf("trial %d: a perturbed q has the larger excess %v < the frontier's %v", trial, got, excess)
			}
		}
	}
}

// TestDWCMarginalsByHand recomputes the RefDWCMarginals floor from the clients' exact posteriors:
// Fischer et al. (2024), Eq. 17 with the previous global the prior N(0, 1) and each client's exact
// marginal N(m_k,i, C_k,ii): 1/v_i = Σ_k 1/C_k,ii − (K − 1), m_i = v_i Σ_k m_k,i / C_k,ii.
func TestDWCMarginalsByHand(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Test = 10
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunProblem(p, RuleOptions{Rules: []aggregate.Rule{aggregate.EAA}})
	if err != nil {
		t.Fatal(err)
	}
	var got Diagonal
	for _, r := range res.References {
		if r.Label == RefDWCMarginals {
			got = r.Q
		}
	}
	if got.Dim() != cfg.Dims {
		t.Fatalf("no %q reference in %d references", RefDWCMarginals, len(res.References))
	}
	K := float64(len(p.Clients))
	for i := range cfg.Dims {
		prec, mean := -(K - 1), 0.0
		for _, c := range p.Clients {
			g, err := p.Model.Posterior(c)
			if err != nil {
				t.Fatal(err)
			}
			prec += 1 / g.Cov.At(i, i)
			mean += g.Mean.AtVec(i) / g.Cov.At(i, i)
		}
		if prec <= 0 {
			t.Fatalf("weight %d: the hand formula's precision %v is not positive: choose another case", i, prec)
		}
		if v, m := 1/prec, mean/prec; !near(got.Var[i], v, 1e-9) || !near(got.Mean[i], m, 1e-9) {
			t.Errorf("weight %d: N(%v, %v), want N(%v, %v)", i, got.Mean[i], got.Var[i], m, v)
		}
	}
}

// TestCompareGaussianFull checks the full-covariance distances: a Gaussian against itself is at 0
// in both KL divergences and W2; against another it gives KL's values, and W2 equals the closed form
// for commuting covariances, |m1 − m2|² + Σ(√λ1 − √λ2)² (here both diagonal in one basis).
func TestCompareGaussianFull(t *testing.T) {
	rho := 0.6
	p, _ := NewGaussian([]float64{1, 2}, mat.NewSymDense(2, []float64{1, rho, rho, 1}))
	d, err := compareGaussian(p, false, p)
	if err != nil || math.Abs(float64(d.KLToTruth)) > 1e-12 || math.Abs(float64(d.KLFromTruth)) > 1e-12 || d.W2 > 1e-7 {
		t.Fatalf("p against itself: %+v (err %v)", d, err)
	}
	q, _ := NewGaussian([]float64{1.5, 2}, mat.NewSymDense(2, []float64{4, 4 * rho, 4 * rho, 4}))
	d, err = compareGaussian(q, false, p)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := KL(q, p)
	b, _ := KL(p, q)
	if float64(d.KLToTruth) != a || float64(d.KLFromTruth) != b {
		t.Errorf("KL %v / %v, want %v / %v", d.KLToTruth, d.KLFromTruth, a, b)
	}
	// q's covariance is 4 p's: eigenvalues 1 ± ρ scaled by 4, so W2² = 0.25 + Σ (2 − 1)² (1 ± ρ).
	if want := math.Sqrt(0.25 + (1 + rho) + (1 - rho)); math.Abs(d.W2-want) > 1e-9 {
		t.Errorf("W2 %v, want %v", d.W2, want)
	}
}
