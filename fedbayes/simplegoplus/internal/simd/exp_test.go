package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"fedbayes.dev/fedbayes/internal/fastmath"
)

// TestExp32MatchesFastmath compares Exp32 with fastmath.Exp32 bit for bit on every pair of special
// values, the bounds (88.8, -104 and the floats around them), NaN payloads (signalling included),
// and a million values over the whole float32 range, in place and not.
func TestExp32MatchesFastmath(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	r := rand.New(rand.NewPCG(21, 22))
	x := append([]float32(nil), specials...)
	for _, b := range []float32{88.8, -104, 88.72, -87.3, 0, 1e-8} {
		x = append(x, b, math.Nextafter32(b, 200), math.Nextafter32(b, -200))
	}
	x = append(x, math.Float32frombits(0x7f800001), math.Float32frombits(0xff812345)) // signalling NaN
	for len(x) < 1<<20 {
		switch r.IntN(3) {
		case 0:
			x = append(x, float32(r.Float64()*200-110)) // the range where results are finite
		case 1:
			x = append(x, math.Float32frombits(r.Uint32())) // any bits
		default:
			x = append(x, float32(r.NormFloat64()))
		}
	}
	y := make([]float32, len(x))
	done := Exp32(x, y)
	if done != len(x)&^7 {
		t.Fatalf("did %d of %d", done, len(x))
	}
	inPlace := append([]float32(nil), x...)
	Exp32(inPlace, inPlace)
	for i := range done {
		want := math.Float32bits(fastmath.Exp32(x[i]))
		if got := math.Float32bits(y[i]); got != want {
			t.Fatalf("Exp32(%v = %#08x) = %#08x, fastmath %#08x", x[i], math.Float32bits(x[i]), got, want)
		}
		if got := math.Float32bits(inPlace[i]); got != want {
			t.Fatalf("in place: Exp32(%v) = %#08x, fastmath %#08x", x[i], got, want)
		}
	}
	// Short lengths: the kernel does the whole vectors only and writes nothing past them.
	for n := range 41 {
		out := guarded(n)
		done := Exp32(x[:n], out[:n])
		if done != n&^7 {
			t.Fatalf("n = %d: did %d", n, done)
		}
		for i := range done {
			if math.Float32bits(out[i]) != math.Float32bits(fastmath.Exp32(x[i])) {
				t.Fatalf("n = %d: element %d differs from fastmath", n, i)
			}
		}
		untouched(t, fmt.Sprintf("Exp32, n = %d", n), out, done)
	}
}
