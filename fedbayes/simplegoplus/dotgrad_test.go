package simplegoplus

import (
	"slices"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// dotCases are DotGeneral configurations: plain matmul, transposed operands, batch axes in odd
// places, several contracting axes in mixed order, and an outer product.
var dotCases = []struct {
	name             string
	lhsDims, rhsDims []int
	lc, lb, rc, rb   []int
}{
	{"matmul", []int{4, 3}, []int{3, 5}, []int{1}, nil, []int{0}, nil},
	{"dense x.W batch 7", []int{7, 6}, []int{6, 2}, []int{1}, nil, []int{0}, nil},
	{"lhs transposed", []int{3, 4}, []int{3, 5}, []int{0}, nil, []int{0}, nil},
	{"rhs transposed", []int{4, 3}, []int{5, 3}, []int{1}, nil, []int{1}, nil},
	{"batched", []int{2, 4, 3}, []int{2, 3, 5}, []int{2}, []int{0}, []int{1}, []int{0}},
	{"batch last", []int{4, 3, 2}, []int{3, 5, 2}, []int{1}, []int{2}, []int{0}, []int{2}},
	{"two contracting, crossed order", []int{2, 3, 4}, []int{4, 5, 2}, []int{0, 2}, nil, []int{2, 0}, nil},
	{"two batch, crossed order", []int{2, 3, 4, 2}, []int{3, 2, 4, 5}, []int{2}, []int{0, 1}, []int{2}, []int{1, 0}},
	{"outer product", []int{3}, []int{4}, nil, nil, nil, nil},
	{"vector dot", []int{5}, []int{5}, []int{0}, nil, []int{0}, nil},
}

// TestDotGeneralGradient checks the DotGeneral-based gradient against finite differences and against
// GoMLX's stock gradient (run on stock SimpleGo), for both operands, in float64.
func TestDotGeneralGradient(t *testing.T) {
	for _, tc := range dotCases {
		t.Run(tc.name, func(t *testing.T) {
			lhs := randFloats(10, sizeOf(tc.lhsDims))
			rhs := randFloats(11, sizeOf(tc.rhsDims))
			rhsT := tensors.FromFlatDataAndDimensions(rhs, tc.rhsDims...)
			lhsT := tensors.FromFlatDataAndDimensions(lhs, tc.lhsDims...)
			dot := func(l, r *Node) *Node { return DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb) }

			// Finite differences, each operand in turn (the other one a constant).
			gl := gradCheck(t, plusBackend(), func(x *Node) *Node { return dot(x, ConstCachedTensor(x.Graph(), rhsT)) }, lhs, tc.lhsDims, 1e-6)
			gr := gradCheck(t, plusBackend(), func(x *Node) *Node { return dot(ConstCachedTensor(x.Graph(), lhsT), x) }, rhs, tc.rhsDims, 1e-6)

			// Stock gradient of the same loss on stock SimpleGo.
			_, outDims := eval(t, stockBackend(), dot, lhsT, rhsT)
			wT := tensors.FromFlatDataAndDimensions(randFloats(7, sizeOf(outDims)), outDims...)
			grads := func(l, r, w *Node) (*Node, *Node) {
				g := Gradient(ReduceAllSum(Mul(dot(l, r), w)), l, r)
				return g[0], g[1]
			}
			sl, _ := eval(t, stockBackend(), func(l, r, w *Node) *Node { a, _ := grads(l, r, w); return a }, lhsT, rhsT, wT)
			sr, _ := eval(t, stockBackend(), func(l, r, w *Node) *Node { _, b := grads(l, r, w); return b }, lhsT, rhsT, wT)
			closeSlices(t, "stock lhs", sl, gl, 1e-12)
			closeSlices(t, "stock rhs", sr, gr, 1e-12)
		})
	}
}

