package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWhere32 compares Where32 with the scalar selection in every operand form (slices or single
// values) at lengths around the block of 32, and that nothing past the elements done is written.
func TestWhere32(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 31, 32, 33, 96, 1000} {
		c := make([]bool, n)
		tv, fv := make([]uint32, n), make([]uint32, n)
		for i := range n {
			c[i] = r.IntN(2) == 1
			tv[i], fv[i] = r.Uint32(), r.Uint32()
		}
		for _, form := range []struct{ tOne, fOne bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
			ts, fs := tv, fv
			if form.tOne {
				ts = []uint32{0xdeadbeef}
			}
			if form.fOne {
				fs = []uint32{0x80000000}
			}
			at := func(s []uint32, i int) uint32 {
				if len(s) == 1 {
					return s[0]
				}
				return s[i]
			}
			y := make([]uint32, n+32)
			for i := range y {
				y[i] = math.Float32bits(sentinel)
			}
			done := Where32(c, ts, fs, y[:n])
			if n > 0 && done != n&^31 {
				t.Fatalf("n=%d %+v: did %d", n, form, done)
			}
			for i := done; i < len(y); i++ {
				if y[i] != math.Float32bits(sentinel) {
					t.Fatalf("n=%d %+v: element %d (of %d, %d done) was written: %#x", n, form, i, len(y), done, y[i])
				}
			}
			for i := range done {
				want := at(fs, i)
				if c[i] {
					want = at(ts, i)
				}
				if y[i] != want {
					t.Fatalf("n=%d %+v: element %d = %#x, want %#x", n, form, i, y[i], want)
				}
			}
		}
	}
}
