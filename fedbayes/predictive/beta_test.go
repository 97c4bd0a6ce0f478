package predictive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sampleLabel draws a class from a probability row.
func sampleLabel(rng *rand.Rand, row []float32) int32 {
	u := rng.Float64()
	var s float64
	for c, p := range row {
		s += float64(p)
		if u < s {
			return int32(c)
		}
	}
	return int32(len(row) - 1)
}

// sharpRows returns n random rows of c classes, sharpened so that they look like a classifier's.
func sharpRows(rng *rand.Rand, n, c int) []float32 {
	out := make([]float32, n*c)
	for i := 0; i < n; i++ {
		row := make([]float64, c)
		var s float64
		for j := range row {
			row[j] = math.Exp(3 * rng.NormFloat64())
			s += row[j]
		}
		for j := range row {
			out[i*c+j] = float32(row[j] / s)
		}
	}
	return out
}

// TestFitBetaClassConstructed builds the two idealised partitions of Hasan (2023), Sec. 4.1.2: with
// homogeneous clients (all equal to the truth) the mixture is exact and the product overconfident,
// so the fitted beta is near 0; with heterogeneous clients (one knows the truth, the others output
// the uniform prior) the product is exact and the mixture too soft, so beta is near 1. In both, the
// fit must be the minimum of a dense scan of the server NLL.
func TestFitBetaClassConstructed(t *testing.T) {
	const K, N, C = 5, 4000, 4
	rng := rand.New(rand.NewPCG(7, 8))
	truth := sharpRows(rng, N, C)
	labels := make([]int32, N)
	for n := range labels {
		labels[n] = sampleLabel(rng, truth[n*C:(n+1)*C])
	}
	uniform := make([]float32, N*C)
	for i := range uniform {
		uniform[i] = 1.0 / C
	}
	homo := make([][]float32, K)
	hetero := make([][]float32, K)
	for k := 0; k < K; k++ {
		homo[k] = truth
		hetero[k] = make([]float32, N*C)
		for n := 0; n < N; n++ {
			src := uniform
			if n%K == k {
				src = truth
			}
			copy(hetero[k][n*C:(n+1)*C], src[n*C:(n+1)*C])
		}
	}
	tests := []struct {
		name    string
		clients [][]float32
		check   func(beta float64) bool
	}{
		{"homogeneous", homo, func(b float64) bool { return b < 0.1 }},
		{"heterogeneous", hetero, func(b float64) bool { return b > 0.9 }},
	}
	for _, tc := range tests {
		a, err := NewClassAggregate(tc.clients, nil, nil, C)
		if err != nil {
			t.Fatal(err)
		}
		fit, err := FitBetaClass(a, labels, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.check(fit.Beta) {
			t.Errorf("%s: fitted beta %v", tc.name, fit.Beta)
		}
		checkMinimum(t, tc.name, fit, 0, 1, func(b float64) float64 { v, _ := a.NLL(b, labels); return v })
		if len(fit.Curve) != 21 || fit.Curve[0].Beta != 0 || fit.Curve[20].Beta != 1 {
			t.Errorf("%s: curve %v", tc.name, fit.Curve)
		}
	}
}

// TestFitBetaClassInterior: a random ensemble and a range beyond [0, 1]; the fit is the dense-scan
// minimum.
func TestFitBetaClassInterior(t *testing.T) {
	const K, N, C = 3, 500, 6
	rng := rand.New(rand.NewPCG(3, 4))
	truth := sharpRows(rng, N, C)
	labels := make([]int32, N)
	for n := range labels {
		labels[n] = sampleLabel(rng, truth[n*C:(n+1)*C])
	}
	clients := make([][]float32, K)
	for k := range clients {
		noise := sharpRows(rng, N, C)
		clients[k] = make([]float32, N*C)
		for i := range clients[k] {
			clients[k][i] = 0.6*truth[i] + 0.4*noise[i]
		}
	}
	a, err := NewClassAggregate(clients, []float64{1, 2, 3}, nil, C)
	if err != nil {
		t.Fatal(err)
	}
	fit, err := FitBetaClass(a, labels, FitOptions{Min: -0.5, Max: 1.5, GridPoints: 9})
	if err != nil {
		t.Fatal(err)
	}
	checkMinimum(t, "interior", fit, -0.5, 1.5, func(b float64) float64 { v, _ := a.NLL(b, labels); return v })
	if fit.Beta <= -0.5 || fit.Beta >= 1.5 {
		t.Errorf("expected an interior minimum, got %v", fit.Beta)
	}
}

func TestFitBetaGaussConstructed(t *testing.T) {
	const K, N = 5, 4000
	const noise, priorVar = 0.25, 100.0
	rng := rand.New(rand.NewPCG(9, 10))
	f := make([]float32, N)
	y := make([]float32, N)
	for n := range f {
		f[n] = float32(3 * rng.NormFloat64())
		y[n] = f[n] + float32(math.Sqrt(noise)*rng.NormFloat64())
	}
	homoM, homoV := make([][]float32, K), make([][]float32, K)
	hetM, hetV := make([][]float32, K), make([][]float32, K)
	for k := 0; k < K; k++ {
		homoM[k], homoV[k] = f, constant(N, noise)
		hetM[k], hetV[k] = make([]float32, N), make([]float32, N)
		for n := 0; n < N; n++ {
			if n%K == k {
				hetM[k][n], hetV[k][n] = f[n], noise
			} else {
				hetM[k][n], hetV[k][n] = 0, priorVar
			}
		}
	}
	tests := []struct {
		name  string
		m, v  [][]float32
		check func(float64) bool
	}{
		{"homogeneous", homoM, homoV, func(b float64) bool { return b < 0.05 }},
		{"heterogeneous", hetM, hetV, func(b float64) bool { return b > 0.95 }},
	}
	for _, tc := range tests {
		a, err := NewGaussAggregate(tc.m, tc.v, nil, []float32{0}, []float32{priorVar})
		if err != nil {
			t.Fatal(err)
		}
		fit, err := FitBetaGauss(a, y, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.check(fit.Beta) {
			t.Errorf("%s: fitted beta %v", tc.name, fit.Beta)
		}
		checkMinimum(t, tc.name, fit, 0, 1, func(b float64) float64 { v, _ := a.NLL(b, y); return v })
	}
}

func TestFitBetaErrors(t *testing.T) {
	a, err := NewClassAggregate([][]float32{{0.5, 0.5}}, nil, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		opt    FitOptions
		labels []int32
		want   string
	}{
		{FitOptions{Min: 1, Max: 0}, []int32{0}, "range"},
		{FitOptions{GridPoints: 2}, []int32{0}, "GridPoints"},
		{FitOptions{Tol: -1}, []int32{0}, "Tol"},
		{FitOptions{}, []int32{0, 1}, "2 labels for 1"},
	}
	for _, tc := range tests {
		if _, err := FitBetaClass(a, tc.labels, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opt, err, tc.want)
		}
	}
}

// checkMinimum compares a fit with a dense scan of f on [lo, hi].
func checkMinimum(t *testing.T, name string, fit BetaFit, lo, hi float64, f func(float64) float64) {
	t.Helper()
	const steps = 4000
	best, arg := math.Inf(1), 0.0
	for i := 0; i <= steps; i++ {
		b := lo + (hi-lo)*float64(i)/steps
		if v := f(b); v < best {
			best, arg = v, b
		}
	}
	if fit.NLL > best+1e-9 {
		t.Errorf("%s: fit NLL %v at beta %v above the scan's %v at %v", name, fit.NLL, fit.Beta, best, arg)
	}
	if math.Abs(fit.Beta-arg) > 2*(hi-lo)/steps {
		t.Errorf("%s: fit beta %v, scan argmin %v", name, fit.Beta, arg)
	}
	if v := f(fit.Beta); math.Abs(v-fit.NLL) > 1e-12 {
		t.Errorf("%s: reported NLL %v, recomputed %v", name, fit.NLL, v)
	}
}

func constant(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}