// TestDotGradient checks the gradient of Dot (used by layers.Dense) the same way.
func TestDotGradient(t *testing.T) {
	for _, tc := range []struct{ lhsDims, rhsDims []int }{
		{[]int{5}, []int{5}}, {[]int{4, 3}, []int{3}}, {[]int{6, 4}, []int{4, 3}},
	} {
		lhs, rhs := randFloats(12, sizeOf(tc.lhsDims)), randFloats(13, sizeOf(tc.rhsDims))
		lhsT, rhsT := tensors.FromFlatDataAndDimensions(lhs, tc.lhsDims...), tensors.FromFlatDataAndDimensions(rhs, tc.rhsDims...)
		gl := gradCheck(t, plusBackend(), func(x *Node) *Node { return Dot(x, ConstCachedTensor(x.Graph(), rhsT)) }, lhs, tc.lhsDims, 1e-6)
		gr := gradCheck(t, plusBackend(), func(x *Node) *Node { return Dot(ConstCachedTensor(x.Graph(), lhsT), x) }, rhs, tc.rhsDims, 1e-6)
		_, outDims := eval(t, stockBackend(), func(l, r *Node) *Node { return Dot(l, r) }, lhsT, rhsT)
		wT := tensors.FromFlatDataAndDimensions(randFloats(7, sizeOf(outDims)), outDims...)
		for i, want := range [][]float64{gl, gr} {
			got, _ := eval(t, stockBackend(), func(l, r, w *Node) *Node {
				return Gradient(ReduceAllSum(Mul(Dot(l, r), w)), l, r)[i]
			}, lhsT, rhsT, wT)
			closeSlices(t, "stock Dot gradient", got, want, 1e-12)
		}
	}
}

// TestReadDotGeneralAxes guards the one place that depends on GoMLX internals: if GoMLX changes how
// a DotGeneral node stores its axes, this fails (and the gradient silently falls back to the stock,
// slow one).
func TestReadDotGeneralAxes(t *testing.T) {
	for _, tc := range dotCases {
		var got DotGeneralAxes
		var ok bool
		g := NewGraph(plusBackend(), "read")
		l := Parameter(g, "l", shapesOf(tc.lhsDims))
		r := Parameter(g, "r", shapesOf(tc.rhsDims))
		ok = catch(func() { got, ok = ReadDotGeneralAxes(DotGeneral(l, tc.lc, tc.lb, r, tc.rc, tc.rb)) }) == nil && ok
		if !ok {
			t.Fatalf("%s: axes not readable", tc.name)
		}
		norm := func(a []int) []int {
			if a == nil {
				return []int{}
			}
			return a
		}
		if !slices.Equal(norm(got.LhsContracting), norm(tc.lc)) || !slices.Equal(norm(got.LhsBatch), norm(tc.lb)) ||
			!slices.Equal(norm(got.RhsContracting), norm(tc.rc)) || !slices.Equal(norm(got.RhsBatch), norm(tc.rb)) {
			t.Fatalf("%s: read %+v", tc.name, got)
		}
		if _, ok := ReadDotGeneralAxes(Add(l, l)); ok && tc.name == "matmul" {
			t.Fatalf("an Add node read as a DotGeneral")
		}
		g.Finalize()
	}
}

// TestDotGeneralVJPOnlyOnThisBackend checks which gradient each backend gets: the DotGeneral-based one
// here (no ReduceSum in the gradient of a plain matmul), GoMLX's own elsewhere (ReduceSum present), so
// that XLA and stock SimpleGo graphs are untouched.
func TestDotGeneralVJPOnlyOnThisBackend(t *testing.T) {
	for _, tc := range []struct {
		name          string
		plus          bool
		wantReduceSum bool
	}{{"simplegoplus", true, false}, {"stock simplego", false, true}} {
		be := stockBackend()
		if tc.plus {
			be = plusBackend()
		}
		g := NewGraph(be, "which")
		x := Parameter(g, "x", shapesOf([]int{8, 6}))
		w := Parameter(g, "w", shapesOf([]int{6, 3}))
		before := len(g.Nodes())
		_ = Gradient(ReduceAllSum(Dot(x, w)), w)
		hasReduceSum, dots := false, 0
		for _, n := range g.Nodes()[before:] {
			switch n.Type() {
			case NodeTypeReduceSum:
				// ReduceAllSum of the loss itself is a ReduceSum over all axes of [8,3]; the stock
				// gradient adds one more over the [8,6,3] broadcast product.
				if n.Inputs()[0].Rank() == 3 {
					hasReduceSum = true
				}
			case NodeTypeDotGeneral:
				dots++
			}
		}
		if hasReduceSum != tc.wantReduceSum {
			t.Fatalf("%s: rank-3 ReduceSum in gradient = %v, want %v (%d DotGenerals)", tc.name, hasReduceSum, tc.wantReduceSum, dots)
		}
		g.Finalize()
	}
}

// shapesOf is a float64 shape.
func shapesOf(dims []int) shapes.Shape { return shapes.Make(dtypes.Float64, dims...) }
