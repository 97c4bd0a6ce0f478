package groundtruth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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

// TestDWCOnFails checks that DWC on the clients' marginals reports a weight whose combined
// precision is not positive (three clients twice as wide as the prior: 3/2 − 2 < 0) instead of
// keeping the prior there, and that the reference row then says so rather than holding a value.
func TestDWCOnFails(t *testing.T) {
	prior, _ := NewGaussian([]float64{0, 0}, mat.NewSymDense(2, []float64{1, 0, 0, 1}))
	wide := Diagonal{Mean: []float64{0.5, 0}, Var: []float64{2, 0.1}}
	if _, err := dwcOn([]Diagonal{wide, wide, wide}, prior); err == nil || !strings.Contains(err.Error(), "weight 0") {
		t.Fatalf("error %v, want one naming weight 0", err)
	}
	res := &Result{Sizes: []int{1, 1, 1}, Clients: []Diagonal{wide, wide, wide}}
	score := func(q Diagonal) (Distances, error) { return compareMoments(q, prior) }
	if err := scoreRules(res, prior, prior, []Diagonal{wide, wide, wide}, RefDWCMarginals, RuleOptions{Rules: []aggregate.Rule{aggregate.EAA}}, score); err != nil {
		t.Fatal(err)
	}
	var ref *Scored
	for i := range res.References {
		if res.References[i].Label == RefDWCMarginals {
			ref = &res.References[i]
		}
	}
	if ref == nil || ref.Failed == "" || ref.Q.Dim() != 0 {
		t.Fatalf("reference %+v, want a failed row without a posterior", ref)
	}
}

// TestSummariseDrawSetsByHand checks the draw-set summary on two hand-made seeds: floors 1 (KL(q‖p))
// and 0.5 (KL(p‖q)), DWC's excess 2 in both; seed 1's sets have excesses 1 and 3 (mean 2, not below
// DWC; one set below), seed 2's 1 and 1.5 (mean 1.25, below; both sets below). The mean excess over
// the sets is 1.625, the Monte Carlo sd within a seed sqrt((2 + 0.125)/2); full-covariance KLs 0.05,
// 0.2, 0.05, 0.05: one set above 0.1 nat.
func TestSummariseDrawSetsByHand(t *testing.T) {
	run := func(excesses []float64, fullKL []float64) *Result {
		r := &Result{
			References: []Scored{
				{Label: RefMeanFieldVI, Distances: Distances{KLToTruth: 1, KLFromTruth: 2}},
				{Label: RefMoment, Distances: Distances{KLToTruth: 3, KLFromTruth: 0.5}},
			},
			Rules: []Scored{{Label: "DWC", Rule: "DWC", Distances: Distances{KLToTruth: 3, KLFromTruth: 1}}},
		}
		for i, e := range excesses {
			r.DrawSets = append(r.DrawSets, DrawSet{KLToTruth: Value(1 + e), KLFromTruth: 0.5,
				FullKLToTruth: Value(fullKL[i]), FullKLFromTruth: Value(fullKL[i] / 2)})
		}
		return r
	}
	got := summariseDrawSets([]*Result{run([]float64{1, 3}, []float64{0.05, 0.2}), run([]float64{1, 1.5}, []float64{0.05, 0.05})})
	want := &DrawSetSummary{Sets: 4, Seeds: 2, Excess: 1.625, WithinSD: math.Sqrt((2 + 0.125) / 2), BelowDWC: 3, SeedsBelowDWC: 1, SeedsSplit: 1, FullAbove: 1}
	if got == nil || got.Sets != want.Sets || got.Seeds != want.Seeds || !near(got.Excess, want.Excess, 1e-12) ||
		!near(got.WithinSD, want.WithinSD, 1e-12) || got.BelowDWC != want.BelowDWC || got.SeedsBelowDWC != want.SeedsBelowDWC || got.SeedsSplit != want.SeedsSplit || got.FullAbove != want.FullAbove {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if summariseDrawSets([]*Result{{}}) != nil {
		t.Error("runs without draw sets: want no summary")
	}
}

// TestRoundsChartNamesWhatLeavesTheAxis checks that the rounds chart's caption names a rule whose KL
// rises above the axis' top (RoundsChartMax) and the round it does so from, and no other.
func TestRoundsChartNamesWhatLeavesTheAxis(t *testing.T) {
	r := &RoundsResult{Rounds: 3, Clients: 2, FloorKLFromTruth: 0.5, Trajectories: []Trajectory{
		{Label: "GAA/size", Points: []RoundPoint{{Round: 1, KLFromTruth: 10}, {Round: 2, KLFromTruth: 2e5}, {Round: 3, KLFromTruth: 3e9}}},
		{Label: "EAA/size", Points: []RoundPoint{{Round: 1, KLFromTruth: 10}, {Round: 2, KLFromTruth: 9}, {Round: 3, KLFromTruth: 8}}},
	}}
	c, err := RoundsChart("r", r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Caption, "off the top of the chart: GAA/size from round 2.") || strings.Contains(c.Caption, "EAA") {
		t.Errorf("caption %q", c.Caption)
	}
}

// TestSweepCoincidence checks the sweep chart's note: rules within 1 % of each other at every point
// are named together, a rule 2 % away at one point is not, and an infinite KL never coincides.
func TestSweepCoincidence(t *testing.T) {
	got := sweepCoincidence([]string{"EAA/size", "AALV/size", "WB/size", "DWC", "FedAvg/size"}, [][]float64{
		{10, 20, 40}, {10.05, 20.1, 39.8}, {10, 20.4, 40}, {1, 2, 3}, {math.Inf(1), math.Inf(1), math.Inf(1)},
	})
	if want := "Drawn on top of each other (KL within 1 % at every point): EAA/size, AALV/size."; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := sweepCoincidence([]string{"a", "b"}, [][]float64{{1}, {2}}); got != "" {
		t.Errorf("apart: note %q", got)
	}
	if got := sweepCoincidence([]string{"a", "b"}, [][]float64{{1, math.NaN(), 3}, {1, 50, 3}}); got != "" {
		t.Errorf("a NaN point: note %q", got)
	}
}

// TestDistanceChartFitsThePage checks that the distance chart of many rows stays within a notebook
// page (nbcheck's 1280-pixel window failed on the logistic chart's 1,342 pixels).
func TestDistanceChartFitsThePage(t *testing.T) {
	r := &Result{Config: DefaultConfig(), Sizes: []int{1, 2}}
	for i := range 30 {
		r.Rules = append(r.Rules, Scored{Label: fmt.Sprintf("rule %d", i), Weighting: Size, Distances: Distances{KLToTruth: 1, KLFromTruth: 1, W2: 1}})
	}
	c, err := DistanceChart("d", r)
	if err != nil {
		t.Fatal(err)
	}
	if c.Width > distanceMaxWidth {
		t.Errorf("width %d, want at most %d", c.Width, distanceMaxWidth)
	}
}
