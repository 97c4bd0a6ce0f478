package aggregate

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestScalarExtremes covers issue 21's overflow cases: a representable answer is computed exactly
// (hand-computed values), an unrepresentable one is an error, never a non-finite result.
func TestScalarExtremes(t *testing.T) {
	big2 := []Gaussian{{1e308, 1}, {1e308, 1}}
	tests := []struct {
		name    string
		rule    Rule
		clients []Gaussian
		weights []float64
		opt     Options
		mean    float64
		vari    float64
		relTol  float64
		wantErr string
	}{
		{"weights 1e308 EAA", EAA, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 1, 1e-15, ""},
		{"weights 1e308 GAA", GAA, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 0.5, 1e-15, ""},
		{"weights 1e308 LP", LP, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 1.25, 1e-15, ""},
		{"weights 1e308 CF", CF, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 0.5, 1e-15, ""},
		{"weights 1e308 RKLB", RKLB, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 1, 1e-15, ""},
		{"weights 1e308 WB", WB, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 1, 1e-15, ""},
		{"weights 1e308 FedAvg", FedAvg, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{Normalize: true}, 1.5, 0, 1e-15, ""},
		{"conflation 1e308 twice", Conflation, big2, nil, Options{}, 1e308, 0.5, 1e-15, ""},
		{"CF 1e308 twice", CF, big2, nil, Options{}, 1e308, 0.5, 1e-15, ""},
		{"RKLB 1e308 twice", RKLB, big2, nil, Options{}, 1e308, 1, 1e-15, ""},
		{"DWC 1e308", DWC, big2, nil, Options{Previous: &Gaussian{1e308, 4}}, 1e308, 1.0 / 1.75, 1e-15, ""},
		{"PPA 1e308 twice", PPA, big2, nil, Options{Seed: 1}, 1e308, 1, 0.2, ""},
		{"conflation 1e308 and -1e308", Conflation, []Gaussian{{1e308, 1}, {-1e308, 1}}, nil, Options{}, 0, 0.5, 1e-15, ""},
		{"AALV subnormal variance", AALV, []Gaussian{{1, 1e-320}, {2, 1}}, nil, Options{}, 1.5, 1e-160, 1e-3, ""},
		{"AALV smallest subnormal", AALV, []Gaussian{{1, 5e-324}, {2, 5e-324}}, nil, Options{}, 1.5, 5e-324, 0, ""},
		{"PPA 1e308 and -1e308", PPA, []Gaussian{{1e308, 1}, {-1e308, 1}}, nil, Options{Seed: 1}, 0, 0, 0, "outside the range of float64"},
		{"LP 1e308 and -1e308", LP, []Gaussian{{1e308, 1}, {-1e308, 1}}, nil, Options{}, 0, 0, 0, "outside the range of float64"},
		{"LP large but representable", LP, []Gaussian{{1e150, 1}, {-1e150, 1}}, nil, Options{}, 0, 1e300, 1e-12, ""},
		{"weights overflow unnormalised", EAA, []Gaussian{{1, 1}, {2, 1}}, []float64{1e308, 1e308}, Options{}, 0, 0, 0, "sum to +Inf, not 1"},
		{"population too large", PPA, big2, nil, Options{PopulationSize: math.MaxInt}, 0, 0, 0, "too large; at most 1000000000"},
		{"negative variance", EAA, []Gaussian{{1, -1}}, nil, Options{}, 0, 0, 0, "variance -1 is not positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Scalar(tc.rule, tc.clients, tc.weights, tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, %v; want an error with %q", g, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !relClose(g.Mean, tc.mean, tc.relTol) || !relClose(g.Var, tc.vari, tc.relTol) {
				t.Errorf("got N(%v, %v), want N(%v, %v)", g.Mean, g.Var, tc.mean, tc.vari)
			}
		})
	}
}

// relClose compares with a relative tolerance (and an absolute one of tol for values near 0).
func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-300) || (want == 0 && math.Abs(got) <= tol)
}

func TestWeightSumError(t *testing.T) {
	_, err := Scalar(EAA, []Gaussian{{0, 1}, {1, 1}}, []float64{1, 3}, Options{})
	var we *WeightSumError
	if !errors.As(err, &we) || we.Sum != 4 {
		t.Fatalf("error %v, want a *WeightSumError with sum 4", err)
	}
}

func TestPopulationCountsLarge(t *testing.T) {
	for _, tc := range []struct {
		w []float64
		N int
	}{{[]float64{0.5, 0.5}, MaxPopulationSize}, {[]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, MaxPopulationSize}, {[]float64{0.1, 0.2, 0.7}, 7}} {
		start := time.Now()
		counts := populationCounts(tc.w, tc.N)
		total := 0
		for _, c := range counts {
			total += c
		}
		if total != tc.N || time.Since(start) > time.Second {
			t.Errorf("populationCounts(%v, %d) = %v (sum %d)", tc.w, tc.N, counts, total)
		}
	}
}
