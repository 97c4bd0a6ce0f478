package stats

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Student's sleep data (Cushny and Peebles 1905, as in Student 1908 and R's datasets::sleep): extra
// hours of sleep of ten patients under two drugs.
var (
	sleep1 = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleep2 = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

// pT1 and pT2 are the two-sided p-values of t with 1 and 2 degrees of freedom in closed form (the
// Cauchy distribution, and P(|T| > t) = 1 - t / sqrt(2 + t²)), independent of gonum.
func pT1(t float64) float64 { return 1 - 2/math.Pi*math.Atan(math.Abs(t)) }
func pT2(t float64) float64 { return 1 - math.Abs(t)/math.Sqrt(2+t*t) }

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestTTestsPublishedAndHandComputed(t *testing.T) {
	tests := []struct {
		name              string
		run               func() (Result, error)
		test              Test
		diff, se, df, tt  float64
		p, tolP, tolOther float64
	}{
		// R: t.test(extra ~ group, data = sleep, paired = TRUE): t = -4.0621, df = 9, p-value = 0.002833,
		// mean difference -1.58.
		{"sleep paired (R)", func() (Result, error) { return PairedT(sleep1, sleep2) }, Paired, -1.58, 1.58 / 4.0621, 9, -4.0621, 0.002833, 5e-7, 5e-5},
		// R: t.test(extra ~ group, data = sleep): t = -1.8608, df = 17.776, p-value = 0.07939.
		{"sleep Welch (R)", func() (Result, error) { return WelchT(sleep1, sleep2) }, Welch, -1.58, 1.58 / 1.8608, 17.776, -1.8608, 0.07939, 5e-6, 5e-4},
		// d = {2, 4}: mean 3, sd sqrt(2), SE 1, t = 3 on 1 df.
		{"paired n=2", func() (Result, error) { return PairedT([]float64{3, 5}, []float64{1, 1}) }, Paired, 3, 1, 1, 3, pT1(3), 1e-12, 1e-12},
		// d = {1, 2, 3}: mean 2, sd 1, SE 1/sqrt(3), t = 2 sqrt(3) on 2 df.
		{"paired n=3", func() (Result, error) { return PairedT([]float64{1, 2, 4}, []float64{0, 0, 1}) }, Paired, 2, 1 / math.Sqrt(3), 2, 2 * math.Sqrt(3), pT2(2 * math.Sqrt(3)), 1e-12, 1e-12},
		// a: mean 2, s² 1; b constant 5: SE sqrt(1/3), df = (1/3)² / ((1/3)²/2) = 2, t = -3 sqrt(3).
		{"Welch, one sample constant", func() (Result, error) { return WelchT([]float64{1, 2, 3}, []float64{5, 5, 5}) }, Welch, -3, 1 / math.Sqrt(3), 2, -3 * math.Sqrt(3), pT2(3 * math.Sqrt(3)), 1e-12, 1e-12},
		// a: mean 2, s² 1, q 1/3; b: mean 5, s² 2, q 1: SE sqrt(4/3), df (4/3)² / ((1/3)²/2 + 1) = 32/19.
		{"Welch, unequal n", func() (Result, error) { return WelchT([]float64{1, 2, 3}, []float64{4, 6}) }, Welch, -3, math.Sqrt(4.0 / 3), 32.0 / 19, -3 / math.Sqrt(4.0/3), math.NaN(), 0, 1e-12},
	}
	for _, tc := range tests {
		r, err := tc.run()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Test != tc.test || !near(r.Diff, tc.diff, tc.tolOther) || !near(r.SE, tc.se, tc.tolOther) ||
			!near(r.DF, tc.df, tc.tolOther) || !near(r.T, tc.tt, tc.tolOther) {
			t.Errorf("%s: %v; want %s diff %v SE %v df %v t %v", tc.name, r, tc.test, tc.diff, tc.se, tc.df, tc.tt)
		}
		if !math.IsNaN(tc.p) && !near(r.P, tc.p, tc.tolP) {
			t.Errorf("%s: p %.7g, want %.7g", tc.name, r.P, tc.p)
		}
		if r.P < 0 || r.P > 1 {
			t.Errorf("%s: p %v outside [0, 1]", tc.name, r.P)
		}
	}
}

func TestNotTestable(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		run  func() (Result, error)
		want string // in the error; "" means a plain (not ErrNotTestable) error
	}{
		{"paired one pair", func() (Result, error) { return PairedT([]float64{1}, []float64{2}) }, "1 pair(s)"},
		{"paired no pairs", func() (Result, error) { return PairedT(nil, nil) }, "0 pair(s)"},
		{"paired NaN", func() (Result, error) { return PairedT([]float64{1, nan}, []float64{2, 3}) }, "a[1] is NaN"},
		{"paired Inf", func() (Result, error) { return PairedT([]float64{1, 2}, []float64{math.Inf(1), 3}) }, "b[0] is +Inf"},
		{"paired equal differences", func() (Result, error) { return PairedT([]float64{1, 2}, []float64{0.5, 1.5}) }, "every paired difference is 0.5"},
		{"paired identical", func() (Result, error) { return PairedT([]float64{1, 2, 3}, []float64{1, 2, 3}) }, "every paired difference is 0"},
		{"Welch one value", func() (Result, error) { return WelchT([]float64{1}, []float64{2, 3}) }, "1 and 2 values"},
		{"Welch NaN", func() (Result, error) { return WelchT([]float64{1, 2}, []float64{nan, 3}) }, "b[0] is NaN"},
		{"Welch constant", func() (Result, error) { return WelchT([]float64{1, 1}, []float64{2, 2}) }, "both samples are constant"},
		{"paired lengths", func() (Result, error) { return PairedT([]float64{1, 2}, []float64{1}) }, ""},
		{"seeds for values", func() (Result, error) {
			return Compare(Sample{Seeds: []int64{1}, Values: []float64{1, 2}}, Sample{Values: []float64{1, 2}})
		}, ""},
	}
	for _, tc := range tests {
		_, err := tc.run()
		switch {
		case err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.want == "" && errors.Is(err, ErrNotTestable):
			t.Errorf("%s: %v is a usage error, not ErrNotTestable", tc.name, err)
		case tc.want != "" && (!errors.Is(err, ErrNotTestable) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %q; want ErrNotTestable mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestComparePairsBySeed(t *testing.T) {
	a := Sample{Seeds: []int64{1, 2, 3}, Values: []float64{1, 2, 4}}
	// The same seeds in another order: matched by seed the differences are {1, 2, 3} (the n=3 case
	// above); matched by position they would be {0, 2, 4}.
	b := Sample{Seeds: []int64{3, 1, 2}, Values: []float64{1, 0, 0}}
	r, err := Compare(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Test != Paired || !near(r.T, 2*math.Sqrt(3), 1e-12) || !near(r.P, pT2(2*math.Sqrt(3)), 1e-12) || TestFor(a, b) != Paired {
		t.Errorf("paired by seed: %v", r)
	}
	for _, tc := range []struct {
		name string
		b    Sample
	}{
		{"other seeds", Sample{Seeds: []int64{4, 5, 6}, Values: []float64{1, 0, 0}}},
		{"some seeds shared", Sample{Seeds: []int64{1, 2, 4}, Values: []float64{1, 0, 0}}},
		{"a subset", Sample{Seeds: []int64{1, 2}, Values: []float64{1, 0}}},
		{"seeds unknown", Sample{Values: []float64{1, 0, 0}}},
		{"a seed twice", Sample{Seeds: []int64{1, 1, 2}, Values: []float64{1, 0, 0}}},
	} {
		r, err := Compare(a, tc.b)
		want, werr := WelchT(a.Values, tc.b.Values)
		if err != nil || werr != nil || r != want || TestFor(a, tc.b) != Welch {
			t.Errorf("%s: %v %v; want Welch's %v", tc.name, r, err, want)
		}
	}
}

func TestHolm(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		p, adj []float64
		reject []bool // at 0.05
	}{
		// Sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> running max 0.06.
		{"four", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}, []bool{true, false, false, true}},
		// A NaN is no member: m = 2.
		{"NaN left out", []float64{0.01, nan, 0.04}, []float64{0.02, nan, 0.04}, []bool{true, false, true}},
		{"capped at 1", []float64{0.6, 0.7}, []float64{1, 1}, []bool{false, false}},
		{"one", []float64{0.049}, []float64{0.049}, []bool{true}},
		// Ties keep their order and share the adjusted value: 0.02 x 3 = 0.06 then max(0.06, 0.04).
		{"ties", []float64{0.02, 0.02, 0.02}, []float64{0.06, 0.06, 0.06}, []bool{false, false, false}},
		{"empty", nil, []float64{}, []bool{}},
	}
	for _, tc := range tests {
		adj, rej := Holm(tc.p), HolmReject(tc.p, 0.05)
		if len(adj) != len(tc.adj) || len(rej) != len(tc.reject) {
			t.Fatalf("%s: lengths %d %d", tc.name, len(adj), len(rej))
		}
		for i := range adj {
			if !(math.IsNaN(adj[i]) && math.IsNaN(tc.adj[i])) && !near(adj[i], tc.adj[i], 1e-15) || rej[i] != tc.reject[i] {
				t.Errorf("%s: adjusted %v reject %v; want %v %v", tc.name, adj, rej, tc.adj, tc.reject)
				break
			}
		}
	}
}

func TestEquivalence(t *testing.T) {
	s1 := Sample{Seeds: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Values: sleep1}
	s2 := Sample{Seeds: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Values: sleep2}
	// Paired sleep data: the 90% interval is -1.58 ± t(0.95, 9) SE = -1.58 ± 1.833113 × 0.388959 =
	// [-2.2930, -0.8670] (t from a printed table): inside ±2.30, not inside ±2.28.
	for _, c := range []struct {
		margin float64
		shown  bool
	}{{2.30, true}, {2.28, false}, {1, false}, {5, true}} {
		e, err := Equivalence(s1, s2, c.margin)
		if err != nil || e.Test != Paired || e.Shown(0.05) != c.shown {
			t.Errorf("sleep, margin %v: %v %v; want shown %v", c.margin, e, err, c.shown)
		}
	}
	// d = {1, 2, 3} (paired, df 2), margin 3: PLower = P(T > 5 sqrt 3), PUpper = P(T > sqrt 3), one-sided
	// in closed form (1 - t/sqrt(2 + t²)) / 2.
	a := Sample{Seeds: []int64{1, 2, 3}, Values: []float64{1, 2, 4}}
	b := Sample{Seeds: []int64{1, 2, 3}, Values: []float64{0, 0, 1}}
	e, err := Equivalence(a, b, 3)
	lower, upper := pT2(5*math.Sqrt(3))/2, pT2(math.Sqrt(3))/2
	if err != nil || !near(e.PLower, lower, 1e-12) || !near(e.PUpper, upper, 1e-12) || e.P != e.PUpper || e.Shown(0.05) {
		t.Errorf("d = 1,2,3, margin 3: %v %v; want PLower %v PUpper %v, not shown", e, err, lower, upper)
	}
	// Nothing can differ: identical samples are not testable, so equivalence is not shown by default.
	if _, err := Equivalence(a, a, 1); !errors.Is(err, ErrNotTestable) {
		t.Errorf("identical samples: %v; want ErrNotTestable", err)
	}
	for _, m := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Equivalence(a, b, m); err == nil || errors.Is(err, ErrNotTestable) {
			t.Errorf("margin %v: %v; want a usage error", m, err)
		}
	}
}

func TestMeanCI(t *testing.T) {
	// {1, 2, 3}: mean 2, s 1, t(0.975, 2) = 4.302653 (printed tables): 2 ± 4.302653/sqrt(3).
	lo, hi, err := MeanCI([]float64{1, 2, 3}, 0.05)
	half := 4.302653 / math.Sqrt(3)
	if err != nil || !near(lo, 2-half, 1e-6) || !near(hi, 2+half, 1e-6) {
		t.Errorf("CI of 1, 2, 3: [%v, %v] %v; want 2 ± %v", lo, hi, err, half)
	}
	if lo, hi, err := MeanCI([]float64{0.5, 0.5}, 0.05); err != nil || lo != 0.5 || hi != 0.5 {
		t.Errorf("constant: [%v, %v] %v; want the point", lo, hi, err)
	}
	for _, x := range [][]float64{{1}, {1, math.NaN()}} {
		if _, _, err := MeanCI(x, 0.05); !errors.Is(err, ErrNotTestable) {
			t.Errorf("%v: %v; want ErrNotTestable", x, err)
		}
	}
}

// TestDegenerateSamplesByOneRule checks that samples constant to rounding are not tested, by the one
// rule RoundingSpread, rather than decided by float rounding: 0.3 − 0.2, 0.7 − 0.6 and 1.1 − 1.0
// differ in their last bits (a spread of about 6e-17), which without the rule gave t ≈ 1e15 and p = 0;
// equal samples shifted by 0.1 are the same for Welch's test; a real spread of 1e-9 is tested.
func TestDegenerateSamplesByOneRule(t *testing.T) {
	a, b := []float64{0.3, 0.7, 1.1}, []float64{0.2, 0.6, 1.0}
	if d := []float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; d[0] == d[2] {
		t.Fatalf("the case needs differences unequal in their last bits: %v", d)
	}
	if _, err := PairedT(a, b); !errors.Is(err, ErrNotTestable) {
		t.Errorf("paired differences equal to rounding: error %v, want ErrNotTestable", err)
	}
	c := []float64{0.1 + 0.2, 0.3, 0.3}
	if _, err := WelchT(c, []float64{0.7, 0.7, 0.7}); !errors.Is(err, ErrNotTestable) {
		t.Errorf("samples constant to rounding: error %v, want ErrNotTestable", err)
	}
	if r, err := PairedT([]float64{1, 2, 3}, []float64{1 - 1e-9, 2, 3 + 1e-9}); err != nil || r.SE <= 0 {
		t.Errorf("a spread of 1e-9 on values of 3: %+v, %v; want it tested", r, err)
	}
}
