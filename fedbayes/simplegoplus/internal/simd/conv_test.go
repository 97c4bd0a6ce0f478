package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvRow compares ConvRow with a float64 convolution on LeNet's first layer (28x28 input, 5x5
// taps, 6 channels) and other sizes, row by row as the executor calls it, with guards after each
// row's outputs that must keep their values.
func TestConvRow(t *testing.T) {
	if !FMAAvailable {
		t.Skip("no AVX2+FMA kernels on this machine")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct{ h, w, kh, kw, cout int }{
		{28, 28, 5, 5, 6}, {9, 11, 3, 2, 8}, {6, 6, 1, 1, 4}, {7, 9, 3, 3, 5}, {5, 5, 5, 5, 6},
	} {
		oh, ow := tc.h-tc.kh+1, tc.w-tc.kw+1
		x := finiteData(r, tc.h*tc.w)
		k := finiteData(r, tc.kh*tc.kw*tc.cout) // [kh, kw, cout]
		var offs []int
		w := make([]float32, 0, 8*tc.kh*tc.kw)
		for i := range tc.kh {
			for j := range tc.kw {
				offs = append(offs, i*tc.w+j)
				lanes := make([]float32, 8)
				copy(lanes, k[(i*tc.kw+j)*tc.cout:(i*tc.kw+j+1)*tc.cout])
				for l := tc.cout; l < 8; l++ {
					lanes[l] = float32(math.NaN()) // padding lanes must not reach an output
				}
				w = append(w, lanes...)
			}
		}
		const guard = 12345
		out := make([]float32, oh*ow*tc.cout+8)
		for i := range out {
			out[i] = guard
		}
		for y := range oh {
			row := out[y*ow*tc.cout : (y+1)*ow*tc.cout]
			if !ConvRow(x[y*tc.w:], w, offs, ow, tc.cout, row) {
				t.Fatalf("%+v: ConvRow refused row %d", tc, y)
			}
			if next := out[(y+1)*ow*tc.cout]; next != guard {
				t.Fatalf("%+v: row %d wrote past its end (%v)", tc, y, next)
			}
		}
		for y := range oh {
			for xo := range ow {
				for c := range tc.cout {
					var want, mag float64
					for i := range tc.kh {
						for j := range tc.kw {
							v := float64(x[(y+i)*tc.w+xo+j]) * float64(k[(i*tc.kw+j)*tc.cout+c])
							want += v
							mag += math.Abs(v)
						}
					}
					got := float64(out[(y*ow+xo)*tc.cout+c])
					if math.Abs(got-want) > 1e-6*mag+1e-30 {
						t.Fatalf("%+v: output (%d, %d, %d) = %g, want %g", tc, y, xo, c, got, want)
					}
				}
			}
		}
	}
}

// TestKGradRows compares KGradRows with a float64 kernel gradient on LeNet's first layer (one
// example: 28x28 input, 24x24x6 output gradient, 25 taps in two groups of 13, the second padded with
// a repeated tap) and on a smaller layer with 4 channels.
func TestKGradRows(t *testing.T) {
	if !FMAAvailable {
		t.Skip("no AVX2+FMA kernels on this machine")
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, tc := range []struct{ h, w, kh, kw, cout int }{{28, 28, 5, 5, 6}, {8, 9, 3, 2, 4}, {6, 7, 2, 2, 8}} {
		oh, ow := tc.h-tc.kh+1, tc.w-tc.kw+1
		x := finiteData(r, tc.h*tc.w)
		dy := finiteData(r, oh*ow*tc.cout)
		var all []int
		for i := range tc.kh {
			for j := range tc.kw {
				all = append(all, i*tc.w+j)
			}
		}
		for g0 := 0; g0 < len(all); g0 += KGradTaps {
			offs := make([]int, KGradTaps)
			for k := range offs {
				offs[k] = all[min(g0+k, len(all)-1)]
			}
			acc := make([]float32, 8*KGradTaps)
			if !KGradRows(x, dy, offs, oh, ow, tc.w, tc.cout, acc) {
				t.Fatalf("%+v: KGradRows refused", tc)
			}
			for k := range min(KGradTaps, len(all)-g0) {
				for c := range tc.cout {
					var want, mag float64
					for y := range oh {
						for xo := range ow {
							v := float64(x[y*tc.w+xo+offs[k]]) * float64(dy[(y*ow+xo)*tc.cout+c])
							want += v
							mag += math.Abs(v)
						}
					}
					if got := float64(acc[k*8+c]); math.Abs(got-want) > 1e-5*mag {
						t.Fatalf("%+v: tap %d channel %d = %g, want %g", tc, g0+k, c, got, want)
					}
				}
			}
		}
	}
}

// TestConvRow16 compares ConvRow16 with a float64 convolution on LeNet's second layer (12x12x6
// input, 5x5 taps, 16 channels) and on rows of other lengths (groups of four pixels and the rest).
func TestConvRow16(t *testing.T) {
	if !FMAAvailable {
		t.Skip("no AVX2+FMA kernels on this machine")
	}
	r := rand.New(rand.NewPCG(17, 18))
	for _, tc := range []struct{ h, w, kh, kw, cin int }{{12, 12, 5, 5, 6}, {7, 9, 3, 3, 2}, {4, 6, 1, 1, 1}, {6, 11, 2, 3, 5}} {
		oh, ow := tc.h-tc.kh+1, tc.w-tc.kw+1
		x := finiteData(r, tc.h*tc.w*tc.cin)
		w := finiteData(r, tc.kh*tc.kw*tc.cin*16)
		var offs []int
		for i := range tc.kh {
			for j := range tc.kw {
				offs = append(offs, (i*tc.w+j)*tc.cin)
			}
		}
		out := make([]float32, oh*ow*16)
		for y := range oh {
			if !ConvRow16(x[y*tc.w*tc.cin:], w, offs, tc.cin, ow, out[y*ow*16:(y+1)*ow*16]) {
				t.Fatalf("%+v: ConvRow16 refused row %d", tc, y)
			}
		}
		for y := range oh {
			for xo := range ow {
				for c := range 16 {
					var want, mag float64
					for tp, o := range offs {
						for i := range tc.cin {
							v := float64(x[(y*tc.w+xo)*tc.cin+o+i]) * float64(w[(tp*tc.cin+i)*16+c])
							want += v
							mag += math.Abs(v)
						}
					}
					if got := float64(out[(y*ow+xo)*16+c]); math.Abs(got-want) > 1e-6*mag+1e-30 {
						t.Fatalf("%+v: output (%d, %d, %d) = %g, want %g", tc, y, xo, c, got, want)
					}
				}
			}
		}
	}
}

// TestKGradRows16 compares KGradRows16 with a float64 kernel gradient on LeNet's second layer (one
// example: 12x12x6 input, 8x8x16 output gradient, 150 pairs in groups of 6) and a smaller layer
// whose last group is padded with a repeated pair.
func TestKGradRows16(t *testing.T) {
	if !FMAAvailable {
		t.Skip("no AVX2+FMA kernels on this machine")
	}
	r := rand.New(rand.NewPCG(19, 20))
	for _, tc := range []struct{ h, w, kh, kw, cin int }{{12, 12, 5, 5, 6}, {6, 7, 2, 3, 3}, {5, 5, 2, 2, 2}} {
		oh, ow := tc.h-tc.kh+1, tc.w-tc.kw+1
		x := finiteData(r, tc.h*tc.w*tc.cin)
		dy := finiteData(r, oh*ow*16)
		var all []int
		for i := range tc.kh {
			for j := range tc.kw {
				for c := range tc.cin {
					all = append(all, (i*tc.w+j)*tc.cin+c)
				}
			}
		}
		for g0 := 0; g0 < len(all); g0 += KGradPairs16 {
			offs := make([]int, KGradPairs16)
			for k := range offs {
				offs[k] = all[min(g0+k, len(all)-1)]
			}
			acc := make([]float32, 16*KGradPairs16)
			if !KGradRows16(x, dy, offs, oh, ow, tc.w*tc.cin, tc.cin, acc) {
				t.Fatalf("%+v: KGradRows16 refused", tc)
			}
			for k := range min(KGradPairs16, len(all)-g0) {
				for c := range 16 {
					var want, mag float64
					for y := range oh {
						for xo := range ow {
							v := float64(x[(y*tc.w+xo)*tc.cin+offs[k]]) * float64(dy[(y*ow+xo)*16+c])
							want += v
							mag += math.Abs(v)
						}
					}
					if got := float64(acc[k*16+c]); math.Abs(got-want) > 1e-5*mag {
						t.Fatalf("%+v: pair %d channel %d = %g, want %g", tc, g0+k, c, got, want)
					}
				}
			}
		}
	}
}

// TestKGradRowsRefuse checks that KGradRows and KGradRows16 refuse a negative row stride (which
// would read before x) and a pixel stride that is not positive, leaving acc untouched.
func TestKGradRowsRefuse(t *testing.T) {
	if !FMAAvailable {
		t.Skip("no FMA kernels on this machine: every call is refused before the strides are looked at")
	}
	x, dy := make([]float32, 1024), make([]float32, 1024)
	for i := range x {
		x[i], dy[i] = 1, 1
	}
	offs13, offs6 := make([]int, KGradTaps), make([]int, KGradPairs16)
	for _, tc := range []struct {
		name   string
		call   func(acc []float32) bool
		accLen int
	}{
		{"KGradRows xStride -4", func(acc []float32) bool { return KGradRows(x, dy, offs13, 2, 4, -4, 6, acc) }, 8 * KGradTaps},
		{"KGradRows16 xStride -8", func(acc []float32) bool { return KGradRows16(x, dy, offs6, 2, 4, -8, 2, acc) }, 16 * KGradPairs16},
		{"KGradRows16 pixStride -2", func(acc []float32) bool { return KGradRows16(x, dy, offs6, 2, 4, 8, -2, acc) }, 16 * KGradPairs16},
		{"KGradRows16 pixStride 0", func(acc []float32) bool { return KGradRows16(x, dy, offs6, 2, 4, 8, 0, acc) }, 16 * KGradPairs16},
	} {
		acc := make([]float32, tc.accLen)
		if tc.call(acc) {
			t.Errorf("%s: accepted", tc.name)
		}
		for i, v := range acc {
			if v != 0 {
				t.Fatalf("%s: acc[%d] = %g after a refusal", tc.name, i, v)
			}
		}
	}
}
