package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scalar is the Go expression each kernel must match bit for bit.
func scalar(op Op, x, y float32) float32 {
	switch op {
	case Add:
		return x + y
	case Sub:
		return x - y
	case Mul:
		return x * y
	case Div:
		return x / y
	case Max:
		return max(x, y)
	default:
		return min(x, y)
	}
}

// specials are the values where the ops' corner cases live: signed zeros, infinities, NaN (two
// payloads, both signs), subnormals, the largest finite values and ties.
var specials = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, -2, 0.5,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.Float32frombits(0xffc00001), math.Float32frombits(0x7fa00000),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1e-40, 3e38, -3e38, math.MaxFloat32}

// values returns n values: every pair of specials appears at some index, the rest are random.
func values(r *rand.Rand, n int, phase int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch {
		case (i+phase)%3 == 0:
			v[i] = specials[(i*7+phase)%len(specials)]
		default:
			v[i] = float32(r.NormFloat64() * 10)
		}
	}
	return v
}

// sameBits fails unless got and want have the same bits, except that where both operands x[i]
// and y[i] are NaN any NaN is accepted: which payload survives then depends on the operand order the
// Go compiler picks for a commutative op, which differs between loops.
func sameBits(t *testing.T, what string, got, want, x, y []float32) {
	t.Helper()
	for i := range want {
		if x[i] != x[i] && y[i] != y[i] && got[i] != got[i] {
			continue
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: element %d = %v (%#08x), want %v (%#08x)", what, i, got[i],
				math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}

var opNames = map[Op]string{Add: "add", Sub: "sub", Mul: "mul", Div: "div", Max: "max", Min: "min"}

// TestKernelsMatchGo compares every kernel with Go's scalar expression on all pairs of special
// values and random ones, at lengths around the unrolled block (32) and the vector (8), in and out
// of place, and checks that nothing past the elements a kernel reports done is written (outputs
// preset to a sentinel, 32 more than the kernel is given).
func TestKernelsMatchGo(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for op, name := range opNames {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 64, 71, 1000, len(specials) * len(specials)} {
			a, b := values(r, n, 0), values(r, n, 1)
			if n == len(specials)*len(specials) { // every pair of specials
				for i := range n {
					a[i], b[i] = specials[i/len(specials)], specials[i%len(specials)]
				}
			}
			// Two slices.
			want := make([]float32, n)
			for i := range n {
				want[i] = scalar(op, a[i], b[i])
			}
			got := guarded(n)
			done := VV(op, a, b, got[:n])
			if done != n&^7 {
				t.Fatalf("%s vv n=%d: did %d elements, want %d", name, n, done, n&^7)
			}
			sameBits(t, name+" vv", got[:done], want[:done], a, b)
			untouched(t, name+" vv", got, done)
			inPlace := append(append([]float32(nil), a...), guarded(0)...)
			VV(op, inPlace[:n], b, inPlace[:n])
			sameBits(t, name+" vv in place", inPlace[:done], want[:done], a, b)
			sameBits(t, name+" vv in place, the rest", inPlace[done:n], a[done:], a[done:], a[done:])
			untouched(t, name+" vv in place", inPlace, n)
			// A slice and each special value on either side.
			for _, c := range specials {
				for i := range n {
					want[i] = scalar(op, a[i], c)
				}
				got = guarded(n)
				done = VS(op, a, c, got[:n])
				sameBits(t, name+" vs", got[:done], want[:done], a, repeat(c, n))
				untouched(t, name+" vs", got, done)
				for i := range n {
					want[i] = scalar(op, c, b[i])
				}
				got = guarded(n)
				done = SV(op, c, b, got[:n])
				sameBits(t, name+" sv", got[:done], want[:done], repeat(c, n), b)
				untouched(t, name+" sv", got, done)
				inPlace = append(append(inPlace[:0], b...), guarded(0)...)
				done = SV(op, c, inPlace[:n], inPlace[:n])
				sameBits(t, name+" sv in place", inPlace[:done], want[:done], repeat(c, n), b)
				untouched(t, name+" sv in place", inPlace, n)
				if done != n&^7 {
					t.Fatalf("%s sv n=%d: did %d elements, want %d", name, n, done, n&^7)
				}
			}
		}
	}
}

// sentinel fills the parts of an output a kernel must not write.
var sentinel = math.Float32frombits(0x7fbadbad)

// guarded returns n+32 values set to sentinel: a kernel is given the first n and must leave the 32
// after them (and whatever it reports not done) alone.
func guarded(n int) []float32 {
	return repeat(sentinel, n+32)
}

// untouched fails unless out[from:] still holds the sentinel.
func untouched(t *testing.T, what string, out []float32, from int) {
	t.Helper()
	for i := from; i < len(out); i++ {
		if math.Float32bits(out[i]) != math.Float32bits(sentinel) {
			t.Fatalf("%s: element %d (of %d, %d done) was written: %v", what, i, len(out), from, out[i])
		}
	}
}

func repeat(c float32, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = c
	}
	return v
}

// TestShortInputs checks that a kernel never reads past a shorter input.
func TestShortInputs(t *testing.T) {
	out := make([]float32, 16)
	if n := VV(Add, make([]float32, 8), make([]float32, 16), out); n != 0 {
		t.Fatalf("VV with a short input did %d elements", n)
	}
	if n := VS(Add, make([]float32, 8), 1, out); n != 0 {
		t.Fatalf("VS with a short input did %d elements", n)
	}
	if n := SV(Add, 1, make([]float32, 8), out); n != 0 {
		t.Fatalf("SV with a short input did %d elements", n)
	}
}

// BenchmarkVV compares the vector and the scalar loop on LeNet's largest activation.
func BenchmarkVV(b *testing.B) {
	n := 64 * 24 * 24 * 6
	x, y, out := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(n-i)
	}
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			VV(Add, x, y, out)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				out[i] = v + y[i]
			}
		}
	})
	b.Run("simd-max", func(b *testing.B) {
		for b.Loop() {
			VS(Max, x, 0, out)
		}
	})
	b.Run("go-max", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				out[i] = max(v, 0)
			}
		}
	})
}

// TestDisabled checks the values of FEDBAYES_SIMD that turn the kernels off (those of FEDBAYES_BLAS)
// and some that do not.
func TestDisabled(t *testing.T) {
	for v, want := range map[string]bool{"off": true, "OFF": true, "0": true, "false": true, "False": true,
		"no": true, "none": true, "": false, "on": false, "1": false, "avx2": false, "of": false} {
		if got := Disabled(v); got != want {
			t.Errorf("Disabled(%q) = %v, want %v", v, got, want)
		}
	}
}
