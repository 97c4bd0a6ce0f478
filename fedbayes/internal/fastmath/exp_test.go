package fastmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// relErr is |got - want| / |want| (0 when both are equal, including both infinite).
func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Abs(want)
}

// TestExp checks Exp and ExpTo against math.Exp: random arguments over the whole table range and
// near its ends, and the special values.
func TestExp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for range 200_000 {
		xs = append(xs, -720+1440*rng.Float64())
	}
	for range 50_000 {
		xs = append(xs, 20*rng.Float64()-10, -rng.Float64()*1e-3, math.Ldexp(rng.Float64(), -40))
	}
	xs = append(xs, 0, -0.0, 1, -1, ExpSafe, -ExpSafe, math.Ln2/512, -math.Ln2/512, 88.8, -104, -700.5, 708.9)
	got := make([]float64, len(xs))
	outside := ExpTo(got, xs)
	wantOutside := 0
	worst, at := 0.0, 0.0
	for i, x := range xs {
		if math.Abs(x) > ExpSafe {
			wantOutside++
		}
		want := math.Exp(x)
		if e := relErr(Exp(x), want); e > worst {
			worst, at = e, x
		}
		if got[i] != Exp(x) {
			t.Fatalf("ExpTo(%v) = %v, Exp = %v", x, got[i], Exp(x))
		}
	}
	if outside != wantOutside {
		t.Errorf("ExpTo counted %d arguments outside ±ExpSafe, want %d", outside, wantOutside)
	}
	if worst > 1e-11 {
		t.Errorf("largest relative error %g at x = %v, want <= 1e-11", worst, at)
	}
	t.Logf("largest relative error against math.Exp: %.3g (at %v)", worst, at)

	special := []struct{ x, want float64 }{
		{math.Inf(1), math.Inf(1)},
		{math.Inf(-1), 0},
		{710, math.Inf(1)},
		{-746, 0},
		{-720, math.Exp(-720)}, // subnormal
		{-708.5, math.Exp(-708.5)},
		{709.5, math.Exp(709.5)},
	}
	for _, s := range special {
		if got := Exp(s.x); got != s.want {
			t.Errorf("Exp(%v) = %v, want %v", s.x, got, s.want)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) {
		t.Errorf("Exp(NaN) is not NaN")
	}
	in := []float64{math.NaN(), 1, math.Inf(-1)}
	if n := ExpTo(in, in); n != 2 || !math.IsNaN(in[0]) || in[1] != Exp(1) || in[2] != 0 { // in place
		t.Errorf("ExpTo in place: %v, %d outside", in, n)
	}
}

// TestExp32 checks Exp32, the pure-Go backend's Exp, against float32(math.Exp) (correctly rounded
// but for double rounding) over the float32 range where e^x is neither 0 nor +Inf, at its edges, and
// on the special values: at most one float32 unit apart, and equal on 99.99% of values.
func TestExp32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	differ, n := 0, 1_000_000
	for i := range n {
		x := float32(-104 + 193*rng.Float64())
		switch {
		case i < 8: // the edges of the range where e^x is a non-zero finite float32
			x = []float32{0, -0, 88.72, 88.73, -87.33, -103.97, -104.1, 89}[i]
		case i%4 == 0:
			x = float32(rng.NormFloat64())
		}
		got, want := Exp32(x), float32(math.Exp(float64(x)))
		if got != want {
			differ++
			// A difference is allowed only where float64 rounding decides between two float32
			// neighbours: within one float32 ulp.
			if math.Abs(float64(got)-float64(want)) > float64(math.Nextafter32(want, float32(math.Inf(1)))-want) {
				t.Fatalf("Exp32(%g) = %g, want %g", x, got, want)
			}
		}
	}
	if differ > n/10000 {
		t.Errorf("Exp32 differs from float32(math.Exp) on %d of %d values", differ, n)
	}
	inf := float32(math.Inf(1))
	if !math.IsNaN(float64(Exp32(float32(math.NaN())))) || Exp32(inf) != inf || Exp32(-inf) != 0 || Exp32(89) != inf || Exp32(-105) != 0 {
		t.Errorf("Exp32 of NaN/±Inf/overflow/underflow wrong")
	}
}

// BenchmarkExpTo measures the slice form on arguments in [-30, 0], the shifted log-variances of the
// aggregation rules.
func BenchmarkExpTo(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -30 * rng.Float64()
	}
	dst := make([]float64, len(x))
	b.SetBytes(int64(len(x)) * 8)
	for b.Loop() {
		ExpTo(dst, x)
	}
}

// BenchmarkMathExp is the same loop with math.Exp, for comparison.
func BenchmarkMathExp(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = -30 * rng.Float64()
	}
	dst := make([]float64, len(x))
	b.SetBytes(int64(len(x)) * 8)
	for b.Loop() {
		for i, v := range x {
			dst[i] = math.Exp(v)
		}
	}
}
