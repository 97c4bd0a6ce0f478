package simplegoplus

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// compareOps are the comparisons execCompare replaces (float operands, bool result).
var compareOps = []backends.OpType{backends.OpTypeLessThan, backends.OpTypeLessOrEqual,
	backends.OpTypeGreaterThan, backends.OpTypeGreaterOrEqual}

// execCompare computes a float32/float64 comparison of two operands of the output's shape (or
// single values) on both cores; anything else goes to SimpleGo. Gradients of ReLU, pooling and
// clamps are built from these and Where.
func execCompare(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	op := mirrorNode(node).opType
	outShape := nodeShape(node)
	ls, rs := bufferShape(inputs[0]), bufferShape(inputs[1])
	same := func(s int) bool { return s == 1 || s == outShape.Size() }
	if !isOurs(backend) || ls.DType != rs.DType || !same(ls.Size()) || !same(rs.Size()) ||
		(ls.DType != dtypes.Float32 && ls.DType != dtypes.Float64) {
		return stock.compare[op](backend, node, inputs, owned)
	}
	out := getBufferForShape(backend, outShape)
	y, _ := flatOf[bool](out)
	if ls.DType == dtypes.Float32 {
		compareParallel[float32](op, inputs[0], inputs[1], y)
	} else {
		compareParallel[float64](op, inputs[0], inputs[1], y)
	}
	return out, nil
}

func compareParallel[T float32 | float64](op backends.OpType, aBuf, bBuf *simplego.Buffer, y []bool) {
	a, _ := flatOf[T](aBuf)
	b, _ := flatOf[T](bBuf)
	at := func(x []T, i int) T {
		if len(x) == 1 {
			return x[0]
		}
		return x[i]
	}
	parallelRange(len(y), func(lo, hi int) {
		switch op {
		case backends.OpTypeLessThan:
			for i := lo; i < hi; i++ {
				y[i] = at(a, i) < at(b, i)
			}
		case backends.OpTypeLessOrEqual:
			for i := lo; i < hi; i++ {
				y[i] = at(a, i) <= at(b, i)
			}
		case backends.OpTypeGreaterThan:
			for i := lo; i < hi; i++ {
				y[i] = at(a, i) > at(b, i)
			}
		case backends.OpTypeGreaterOrEqual:
			for i := lo; i < hi; i++ {
				y[i] = at(a, i) >= at(b, i)
			}
		}
	})
}

// execWhere selects float32/float64 values by a bool condition of the output's shape, where the
// two branches have the output's shape or are single values, on both cores; it takes over an
// owned branch buffer as SimpleGo does. Anything else goes to SimpleGo.
func execWhere(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	outShape := nodeShape(node)
	cs, ts, fs := bufferShape(inputs[0]), bufferShape(inputs[1]), bufferShape(inputs[2])
	ok := isOurs(backend) && cs.Size() == outShape.Size() && (outShape.DType == dtypes.Float32 || outShape.DType == dtypes.Float64) &&
		(ts.Size() == 1 || ts.Equal(outShape)) && (fs.Size() == 1 || fs.Equal(outShape))
	if !ok {
		return stock.where(backend, node, inputs, owned)
	}
	var out *simplego.Buffer
	onTrue, onFalse := inputs[1], inputs[2]
	switch {
	case owned[1] && ts.Equal(outShape):
		out, inputs[1] = onTrue, nil
	case owned[2] && fs.Equal(outShape):
		out, inputs[2] = onFalse, nil
	default:
		out = getBufferForShape(backend, outShape)
	}
	cond, _ := flatOf[bool](inputs[0])
	if outShape.DType == dtypes.Float32 {
		whereParallel[float32](cond, onTrue, onFalse, out)
	} else {
		whereParallel[float64](cond, onTrue, onFalse, out)
	}
	return out, nil
}

func whereParallel[T float32 | float64](cond []bool, tBuf, fBuf, outBuf *simplego.Buffer) {
	t, _ := flatOf[T](tBuf)
	f, _ := flatOf[T](fBuf)
	y, _ := flatOf[T](outBuf)
	parallelRange(len(y), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if cond[i] {
				if len(t) != 1 {
					y[i] = t[i]
				} else {
					y[i] = t[0]
				}
			} else {
				if len(f) != 1 {
					y[i] = f[i]
				} else {
					y[i] = f[0]
				}
			}
		}
	})
}
