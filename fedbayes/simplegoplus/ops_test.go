package simplegoplus

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// runBackendOp builds one op directly on this package's Builder (float64 parameters), runs it and
// returns the flat result and its dims.
func runBackendOp(t *testing.T, inputs [][]float64, dims [][]int, build func(b *Builder, params []backends.Op) (backends.Op, error)) ([]float64, []int, error) {
	t.Helper()
	be := plusBackend()
	b := be.Builder(t.Name()).(*Builder)
	params := make([]backends.Op, len(inputs))
	bufs := make([]backends.Buffer, len(inputs))
	for i := range inputs {
		s := shapes.Make(dtypes.Float64, dims[i]...)
		p, err := b.Parameter("p", s, nil)
		if err != nil {
			t.Fatal(err)
		}
		params[i] = p
		if bufs[i], err = be.BufferFromFlatData(0, inputs[i], s); err != nil {
			t.Fatal(err)
		}
	}
	out, err := build(b, params)
	if err != nil {
		return nil, nil, err
	}
	exe, err := b.Compile([]backends.Op{out}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exe.Execute(bufs, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := be.BufferShape(res[0])
	flat := make([]float64, s.Size())
	if err := be.BufferToFlatData(res[0], flat); err != nil {
		t.Fatal(err)
	}
	return flat, s.Dimensions, nil
}

func TestReverse(t *testing.T) {
	for _, tc := range []struct {
		dims, axes []int
	}{
		{[]int{5}, []int{0}},
		{[]int{3, 4}, []int{1}},
		{[]int{3, 4}, []int{0, 1}},
		{[]int{2, 3, 4, 2}, []int{1, 2}},
		{[]int{5, 5, 1, 6}, []int{0, 1}}, // a conv kernel [h, w, in, out]
		{[]int{3, 1, 2}, []int{1}},       // size-1 axis: identity
		{[]int{3, 4}, nil},
	} {
		x := randFloats(1, sizeOf(tc.dims))
		got, gotDims := eval(t, plusBackend(), func(x *Node) *Node { return Reverse(x, tc.axes...) },
			tensors.FromFlatDataAndDimensions(x, tc.dims...))
		if !slices.Equal(gotDims, tc.dims) {
			t.Fatalf("dims %v axes %v: got dims %v", tc.dims, tc.axes, gotDims)
		}
		st := stridesOf(tc.dims)
		for i := range got {
			idx := unflatten(i, tc.dims)
			src := 0
			for a, v := range idx {
				if slices.Contains(tc.axes, a) {
					v = tc.dims[a] - 1 - v
				}
				src += v * st[a]
			}
			if got[i] != x[src] {
				t.Fatalf("dims %v axes %v: element %v = %g, want %g", tc.dims, tc.axes, idx, got[i], x[src])
			}
		}
	}
	// Bad axes are errors, not panics.
	_, _, err := runBackendOp(t, [][]float64{{1, 2}}, [][]int{{2}}, func(b *Builder, p []backends.Op) (backends.Op, error) {
		return b.Reverse(p[0], 1)
	})
	if err == nil || !strings.Contains(err.Error(), "Reverse") {
		t.Fatalf("Reverse with axis out of range: err = %v", err)
	}
}

// padRef is Pad computed element by element (XLA semantics, negative edges included).
func padRef(x []float64, dims []int, fill float64, cfg []backends.PadAxis) ([]float64, []int) {
	out := slices.Clone(dims)
	for a, c := range cfg {
		out[a] = dims[a] + c.Start + c.End + max(dims[a]-1, 0)*c.Interior
	}
	st := stridesOf(dims)
	res := make([]float64, sizeOf(out))
	for i := range res {
		o := unflatten(i, out)
		src, inside := 0, true
		for a := range dims {
			p := o[a]
			step := 1
			if a < len(cfg) {
				p -= cfg[a].Start
				step = cfg[a].Interior + 1
			}
			if p < 0 || p%step != 0 || p/step >= dims[a] {
				inside = false
				break
			}
			src += p / step * st[a]
		}
		res[i] = fill
		if inside {
			res[i] = x[src]
		}
	}
	return res, out
}

func TestPad(t *testing.T) {
	for _, tc := range []struct {
		dims []int
		cfg  []backends.PadAxis
	}{
		{[]int{4}, []backends.PadAxis{{Start: 2, End: 1}}},
		{[]int{4}, []backends.PadAxis{{Interior: 2}}},
		{[]int{4}, []backends.PadAxis{{Start: -1, End: -2}}},
		{[]int{3}, []backends.PadAxis{{Start: -5, End: 4}}}, // negative start reaching into the end fill
		{[]int{3, 4}, []backends.PadAxis{{Start: 1, End: 2, Interior: 1}, {Start: -1, End: 3, Interior: 2}}},
		{[]int{2, 3, 4}, []backends.PadAxis{{}, {Start: 4, End: 4}}},
		{[]int{2, 3, 4, 2}, []backends.PadAxis{{}, {Start: 2, End: 1, Interior: 1}, {Start: 0, End: 1, Interior: 1}, {}}},
	} {
		x := randFloats(2, sizeOf(tc.dims))
		want, wantDims := padRef(x, tc.dims, -7, tc.cfg)
		got, gotDims := eval(t, plusBackend(), func(x *Node) *Node {
			return Pad(x, Scalar(x.Graph(), x.DType(), -7), tc.cfg...)
		}, tensors.FromFlatDataAndDimensions(x, tc.dims...))
		if !slices.Equal(gotDims, wantDims) {
			t.Fatalf("dims %v cfg %+v: got dims %v, want %v", tc.dims, tc.cfg, gotDims, wantDims)
		}
		closeSlices(t, "Pad", got, want, 0)
	}
	for _, cfg := range [][]backends.PadAxis{{{Start: -3, End: -2}}, {{Interior: -1}}, {{}, {}}} {
		_, _, err := runBackendOp(t, [][]float64{{1, 2, 3, 4}}, [][]int{{4}}, func(b *Builder, p []backends.Op) (backends.Op, error) {
			fill, _ := b.Constant([]float64{0})
			return b.Pad(p[0], fill, cfg...)
		})
		if err == nil {
			t.Fatalf("Pad %+v of [4]: no error", cfg)
		}
	}
}

// TestSliceGradient checks Pad through GoMLX's gradient of a strided Slice, against finite
// differences in float64.
func TestSliceGradient(t *testing.T) {
	dims := []int{5, 7}
	x := randFloats(3, sizeOf(dims))
	gradCheck(t, plusBackend(), func(x *Node) *Node {
		return Slice(x, AxisRange(1, 5), AxisRange(0, 7).Stride(3))
	}, x, dims, 1e-6)
}

// selectAndScatterRef is SelectAndScatter computed window by window (first extreme in row-major
// window order, padding never selected).
func selectAndScatterRef(x, src []float64, dims, srcDims, window, strides []int, pads [][2]int, isMax bool) []float64 {
	out := make([]float64, len(x))
	st := stridesOf(dims)
	offsets := windowOffsets(window)
	for si := range src {
		s := unflatten(si, srcDims)
		best, bestIdx := 0.0, -1
		for _, off := range offsets {
			flat, inside := 0, true
			for a := range dims {
				q := s[a]*strides[a] + off[a]
				if len(pads) > 0 {
					q -= pads[a][0]
				}
				if q < 0 || q >= dims[a] {
					inside = false
					break
				}
				flat += q * st[a]
			}
			if !inside {
				continue
			}
			if bestIdx < 0 || (isMax && x[flat] > best) || (!isMax && x[flat] < best) {
				best, bestIdx = x[flat], flat
			}
		}
		if bestIdx >= 0 {
			out[bestIdx] += src[si]
		}
	}
	return out
}

func TestSelectAndScatter(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		dims, window, strides    []int
		pads                     [][2]int
		ties                     bool
		wantTiledPath            bool
		srcDimsOverride          []int
		wantErrorWithSrcOverride bool
	}{
		{name: "2x2s2 NHWC", dims: []int{2, 4, 6, 3}, window: []int{1, 2, 2, 1}, strides: []int{1, 2, 2, 1}},
		{name: "2x2s2 odd dims", dims: []int{1, 5, 7, 2}, window: []int{1, 2, 2, 1}, strides: []int{1, 2, 2, 1}},
		{name: "2x2s2 ties", dims: []int{1, 4, 4, 1}, window: []int{1, 2, 2, 1}, strides: []int{1, 2, 2, 1}, ties: true},
		{name: "3x3s1", dims: []int{1, 5, 5, 2}, window: []int{1, 3, 3, 1}, strides: []int{1, 1, 1, 1}},
		{name: "3x3s2 padded", dims: []int{2, 6, 5, 1}, window: []int{1, 3, 3, 1}, strides: []int{1, 2, 2, 1},
			pads: [][2]int{{0, 0}, {1, 1}, {1, 0}, {0, 0}}},
		{name: "3x3s2 ties padded", dims: []int{1, 5, 5, 1}, window: []int{1, 3, 3, 1}, strides: []int{1, 2, 2, 1},
			pads: [][2]int{{0, 0}, {1, 1}, {1, 1}, {0, 0}}, ties: true},
		{name: "1d window 3 stride 2", dims: []int{9}, window: []int{3}, strides: []int{2}},
	} {
		for _, isMax := range []bool{true, false} {
			x := randFloats(4, sizeOf(tc.dims))
			if tc.ties {
				for i := range x {
					x[i] = math.Round(x[i]) // many equal values in each window
				}
			}
			srcDims := make([]int, len(tc.dims))
			for a := range tc.dims {
				pd := tc.dims[a]
				if len(tc.pads) > 0 {
					pd += tc.pads[a][0] + tc.pads[a][1]
				}
				srcDims[a] = (pd-tc.window[a])/tc.strides[a] + 1
			}
			src := randFloats(5, sizeOf(srcDims))
			want := selectAndScatterRef(x, src, tc.dims, srcDims, tc.window, tc.strides, tc.pads, isMax)
			got, gotDims, err := runBackendOp(t, [][]float64{x, src}, [][]int{tc.dims, srcDims},
				func(b *Builder, p []backends.Op) (backends.Op, error) {
					if isMax {
						return b.SelectAndScatterMax(p[0], p[1], tc.window, tc.strides, tc.pads)
					}
					return b.SelectAndScatterMin(p[0], p[1], tc.window, tc.strides, tc.pads)
				})
			if err != nil {
				t.Fatalf("%s max=%v: %v", tc.name, isMax, err)
			}
			if !slices.Equal(gotDims, tc.dims) {
				t.Fatalf("%s: dims %v, want %v", tc.name, gotDims, tc.dims)
			}
			closeSlices(t, tc.name, got, want, 1e-12)

			// The general path must agree with the tiled one where both apply.
			if len(tc.pads) == 0 && slices.Equal(tc.window, tc.strides) {
				gen, _, err := runBackendOp(t, [][]float64{x, src}, [][]int{tc.dims, srcDims},
					func(b *Builder, p []backends.Op) (out backends.Op, err error) {
						defer recoverOp("test", &out, &err)
						lo := make([]int, len(tc.dims))
						return b.selectAndScatterGeneral(p[0], p[1], tc.window, tc.strides, lo, lo, isMax), nil
					})
				if err != nil {
					t.Fatal(err)
				}
				closeSlices(t, tc.name+" general path", gen, want, 1e-12)
			}
		}
	}
	// A source that does not match the windows is an error.
	_, _, err := runBackendOp(t, [][]float64{make([]float64, 16), make([]float64, 9)}, [][]int{{4, 4}, {3, 3}},
		func(b *Builder, p []backends.Op) (backends.Op, error) {
			return b.SelectAndScatterMax(p[0], p[1], []int{2, 2}, []int{2, 2}, nil)
		})
	if err == nil || !strings.Contains(err.Error(), "SelectAndScatterMax") {
		t.Fatalf("mismatched source: err = %v", err)
	}
}

// TestMaxPoolGradient checks SelectAndScatter through GoMLX's max-pool gradient against finite
// differences (float64; random inputs have no ties).
func TestMaxPoolGradient(t *testing.T) {
	for _, tc := range []struct {
		name string
		dims []int
		pool func(x *Node) *Node
	}{
		{"2x2", []int{2, 6, 6, 2}, func(x *Node) *Node { return MaxPool(x).Window(2).Done() }},
		{"3x3 stride 2 same", []int{1, 7, 6, 2}, func(x *Node) *Node { return MaxPool(x).Window(3).Strides(2).PadSame().Done() }},
		{"min 2x2", []int{1, 4, 5, 1}, func(x *Node) *Node { return MinPool(x).Window(2).Done() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gradCheck(t, plusBackend(), tc.pool, randFloats(6, sizeOf(tc.dims)), tc.dims, 1e-6)
		})
	}
}

func TestDynamicSlice(t *testing.T) {
	dims := []int{4, 5}
	x := randFloats(8, sizeOf(dims))
	for _, tc := range []struct {
		starts, size, wantStarts []int
	}{
		{[]int{1, 2}, []int{2, 3}, []int{1, 2}},
		{[]int{3, -1}, []int{2, 3}, []int{2, 0}}, // clamped like XLA
		{[]int{0, 9}, []int{4, 1}, []int{0, 4}},
	} {
		got, gotDims := eval(t, plusBackend(), func(x *Node) *Node {
			g := x.Graph()
			return DynamicSlice(x, []*Node{Const(g, int32(tc.starts[0])), Const(g, int64(tc.starts[1]))}, tc.size)
		}, tensors.FromFlatDataAndDimensions(x, dims...))
		if !slices.Equal(gotDims, tc.size) {
			t.Fatalf("starts %v: dims %v", tc.starts, gotDims)
		}
		for i := range got {
			idx := unflatten(i, tc.size)
			want := x[(idx[0]+tc.wantStarts[0])*dims[1]+idx[1]+tc.wantStarts[1]]
			if got[i] != want {
				t.Fatalf("starts %v: element %v = %g, want %g", tc.starts, idx, got[i], want)
			}
		}

		// DynamicUpdateSlice with the same starts writes an update box at the clamped position.
		upd := randFloats(9, sizeOf(tc.size))
		got, _ = eval(t, plusBackend(), func(x, u *Node) *Node {
			g := x.Graph()
			return DynamicUpdateSlice(x, u, []*Node{Const(g, int32(tc.starts[0])), Const(g, int32(tc.starts[1]))})
		}, tensors.FromFlatDataAndDimensions(x, dims...), tensors.FromFlatDataAndDimensions(upd, tc.size...))
		for i := range got {
			idx := unflatten(i, dims)
			want := x[i]
			r, c := idx[0]-tc.wantStarts[0], idx[1]-tc.wantStarts[1]
			if r >= 0 && r < tc.size[0] && c >= 0 && c < tc.size[1] {
				want = upd[r*tc.size[1]+c]
			}
			if got[i] != want {
				t.Fatalf("update at %v: element %v = %g, want %g", tc.starts, idx, got[i], want)
			}
		}
	}
	// Gradients (GoMLX's: DynamicSlice's uses DynamicUpdateSlice and vice versa).
	gradCheck(t, plusBackend(), func(x *Node) *Node {
		g := x.Graph()
		return DynamicSlice(x, []*Node{Const(g, int32(1)), Const(g, int32(2))}, []int{2, 2})
	}, x, dims, 1e-6)
	gradCheck(t, plusBackend(), func(x *Node) *Node {
		g := x.Graph()
		return DynamicUpdateSlice(x, Mul(Slice(x, AxisRange(0, 2), AxisRange(0, 2)), Scalar(g, x.DType(), 3)),
			[]*Node{Const(g, int32(2)), Const(g, int32(1))})
	}, x, dims, 1e-6)
}
