package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSumRowsAndAddTo compares SumRows and AddTo with the scalar loops on widths around the vector
// (LeNet's bias gradients sum rows of 6 and 16), with guards after dst and x that must not change.
func TestSumRowsAndAddTo(t *testing.T) {
	if !Available {
		t.Skip("no AVX2 kernels on this machine")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, width := range []int{1, 3, 6, 7, 8, 9, 16, 17, 30, 100} {
		for _, extra := range []int{0, 5} {
			stride, rows := width+extra, 37
			x := finiteData(r, rows*stride)
			init := finiteData(r, width+8)
			want := append([]float32(nil), init...)
			for row := range rows {
				for c := range width {
					want[c] += x[row*stride+c]
				}
			}
			got := append([]float32(nil), init...)
			xs := x[:(rows-1)*stride+width] // nothing past the last row's width
			if !SumRows(xs, rows, stride, got[:width]) {
				t.Fatalf("width %d: SumRows refused", width)
			}
			for c := range got {
				if math.Float32bits(got[c]) != math.Float32bits(want[c]) {
					t.Fatalf("width %d stride %d: column %d = %v, want %v", width, stride, c, got[c], want[c])
				}
			}
			// AddTo, with a guard after dst.
			src := poolData(r, width)
			got = append(got[:0], init...)
			want = append(want[:0], init...)
			for i := range width {
				want[i] += src[i]
			}
			AddTo(got[:width], src)
			for c := range got {
				if math.Float32bits(got[c]) != math.Float32bits(want[c]) && !(got[c] != got[c] && want[c] != want[c]) {
					t.Fatalf("AddTo width %d: element %d = %v, want %v", width, c, got[c], want[c])
				}
			}
		}
	}
}

// finiteData returns n values of varied magnitudes (so that the order of the additions shows in
// the bits), with signed zeros but no NaN.
func finiteData(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(10) {
		case 0:
			x[i] = float32(math.Copysign(0, -1))
		default:
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
		}
	}
	return x
}
