package simplegoplus

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestSliceDataLayout checks that sliceData still mirrors SimpleGo's Slice node data, on a node built
// by SimpleGo's own builder.
func TestSliceDataLayout(t *testing.T) {
	b := stockBackend().Builder("slice").(*simplego.Builder)
	x, err := b.Parameter("x", shapes.Make(dtypes.Float32, 4, 5, 6), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Slice(x, []int{1, 0, 2}, []int{3, 5, 6}, []int{1, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := viewData[sliceData](nodeData(s.(*simplego.Node)))
	if !ok {
		t.Fatalf("sliceData no longer mirrors SimpleGo's Slice node data (%T)", nodeData(s.(*simplego.Node)))
	}
	if !slices.Equal(p.starts, []int{1, 0, 2}) || !slices.Equal(p.limits, []int{3, 5, 6}) || !slices.Equal(p.strides, []int{1, 2, 1}) {
		t.Errorf("sliceData reads starts %v limits %v strides %v", p.starts, p.limits, p.strides)
	}
}

// TestSliceVsStock compares Slice (whole clients of a [K, ...] tensor, inner ranges, strides on
// every axis, a strided last axis, scalars and empty results) with stock SimpleGo, in float32,
// float64, int32 and bool: the results must be identical.
func TestSliceVsStock(t *testing.T) {
	dims := []int{4, 6, 5, 3}
	x := randFloats(11, sizeOf(dims))
	for i, specs := range [][]SliceAxisSpec{
		{AxisElem(2)},
		{AxisRange(1, 3)},
		{AxisRange(), AxisElem(4)},
		{AxisRange(), AxisRange(), AxisRange(1, 4)},
		{AxisRange(), AxisRange(), AxisRange(), AxisRange(1, 3)},
		{AxisRange(0, 4).Stride(2), AxisRange(1, 6).Stride(2)},
		{AxisRange(), AxisRange(), AxisRange(), AxisRange(0, 3).Stride(2)},
		{AxisRange(1, 4).Stride(3), AxisRange(0, 6).Stride(4), AxisRange(0, 5).Stride(2), AxisRange(2, 3)},
		{AxisElem(3), AxisElem(5), AxisElem(4), AxisElem(2)},
		{AxisRange(2, 2)},
	} {
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64, dtypes.Int32, dtypes.Bool} {
			run := func(be backends.Backend) []float64 {
				out, _ := eval(t, be, func(a *Node) *Node {
					var v *Node
					if dt == dtypes.Bool {
						v = GreaterThan(a, ScalarZero(a.Graph(), a.DType()))
					} else {
						v = ConvertDType(MulScalar(a, 100), dt)
					}
					return ConvertDType(Slice(v, specs...), dtypes.Float64)
				}, tensors.FromFlatDataAndDimensions(x, dims...))
				return out
			}
			closeSlices(t, fmt.Sprintf("Slice case %d %s", i, dt), run(plusBackend()), run(stockBackend()), 0)
		}
	}
}
