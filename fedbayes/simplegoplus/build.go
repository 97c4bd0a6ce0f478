package simplegoplus

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// opError carries an error out of a chain of SimpleGo op calls. It is raised by must and turned
// back into an error by recoverOp before leaving the exported method, so it never reaches a caller.
type opError struct{ err error }

// must returns op, or raises err so that the enclosing method's recoverOp returns it.
func must(op backends.Op, err error) backends.Op {
	if err != nil {
		panic(opError{err})
	}
	return op
}

// fail raises a formatted error for the enclosing method's recoverOp.
func fail(format string, args ...any) {
	panic(opError{fmt.Errorf(format, args...)})
}

// recoverOp is deferred by every op this package adds: it turns an opError (and any other panic
// from SimpleGo) into the returned error, prefixed with the op's name.
func recoverOp(opName string, out *backends.Op, err *error) {
	r := recover()
	if r == nil {
		return
	}
	*out = nil
	if e, ok := r.(opError); ok {
		*err = fmt.Errorf("%s %s: %w", BackendName, opName, e.err)
		return
	}
	*err = fmt.Errorf("%s %s: %v", BackendName, opName, r)
}

// shape returns the shape of op.
func (b *Builder) shape(op backends.Op) shapes.Shape {
	s, err := b.OpShape(op)
	if err != nil {
		panic(opError{err})
	}
	return s
}

// broadcastScalar broadcasts the scalar op to dims.
func (b *Builder) broadcastScalar(scalar backends.Op, dims []int) backends.Op {
	s := b.shape(scalar)
	return must(b.BroadcastInDim(scalar, shapes.Make(s.DType, dims...), nil))
}

// scalarOf returns a scalar constant of the given dtype holding v (exact for the integers and
// floats used here).
func (b *Builder) scalarOf(dtype dtypes.DType, v float64) backends.Op {
	var flat any
	switch dtype {
	case dtypes.Float32:
		flat = []float32{float32(v)}
	case dtypes.Float64:
		flat = []float64{v}
	case dtypes.Int32:
		flat = []int32{int32(v)}
	case dtypes.Int64:
		flat = []int64{int64(v)}
	default:
		// Build in float64 and convert: covers BFloat16, Float16 and the other integer types.
		return must(b.ConvertDType(must(b.Constant([]float64{v})), dtype))
	}
	return must(b.Constant(flat))
}

// zerosOf returns a tensor of zeros of the given shape.
func (b *Builder) zerosOf(s shapes.Shape) backends.Op {
	return b.broadcastScalar(b.scalarOf(s.DType, 0), s.Dimensions)
}

// sizeOf returns the product of dims.
func sizeOf(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

// slice is Slice with unit strides (SimpleGo wants them spelled out).
func (b *Builder) slice(x backends.Op, starts, limits []int) backends.Op {
	return must(b.Slice(x, starts, limits, slices.Repeat([]int{1}, len(starts))))
}

// shapeWith returns a shape of s's dtype with the given dimensions.
func shapeWith(s shapes.Shape, dims []int) shapes.Shape {
	return shapes.Make(s.DType, dims...)
}
