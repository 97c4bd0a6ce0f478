package simplegoplus

import (
	"fmt"
	"unsafe"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"

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

// compareParallel computes y = a op b on both cores; a or b may hold a single value.
func compareParallel[T float32 | float64](op backends.OpType, aBuf, bBuf *simplego.Buffer, y []bool) {
	a, _ := flatOf[T](aBuf)
	b, _ := flatOf[T](bBuf)
	parallelRange(len(y), func(lo, hi int) { compareKernel(op, chunkOf(a, lo, hi), chunkOf(b, lo, hi), y[lo:hi]) })
}

// mirroredCompare is the comparison with its operands swapped: c op x is x mirroredCompare[op] c.
var mirroredCompare = map[backends.OpType]backends.OpType{
	backends.OpTypeLessThan: backends.OpTypeGreaterThan, backends.OpTypeLessOrEqual: backends.OpTypeGreaterOrEqual,
	backends.OpTypeGreaterThan: backends.OpTypeLessThan, backends.OpTypeGreaterOrEqual: backends.OpTypeLessOrEqual,
}

// simdCompare maps the comparisons to the vector kernels of package simd.
var simdCompare = map[backends.OpType]simd.Cmp{backends.OpTypeLessThan: simd.Less,
	backends.OpTypeLessOrEqual: simd.LessEq, backends.OpTypeGreaterThan: simd.Greater,
	backends.OpTypeGreaterOrEqual: simd.GreaterEq}

// compareLookup returns table[op] for one of compareOps. An op missing from the table is a broken
// internal invariant (execCompare is registered for compareOps only), so it panics rather than
// computing another comparison.
func compareLookup[V any](table map[backends.OpType]V, op backends.OpType) V {
	v, ok := table[op]
	if !ok {
		panic(fmt.Sprintf("simplegoplus: no entry for comparison %s", op))
	}
	return v
}

// compareKernel computes y[i] = a[i] op b[i], where a or b may hold a single value, repeated over
// y. Every form goes through one switch over the comparisons: a single value on the left is moved
// to the right with the comparison mirrored, two single values are compared once. Each case has a
// loop per form so that the comparison compiles to a flag set, not a branch; float32 runs the
// vector kernels first (same results: Go's comparisons, false with NaN).
func compareKernel[T float32 | float64](op backends.OpType, a, b []T, y []bool) {
	if len(y) == 0 {
		return
	}
	if len(a) == 1 && len(y) != 1 {
		if len(b) == 1 { // two single values
			r := []bool{false}
			compareKernel(op, a, b, r)
			for i := range y {
				y[i] = r[0]
			}
			return
		}
		a, b, op = b, a, compareLookup(mirroredCompare, op)
	}
	single := len(b) == 1 && len(a) != 1
	c := b[0]
	if a32, ok := any(a).([]float32); ok && simd.Available {
		var done int
		if single {
			done = simd.CompareVS(compareLookup(simdCompare, op), a32, float32(c), y)
		} else {
			done = simd.CompareVV(compareLookup(simdCompare, op), a32, any(b).([]float32), y)
			b = b[done:]
		}
		a, y = a[done:], y[done:]
		if len(a) == 0 {
			return
		}
	}
	if !single {
		b = b[:len(a)]
	}
	y = y[:len(a)]
	switch op {
	case backends.OpTypeLessThan:
		if single {
			for i, v := range a {
				y[i] = v < c
			}
		} else {
			for i, v := range a {
				y[i] = v < b[i]
			}
		}
	case backends.OpTypeLessOrEqual:
		if single {
			for i, v := range a {
				y[i] = v <= c
			}
		} else {
			for i, v := range a {
				y[i] = v <= b[i]
			}
		}
	case backends.OpTypeGreaterThan:
		if single {
			for i, v := range a {
				y[i] = v > c
			}
		} else {
			for i, v := range a {
				y[i] = v > b[i]
			}
		}
	case backends.OpTypeGreaterOrEqual:
		if single {
			for i, v := range a {
				y[i] = v >= c
			}
		} else {
			for i, v := range a {
				y[i] = v >= b[i]
			}
		}
	default:
		panic(fmt.Sprintf("simplegoplus: compareKernel given %s, not a comparison it computes", op))
	}
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
	whereParallel(cond, onTrue, onFalse, out)
	return out, nil
}

// whereParallel computes y = cond ? t : f on both cores without branches (a condition from the
// gradient of ReLU is as random as the data, and a branch per element mispredicts half the time):
// the bool is read as its byte (0 or 1) and turned into a mask of the value's bits.
func whereParallel(cond []bool, tBuf, fBuf, outBuf *simplego.Buffer) {
	if _, ok := flatOf[float32](outBuf); ok {
		whereBits[uint32](cond, bitsOf[uint32](tBuf), bitsOf[uint32](fBuf), bitsOf[uint32](outBuf))
		return
	}
	whereBits[uint64](cond, bitsOf[uint64](tBuf), bitsOf[uint64](fBuf), bitsOf[uint64](outBuf))
}

// bitsOf returns the flat float32 (U = uint32) or float64 (U = uint64) data of a buffer as its bits.
func bitsOf[U uint32 | uint64](b *simplego.Buffer) []U {
	var zero U
	switch any(zero).(type) {
	case uint32:
		f, _ := flatOf[float32](b)
		if len(f) == 0 {
			return nil
		}
		return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
	default:
		f, _ := flatOf[float64](b)
		if len(f) == 0 {
			return nil
		}
		return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
	}
}

// whereBits selects bit patterns: y[i] = cond[i] ? t[i] : f[i], where t or f may hold one value.
func whereBits[U uint32 | uint64](cond []bool, t, f, y []U) {
	if len(cond) == 0 {
		return
	}
	c8 := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(cond))), len(cond))
	parallelRange(len(y), func(lo, hi int) {
		if y32, ok := any(y).([]uint32); ok {
			// The vector loop first (same selection), the loops below finish the chunk.
			t32, f32 := any(t).([]uint32), any(f).([]uint32)
			lo += simd.Where32(cond[lo:hi], chunkOf(t32, lo, hi), chunkOf(f32, lo, hi), y32[lo:hi])
		}
		c := c8[lo:hi]
		out := y[lo:hi]
		switch {
		case len(t) != 1 && len(f) != 1:
			tt, ff := t[lo:hi], f[lo:hi]
			tt, ff = tt[:len(c)], ff[:len(c)]
			out = out[:len(c)]
			for i, b := range c {
				m := -U(b & 1)
				out[i] = tt[i]&m | ff[i]&^m
			}
		case len(t) == 1 && len(f) != 1:
			tv, ff := t[0], f[lo:hi]
			ff, out = ff[:len(c)], out[:len(c)]
			for i, b := range c {
				m := -U(b & 1)
				out[i] = tv&m | ff[i]&^m
			}
		case len(t) != 1 && len(f) == 1:
			tt, fv := t[lo:hi], f[0]
			tt, out = tt[:len(c)], out[:len(c)]
			for i, b := range c {
				m := -U(b & 1)
				out[i] = tt[i]&m | fv&^m
			}
		default:
			tv, fv := t[0], f[0]
			out = out[:len(c)]
			for i, b := range c {
				m := -U(b & 1)
				out[i] = tv&m | fv&^m
			}
		}
	})
}
