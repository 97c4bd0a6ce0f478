package simplegoplus

import (
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// TestMaxPool32Branchless checks the branch-free float32 max-pool loops (maxWindow32,
// argmaxScatter32) against the plain rule they replace, on windows with ties, NaN and signed zeros:
// the first value of the window, then each later one that is greater.
func TestMaxPool32Branchless(t *testing.T) {
	for _, tc := range []struct {
		dims, window []int
	}{
		{[]int{2, 6, 4, 3}, []int{1, 2, 2, 1}},
		{[]int{1, 6, 6, 1}, []int{1, 3, 2, 1}},
		{[]int{3, 8}, []int{1, 4}},
		{[]int{9}, []int{3}},
		{[]int{2, 5, 7, 3}, []int{1, 2, 3, 1}}, // odd dimensions: the last rows and columns are in no window
		// LeNet's poolings, and runs of channels around the vector width (the vector loops).
		{[]int{3, 24, 24, 6}, []int{1, 2, 2, 1}},
		{[]int{3, 8, 8, 16}, []int{1, 2, 2, 1}},
		{[]int{2, 10, 11, 4}, []int{1, 2, 2, 1}},
		{[]int{2, 6, 9, 12}, []int{1, 3, 2, 1}},
		{[]int{2, 5, 7, 8}, []int{1, 2, 3, 1}},
	} {
		x64 := randFloats(7, sizeOf(tc.dims))
		x := make([]float32, len(x64))
		for i, v := range x64 {
			x[i] = float32(math.Round(v * 2)) // ties in most windows
		}
		x[0], x[1], x[5], x[len(x)-1] = float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(-1))
		l := newPoolLayout(shapes.Make(dtypes.Float32, tc.dims...), tc.window)
		outSize := sizeOf(l.outer) * l.run
		src := make([]float32, outSize)
		for i := range src {
			src[i] = float32(i + 1)
		}
		got, want := make([]float32, outSize), make([]float32, outSize)
		gotGrad, wantGrad := make([]float32, len(x)), make([]float32, len(x))
		// The kernels as poolForward and poolBackward call them, a row of windows at a time.
		l.forEachRow(func(o int, taps []int, n, inStep, outStep int) {
			for w := range n {
				maxWindow32(x, got[o+w*outStep:o+w*outStep+l.run], taps, w*inStep)
				argmaxScatter32(x, src[o+w*outStep:o+w*outStep+l.run], gotGrad, taps, w*inStep)
			}
		})
		// The plain rule, a window at a time.
		l.forEachWindow(func(o int, taps []int) {
			for i := range l.run {
				best, arg := x[taps[0]+i], taps[0]+i
				for _, tp := range taps[1:] {
					if v := x[tp+i]; v > best {
						best, arg = v, tp+i
					}
				}
				want[o+i] = best
				wantGrad[arg] = src[o+i]
			}
		})
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v window %v: output %d is %g, want %g", tc.dims, tc.window, i, got[i], want[i])
			}
		}
		for i := range wantGrad {
			if gotGrad[i] != wantGrad[i] {
				t.Fatalf("%v window %v: gradient %d is %g, want %g", tc.dims, tc.window, i, gotGrad[i], wantGrad[i])
			}
		}
		// The executors' loops (with the vector loops of package simd where they apply).
		outDims := slices.Clone(tc.dims)
		for a := range outDims {
			outDims[a] /= tc.window[a]
		}
		p := tiledPool{window: tc.window, isMax: true}
		xBuf, srcBuf := testBuffer(tc.dims, x), testBuffer(outDims, src)
		outBuf, gradBuf := testBuffer(outDims, make([]float32, outSize)), testBuffer(tc.dims, make([]float32, len(x)))
		for i := range gradBuf.flat.([]float32) {
			gradBuf.flat.([]float32)[i] = 7 // poolBackward must write every element
		}
		poolForward[float32](p, xBuf.buf(), outBuf.buf())
		poolBackward[float32](p, xBuf.buf(), srcBuf.buf(), gradBuf.buf())
		for i, v := range outBuf.flat.([]float32) {
			if math.Float32bits(v) != math.Float32bits(want[i]) {
				t.Fatalf("%v window %v: poolForward output %d is %g, want %g", tc.dims, tc.window, i, v, want[i])
			}
		}
		for i, v := range gradBuf.flat.([]float32) {
			if math.Float32bits(v) != math.Float32bits(wantGrad[i]) {
				t.Fatalf("%v window %v: poolBackward gradient %d is %g, want %g", tc.dims, tc.window, i, v, wantGrad[i])
			}
		}
	}
}

// testBuffer makes a SimpleGo buffer holding data with dims (through the checked mirror type).
func testBuffer(dims []int, data []float32) *bufferMirror {
	return &bufferMirror{shape: shapes.Make(dtypes.Float32, dims...), valid: true, flat: data}
}

// buf returns m as the SimpleGo buffer it mirrors.
func (m *bufferMirror) buf() *simplego.Buffer { return (*simplego.Buffer)(unsafe.Pointer(m)) }
