package simplegoplus

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// sliceData mirrors SimpleGo's sliceNode (ops.go in v0.26.0), the parameters of a Slice node.
type sliceData struct {
	starts, limits, strides []int
}

// execSlice copies a strided slice of its operand. SimpleGo's executor moves one element at a time
// through a per-axis counter; here gatherInto copies it a run at a time (base at the slice's start,
// the operand's strides scaled by the slice's steps), a copy() where the run is contiguous, on both
// cores for large slices. The vectorised client path slices every per-client convolution's input and kernel out of
// the [K, ...] tensors (a run of a whole client), and the gradient of every Concatenate is one Slice
// per part. Copies move bits, so the result is SimpleGo's exactly.
func execSlice(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	p, ok := viewData[sliceData](nodeData(node))
	if !ok || !isOurs(backend) {
		return stock.slice(backend, node, inputs, owned)
	}
	outShape := nodeShape(node)
	out := getBufferForShape(backend, outShape)
	in := inputs[0]
	dims := bufferShape(in).Dimensions
	switch outShape.DType {
	case dtypes.Float32:
		sliceRuns[float32](in, out, dims, outShape.Dimensions, p)
	case dtypes.Float64:
		sliceRuns[float64](in, out, dims, outShape.Dimensions, p)
	case dtypes.Int32:
		sliceRuns[int32](in, out, dims, outShape.Dimensions, p)
	case dtypes.Int64:
		sliceRuns[int64](in, out, dims, outShape.Dimensions, p)
	case dtypes.Uint32:
		sliceRuns[uint32](in, out, dims, outShape.Dimensions, p)
	case dtypes.Bool:
		sliceRuns[bool](in, out, dims, outShape.Dimensions, p)
	default:
		putBuffer(backend, out)
		return stock.slice(backend, node, inputs, owned)
	}
	return out, nil
}

// sliceRuns fills out (dimensions outDims) with the slice p of in (dimensions dims): a gather
// from the slice's start, each axis stepping over p.strides of in's elements along it.
func sliceRuns[T any](in, out *simplego.Buffer, dims, outDims []int, p *sliceData) {
	src, _ := flatOf[T](in)
	dst, _ := flatOf[T](out)
	strides := spatialStrides(dims, 1) // in's element strides, then the slice's steps in elements
	base := 0
	for a := range dims {
		base += p.starts[a] * strides[a]
		strides[a] *= p.strides[a]
	}
	gatherInto(dst, src, base, outDims, strides)
}

// registerSlice replaces SimpleGo's Slice executor (called from init).
func registerSlice() {
	stock.slice = nodeExecutors[backends.OpTypeSlice]
	if internalsOK && stock.slice != nil {
		setNodeExecutor(backends.OpTypeSlice, priorityUser, execSlice)
	}
}
