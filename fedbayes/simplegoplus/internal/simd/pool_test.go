package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// poolRow sets up one row of windows of a [kh, W, C] input pooled by kh x kw windows: the taps in
// row-major window order, inStep and the number of windows.
func poolRow(kh, kw, width, c int) (taps []int, n, inStep int) {
	for r := range kh {
		for k := range kw {
			taps = append(taps, (r*width+k)*c)
		}
	}
	return taps, width / kw, kw * c
}

// poolData returns n values with many ties, signed zeros and NaN.
func poolData(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(8) {
		case 0:
			x[i] = float32(math.NaN())
		case 1:
			x[i] = float32(math.Copysign(0, -1))
		case 2:
			x[i] = 0
		case 3:
			x[i] = 1 // ties
		default:
			x[i] = float32(r.NormFloat64())
		}
	}
	return x
}

// TestPoolRowsMatchScalar compares MaxRow and ArgmaxRow with the scalar first-maximum loops on
// windows of several sizes and runs of channels (LeNet's 2x2 over 6 and 16 channels among them),
// data with ties, NaN and signed zeros, and checks that the windows they leave, and the 32 values
// after the output, are untouched but for the lanes past a run (outputs preset to a sentinel).
func TestPoolRowsMatchScalar(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ kh, kw, width, c int }{
		{2, 2, 24, 6}, {2, 2, 8, 16}, {2, 2, 10, 4}, {2, 2, 6, 8}, {3, 3, 9, 5}, {2, 2, 7, 12},
		{1, 2, 8, 9}, {2, 1, 5, 6}, {2, 2, 4, 3}, {2, 2, 2, 6},
	} {
		taps, n, inStep := poolRow(tc.kh, tc.kw, tc.width, tc.c)
		run := tc.c
		x := poolData(r, tc.kh*tc.width*tc.c)
		// Forward.
		want := make([]float32, n*run)
		for w := range n {
			for l := range run {
				d := x[taps[0]+w*inStep+l]
				for _, tp := range taps[1:] {
					if v := x[tp+w*inStep+l]; v > d {
						d = v
					}
				}
				want[w*run+l] = d
			}
		}
		got := guarded(n * run)
		done := MaxRow(x, taps, n, inStep, run, got[:n*run])
		if expect := n - 1; run%8 != 0 && run < 4 || n < 2 {
			expect = 0
			if done != expect {
				t.Fatalf("%+v: MaxRow did %d windows, want %d", tc, done, expect)
			}
		} else if done != expect {
			t.Fatalf("%+v: MaxRow did %d windows, want %d", tc, done, expect)
		}
		for i := range done * run {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: MaxRow output %d = %v, want %v", tc, i, got[i], want[i])
			}
		}
		// Past the windows done only the lanes of the last one's last block of 8 may be written.
		if done > 0 {
			untouched(t, fmt.Sprintf("%+v: MaxRow", tc), got, (done-1)*run+roundUp8(run))
		} else {
			untouched(t, fmt.Sprintf("%+v: MaxRow", tc), got, 0)
		}
		// Gradient.
		src := poolData(r, n*run)
		wantG := make([]float32, len(x))
		for w := range n {
			for l := range run {
				best, arg := x[taps[0]+w*inStep+l], taps[0]+w*inStep+l
				for _, tp := range taps[1:] {
					if v := x[tp+w*inStep+l]; v > best {
						best, arg = v, tp+w*inStep+l
					}
				}
				wantG[arg] = src[w*run+l]
			}
		}
		gotG := guarded(len(x))
		done = ArgmaxRow(x, src, taps, n, inStep, run, run, gotG[:len(x)])
		// Only the taps of the windows done, in blocks of 8 lanes, may be written.
		may := make([]bool, len(gotG))
		for w := range done {
			for _, tp := range taps {
				for l := range roundUp8(run) {
					may[tp+w*inStep+l] = true
				}
			}
		}
		for i, v := range gotG {
			if !may[i] && math.Float32bits(v) != math.Float32bits(sentinel) {
				t.Fatalf("%+v: ArgmaxRow wrote position %d (of %d, %d windows done), outside the windows done", tc, i, len(x), done)
			}
		}
		for w := range done {
			for _, tp := range taps {
				for l := range run {
					i := tp + w*inStep + l
					if math.Float32bits(gotG[i]) != math.Float32bits(wantG[i]) {
						t.Fatalf("%+v: ArgmaxRow window %d position %d = %v, want %v", tc, w, i, gotG[i], wantG[i])
					}
				}
			}
		}
	}
}

// BenchmarkPoolRow times LeNet's first pooling row by row (a [64, 24, 24, 6] input in 2x2 windows).
func BenchmarkPoolRow(b *testing.B) {
	taps, n, inStep := poolRow(2, 2, 24, 6)
	x := poolData(rand.New(rand.NewPCG(5, 6)), 2*24*6)
	out := make([]float32, n*6)
	g := make([]float32, len(x))
	b.Run("max", func(b *testing.B) {
		for b.Loop() {
			for range 64 * 12 {
				MaxRow(x, taps, n, inStep, 6, out)
			}
		}
	})
	b.Run("argmax", func(b *testing.B) {
		for b.Loop() {
			for range 64 * 12 {
				ArgmaxRow(x, out, taps, n, inStep, 6, 6, g)
			}
		}
	})
}
