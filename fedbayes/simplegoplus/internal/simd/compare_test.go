package simd

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestCompareMatchesGo compares the comparison kernels with Go's operators on all pairs of special
// values (NaN, ±0, infinities, subnormals) and random data with ties, at lengths around the block
// of 32, and that nothing past the elements done is written.
func TestCompareMatchesGo(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	ops := map[Cmp]func(x, y float32) bool{
		Less: func(x, y float32) bool { return x < y }, LessEq: func(x, y float32) bool { return x <= y },
		Greater: func(x, y float32) bool { return x > y }, GreaterEq: func(x, y float32) bool { return x >= y },
	}
	r := rand.New(rand.NewPCG(9, 10))
	for cmp, f := range ops {
		for _, n := range []int{0, 31, 32, 33, 64, 100, len(specials) * len(specials)} {
			a, b := poolData(r, n), poolData(r, n)
			if n == len(specials)*len(specials) {
				for i := range n {
					a[i], b[i] = specials[i/len(specials)], specials[i%len(specials)]
				}
			}
			y := guardedBools(n)
			done := CompareVV(cmp, a, b, y[:n])
			if done != n&^31 {
				t.Fatalf("cmp %d n=%d: did %d, want %d", cmp, n, done, n&^31)
			}
			untouchedBools(t, "vv", y, done)
			for i := range done {
				if b := *(*uint8)(unsafe.Pointer(&y[i])); b > 1 {
					t.Fatalf("cmp %d vv: element %d is the byte %d, not a Go bool", cmp, i, b)
				}
				if y[i] != f(a[i], b[i]) {
					t.Fatalf("cmp %d vv: element %d (%v, %v) = %v", cmp, i, a[i], b[i], y[i])
				}
			}
			for _, c := range specials {
				y = guardedBools(n)
				done = CompareVS(cmp, a, c, y[:n])
				untouchedBools(t, "vs", y, done)
				for i := range done {
					if y[i] != f(a[i], c) {
						t.Fatalf("cmp %d vs: element %d (%v, %v) = %v", cmp, i, a[i], c, y[i])
					}
				}
			}
		}
	}
}

// boolSentinel is a byte no Go bool holds, set where a comparison kernel must not write.
const boolSentinel = 0xa5

// guardedBools returns n+32 bools whose bytes are boolSentinel: a kernel is given the first n and
// must leave the rest of what it did not report done alone.
func guardedBools(n int) []bool {
	y := make([]bool, n+32)
	for i := range y {
		*(*uint8)(unsafe.Pointer(&y[i])) = boolSentinel
	}
	return y
}

// untouchedBools fails unless the bytes of y[from:] are still boolSentinel.
func untouchedBools(t *testing.T, what string, y []bool, from int) {
	t.Helper()
	for i := from; i < len(y); i++ {
		if b := *(*uint8)(unsafe.Pointer(&y[i])); b != boolSentinel {
			t.Fatalf("%s: byte %d (of %d, %d done) was written: %d", what, i, len(y), from, b)
		}
	}
}
