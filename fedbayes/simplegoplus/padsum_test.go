package simplegoplus

import (
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestSlicedGradient checks the gradient of a tensor used through slices along one axis (whole
// clients, as the vectorised convolutions use it; some elements unused; overlapping slices, which stay
// a real sum; slices along a middle axis) against the gradient computed by hand in float64:
// d/dx of sum_i c_i * sum(Slice_i(x)^2) is 2 x times the sum of the c_i of the slices covering it.
func TestSlicedGradient(t *testing.T) {
	dims := []int{5, 3, 4}
	x := randFloats(21, sizeOf(dims))
	type cut struct{ axis, lo, hi int }
	for i, cuts := range [][]cut{
		{{0, 0, 1}, {0, 1, 2}, {0, 2, 3}, {0, 3, 4}, {0, 4, 5}},
		{{0, 4, 5}, {0, 0, 1}, {0, 2, 3}},
		{{0, 0, 2}, {0, 1, 3}, {0, 3, 5}},
		{{1, 0, 1}, {1, 2, 3}, {1, 1, 2}},
		{{2, 1, 3}, {2, 3, 4}},
	} {
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
			got, _ := eval(t, plusBackend(), func(a *Node) *Node {
				v := ConvertDType(a, dt)
				var loss *Node
				for j, c := range cuts {
					specs := make([]SliceAxisSpec, c.axis+1)
					for k := range specs {
						specs[k] = AxisRange()
					}
					specs[c.axis] = AxisRange(c.lo, c.hi)
					term := MulScalar(ReduceAllSum(Square(Slice(v, specs...))), float64(j+1))
					if loss == nil {
						loss = term
					} else {
						loss = Add(loss, term)
					}
				}
				return ConvertDType(Gradient(loss, v)[0], dtypes.Float64)
			}, tensors.FromFlatDataAndDimensions(x, dims...))
			want := make([]float64, len(x))
			strides := []int{dims[1] * dims[2], dims[2], 1}
			for e := range x {
				for j, c := range cuts {
					if at := e / strides[c.axis] % dims[c.axis]; at >= c.lo && at < c.hi {
						xv := x[e]
						if dt == dtypes.Float32 {
							xv = float64(float32(xv))
						}
						want[e] += 2 * xv * float64(j+1)
					}
				}
			}
			tol := 1e-12
			if dt == dtypes.Float32 {
				tol = 1e-6
			}
			closeSlices(t, fmt.Sprintf("case %d %s", i, dt), got, want, tol)
		}
	}
}

// TestPadSumBuildsConcatenate checks that the sum of zero-padded pieces is built as one
// concatenation (and stays an Add when pieces overlap or the fill is not zero).
func TestPadSumBuildsConcatenate(t *testing.T) {
	b := plusBackend().Builder("padsum").(*Builder)
	piece, err := b.Parameter("p", shapes.Make(dtypes.Float32, 1, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	zero, one := b.scalarOf(dtypes.Float32, 0), b.scalarOf(dtypes.Float32, 1)
	pad := func(fill backends.Op, start int) backends.Op {
		out, err := b.Pad(piece, fill, backends.PadAxis{Start: start, End: 3 - start})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	opType := func(op backends.Op) backends.OpType { return mirrorNode(op.(*simplego.Node)).opType }
	for _, tc := range []struct {
		name string
		lhs  backends.Op
		rhs  backends.Op
		want backends.OpType
	}{
		{"disjoint", pad(zero, 0), pad(zero, 2), backends.OpTypeConcatenate},
		{"overlapping", pad(zero, 1), pad(zero, 1), backends.OpTypeAdd},
		{"fill one", pad(one, 0), pad(one, 2), backends.OpTypeAdd},
	} {
		sum, err := b.Add(tc.lhs, tc.rhs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := opType(sum); got != tc.want {
			t.Errorf("%s: Add built %s, want %s", tc.name, got, tc.want)
		}
	}
}
