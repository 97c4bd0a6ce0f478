package aggregate

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// oneParam returns a posterior with one Gaussian parameter "/w" of the given means and log-variances
// and one deterministic bias "/b".
func oneParam(mu, lv []float32, bias float32) *posterior.Posterior {
	p := &posterior.Posterior{Params: []posterior.Param{
		{Name: "/b", Mean: tensors.FromFlatDataAndDimensions([]float32{bias}, 1)},
		{Name: "/w", Mean: tensors.FromFlatDataAndDimensions(mu, len(mu)), LogVar: tensors.FromFlatDataAndDimensions(lv, len(lv))},
	}}
	p.Sort()
	return p
}

// TestBFLPHandComputed checks each BFL-P rule on two clients against values worked out by hand.
//
// Element 0: both clients at log s2 = -9 (below the floor, clamped to -8 where BFL-P clamps); element 1:
// -6 and -7 (inside the range); element 2: -20 and -7.5.
func TestBFLPHandComputed(t *testing.T) {
	c1 := oneParam([]float32{1, 0, 0}, []float32{-9, -6, -20}, 2)
	c2 := oneParam([]float32{3, 0, 0}, []float32{-9, -7, -7.5}, 4)
	v := math.Exp(-8)
	cases := []struct {
		rule Rule
		w    []float64
		want [3]float64 // log-variances
	}{
		// EAA, equal weights: s1 = v/2 is clamped up to v, then + v/2: 1.5 v (Eq. 4 gives v).
		{EAA, []float64{0.5, 0.5}, [3]float64{math.Log(1.5 * v), math.Log(0.5*math.Exp(-6) + 0.5*math.Exp(-7)), math.Log(v + 0.5*math.Exp(-7.5))}},
		// GAA, equal weights: s1 = v/4 -> v, then + v/4: 1.25 v (Eq. 5 gives 0.5 v).
		{GAA, []float64{0.5, 0.5}, [3]float64{math.Log(1.25 * v), math.Log(0.25*math.Exp(-6) + 0.25*math.Exp(-7)), math.Log(v + 0.25*math.Exp(-7.5))}},
		// GAA, weights 0.9 / 0.1: s1 = 0.81 v -> v, + 0.01 v = 1.01 v. Element 1: s1 = 0.81 e^-6 is above
		// the floor (log = -6.21), so no clamp: 0.81 e^-6 + 0.01 e^-7.
		{GAA, []float64{0.9, 0.1}, [3]float64{math.Log(1.01 * v), math.Log(0.81*math.Exp(-6) + 0.01*math.Exp(-7)), math.Log(v + 0.01*math.Exp(-7.5))}},
		// AALV averages the raw values, unclamped.
		{AALV, []float64{0.5, 0.5}, [3]float64{-9, -6.5, -13.75}},
		// CF reads clamped values: w_max / sum(w / s2).
		{CF, []float64{0.5, 0.5}, [3]float64{math.Log(0.5 * v), math.Log(0.5 / (0.5/math.Exp(-6) + 0.5/math.Exp(-7))), math.Log(0.5 / (0.5/v + 0.5/math.Exp(-7.5)))}},
	}
	for _, c := range cases {
		got, err := Posteriors(c.rule, []*posterior.Posterior{c1, c2}, c.w, Options{BFLP: true})
		if err != nil {
			t.Fatalf("%s %v: %v", c.rule, c.w, err)
		}
		lv := flat(t, got.Params[1].LogVar)
		for i, want := range c.want {
			if math.Abs(float64(lv[i])-want) > 2e-5 {
				t.Errorf("%s %v: element %d: log-variance %v, want %v", c.rule, c.w, i, lv[i], want)
			}
		}
		mu := flat(t, got.Params[1].Mean)
		if wantMu := c.w[0]*1 + c.w[1]*3; c.rule != CF && math.Abs(float64(mu[0])-wantMu) > 1e-6 {
			t.Errorf("%s: mean %v, want %v", c.rule, mu[0], wantMu)
		}
		if b := flat(t, got.Params[0].Mean)[0]; math.Abs(float64(b)-(2*c.w[0]+4*c.w[1])) > 1e-6 {
			t.Errorf("%s: deterministic bias %v, want the weighted mean %v", c.rule, b, 2*c.w[0]+4*c.w[1])
		}
	}
	// The factors near the floor: BFL-P's variance over the variance the forward pass would use after
	// Eqs. 4-5 (clamped to the floor, e^-8): 1.5 (EAA) and 1.25 (GAA) for two equal clients.
	paper, err := Posteriors(GAA, []*posterior.Posterior{c1, c2}, []float64{0.5, 0.5}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lv := flat(t, paper.Params[1].LogVar)[0]; math.Abs(float64(lv)-math.Log(0.5*math.Exp(-9))) > 2e-5 {
		t.Errorf("paper GAA: %v, want log(0.5 e^-9)", lv)
	}
}

// TestBFLPPPA checks PPA's floor(w_k N) counts and its unbiased variance: with counts that both schemes
// agree on, BFL-P's log-variance is the default's plus log(N/(N-1)), sample for sample.
func TestBFLPPPA(t *testing.T) {
	counts, err := floorCounts([]float64{1.0 / 3, 2.0 / 3}, 10)
	if err != nil || counts[0] != 3 || counts[1] != 6 {
		t.Fatalf("floorCounts(1/3, 2/3; 10) = %v, %v; want [3 6]", counts, err)
	}
	if _, err := floorCounts([]float64{0.3, 0.7}, 2); err == nil || !strings.Contains(err.Error(), "need at least 2") {
		t.Errorf("floorCounts(0.3, 0.7; 2) draws 0 + 1 samples: want an error, got %v", err)
	}
	c1 := oneParam([]float32{1, -2}, []float32{-2, 0}, 0)
	c2 := oneParam([]float32{3, 5}, []float32{-1, 1}, 0)
	opt := Options{PopulationSize: 10, Seed: 7}
	def, err := Posteriors(PPA, []*posterior.Posterior{c1, c2}, []float64{0.5, 0.5}, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.BFLP = true
	bflp, err := Posteriors(PPA, []*posterior.Posterior{c1, c2}, []float64{0.5, 0.5}, opt)
	if err != nil {
		t.Fatal(err)
	}
	d, b := flat(t, def.Params[1].LogVar), flat(t, bflp.Params[1].LogVar)
	for i := range d {
		if got, want := float64(b[i]-d[i]), math.Log(10.0/9); math.Abs(got-want) > 1e-5 {
			t.Errorf("element %d: BFL-P minus default log-variance %v, want log(10/9) = %v", i, got, want)
		}
	}
	// Weights 0.25 / 0.75 with N = 6: floor gives 1 + 4 = 5 samples; the default 2 + 4 = 6.
	if _, err := Posteriors(PPA, []*posterior.Posterior{c1, c2}, []float64{0.25, 0.75}, Options{PopulationSize: 6, BFLP: true}); err != nil {
		t.Errorf("BFL-P PPA with a short population: %v", err)
	}
}

// TestMaxDiscrepancyReadings checks both readings of Fischer et al. (2024), Eq. 20 on three unit-variance
// clients at 0, 1 and 3: KL(N(a, 1) || N(b, 1)) = (a - b)^2 / 2, so the rows of the KL matrix are
// (0, 0.5, 4.5), (0.5, 0, 2), (4.5, 2, 0). 1 / max: (1/4.5, 1/2, 1/4.5), normalised (4, 9, 4) / 17;
// max 1 / KL = 1 / min_{j != k}: (2, 2, 0.5), normalised (4, 4, 1) / 9.
func TestMaxDiscrepancyReadings(t *testing.T) {
	var clients []*posterior.Posterior
	for _, m := range []float32{0, 1, 3} {
		clients = append(clients, oneParam([]float32{m}, []float32{0}, 0))
	}
	for _, c := range []struct {
		reading MaxDiscrepancyReading
		want    []float64
	}{
		{InverseOfMax, []float64{4.0 / 17, 9.0 / 17, 4.0 / 17}},
		{MaxOfInverse, []float64{4.0 / 9, 4.0 / 9, 1.0 / 9}},
	} {
		w, err := MaxDiscrepancyWeights(clients, Options{MaxDiscrepancy: c.reading})
		if err != nil {
			t.Fatal(err)
		}
		for k := range w {
			if math.Abs(w[k]-c.want[k]) > 1e-6 {
				t.Errorf("reading %d: weights %v, want %v", c.reading, w, c.want)
				break
			}
		}
	}
}

// TestBABFL checks BA-BFL's aggregation by hand: GAA = sum w^2 s2 / sum w^2 on raw (unclamped)
// variances, EAA and AALV as in the paper, and that BFLP and BABFL cannot both be set.
func TestBABFL(t *testing.T) {
	c1 := oneParam([]float32{1, 0}, []float32{-9, -6}, 2)
	c2 := oneParam([]float32{3, 0}, []float32{-9, -7}, 4)
	w := []float64{0.9, 0.1}
	cases := []struct {
		rule Rule
		want [2]float64
	}{
		// Below the floor nothing is clamped: both at -9 give -9.
		{GAA, [2]float64{-9, math.Log((0.81*math.Exp(-6) + 0.01*math.Exp(-7)) / 0.82)}},
		{EAA, [2]float64{-9, math.Log(0.9*math.Exp(-6) + 0.1*math.Exp(-7))}},
		{AALV, [2]float64{-9, -6.1}},
	}
	for _, c := range cases {
		got, err := Posteriors(c.rule, []*posterior.Posterior{c1, c2}, w, Options{BABFL: true})
		if err != nil {
			t.Fatal(err)
		}
		lv := flat(t, got.Params[1].LogVar)
		for i, want := range c.want {
			if math.Abs(float64(lv[i])-want) > 2e-5 {
				t.Errorf("%s: element %d: %v, want %v", c.rule, i, lv[i], want)
			}
		}
	}
	if _, err := Posteriors(GAA, []*posterior.Posterior{c1, c2}, w, Options{BABFL: true, BFLP: true}); err == nil ||
		!strings.Contains(err.Error(), "both set") {
		t.Errorf("BFLP and BABFL together: %v", err)
	}
}
