package simplegoplus

import (
	"math"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/shapes"

	"fedbayes.dev/fedbayes/internal/fastmath"
	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// Element-wise executors. SimpleGo's run each op as one single-threaded pass, and its broadcasts
// walk a per-element index iterator. These split large tensors over both cores in fixed chunks
// (the same chunks whatever the number of cores), compute the same expression per element as
// SimpleGo (so results are identical, except Exp: see fastmath.Exp32), take over an input buffer the
// executor owns as SimpleGo does, and turn broadcasts into runs of copies. Anything else (other
// dtypes, shapes they do not handle, other backends) goes to SimpleGo's executor.

// elemChunk is how many elements one goroutine processes at a time.
const elemChunk = 1 << 14

// parallelRange runs fn over [0, n) in chunks of elemChunk, on both cores when n is large.
func parallelRange(n int, fn func(lo, hi int)) { parallelChunks(n, elemChunk, fn) }

// costlyChunk is the chunk of the element-wise ops that cost tens of nanoseconds per element (Log,
// Cos: the Box-Muller transform of every Gaussian noise draw), worth splitting at a few thousand.
const costlyChunk = 1 << 11

// parallelChunks runs fn over [0, n) in chunks of chunk elements, on both cores when there are
// several. The chunks depend only on n, and each element is computed alone, so the result does not
// depend on the number of cores.
func parallelChunks(n, chunk int, fn func(lo, hi int)) {
	if n <= chunk {
		fn(0, n)
		return
	}
	chunks := (n + chunk - 1) / chunk
	parallelDo(chunks, func(c int) { fn(c*chunk, min(n, (c+1)*chunk)) })
}

// unaryOps and binaryOps are the op types whose executors are replaced here.
var (
	unaryOps = []backends.OpType{backends.OpTypeExp, backends.OpTypeLog, backends.OpTypeNeg, backends.OpTypeAbs,
		backends.OpTypeSqrt, backends.OpTypeRsqrt, backends.OpTypeSign, backends.OpTypeCos}
	binaryOps = []backends.OpType{backends.OpTypeAdd, backends.OpTypeSub, backends.OpTypeMul, backends.OpTypeDiv,
		backends.OpTypeMax, backends.OpTypeMin}
)

// unaryKernel computes y[i] = op(x[i]) with the expression SimpleGo's executor uses (each case is
// its own loop so that the compiler inlines the expression).
func unaryKernel[T float32 | float64](op backends.OpType, x, y []T) {
	switch op {
	case backends.OpTypeExp:
		if xs, ok := any(x).([]float32); ok {
			ys := any(y).([]float32)
			done := simd.Exp32(xs, ys) // fastmath.Exp32's computation on vectors: the same bits
			for i, v := range xs[done:] {
				ys[done+i] = fastmath.Exp32(v)
			}
			return
		}
		for i, v := range x {
			y[i] = T(math.Exp(float64(v)))
		}
	case backends.OpTypeLog:
		for i, v := range x {
			y[i] = T(math.Log(float64(v)))
		}
	case backends.OpTypeCos:
		for i, v := range x {
			y[i] = T(math.Cos(float64(v)))
		}
	case backends.OpTypeNeg:
		for i, v := range x {
			y[i] = -v
		}
	case backends.OpTypeAbs:
		// SimpleGo's expression: -0 and NaN keep their sign (math.Abs would clear it).
		for i, v := range x {
			if v < 0 {
				v = -v
			}
			y[i] = v
		}
	case backends.OpTypeSqrt:
		for i, v := range x {
			y[i] = T(math.Sqrt(float64(v)))
		}
	case backends.OpTypeRsqrt:
		for i, v := range x {
			y[i] = T(1.0 / math.Sqrt(float64(v)))
		}
	case backends.OpTypeSign:
		switch x := any(x).(type) {
		case []float32:
			sign32(x, any(y).([]float32))
		case []float64:
			sign64(x, any(y).([]float64))
		}
	}
}

// sign32 is SimpleGo's Sign (-1, +1, or +0 for zeros and NaN) without branches: the sign bit of x
// on the bits of 1.0, cleared where x is ±0 or NaN. Sign of random data (the gradient of ReLU and of
// absolute values) defeats branch prediction, which made the branchy loop a tenth of a LeNet step.
func sign32(x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		b := math.Float32bits(v)
		abs := b & 0x7fffffff
		zero := uint32(int32(abs-1)>>31) | uint32(int32(0x7f800000-abs)>>31) // abs == 0, or NaN
		y[i] = math.Float32frombits(((b & 0x80000000) | 0x3f800000) &^ zero)
	}
}

// sign64 is sign32 for float64.
func sign64(x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		b := math.Float64bits(v)
		abs := b & 0x7fffffffffffffff
		zero := uint64(int64(abs-1)>>63) | uint64(int64(0x7ff0000000000000-abs)>>63)
		y[i] = math.Float64frombits(((b & 0x8000000000000000) | 0x3ff0000000000000) &^ zero)
	}
}

// binaryKernel computes out[i] = op(a[i], b[i]) with SimpleGo's expression, where a or b may hold a
// single value.
func binaryKernel[T float32 | float64](op backends.OpType, a, b, out []T) {
	if out32, ok := any(out).([]float32); ok && simd.Available {
		// The vector kernels do the multiples of 8 (same bits: see package simd); the loops below
		// the rest.
		done := binarySIMD(op, any(a).([]float32), any(b).([]float32), out32)
		if done == len(out) {
			return
		}
		if len(a) != 1 || len(b) == 1 {
			a = a[done:]
		}
		if len(b) != 1 {
			b = b[done:]
		}
		out = out[done:] // a remainder of one element reads as two single values below: same result
	}
	switch {
	case len(a) == 1 && len(b) != 1:
		c := a[0]
		switch op {
		case backends.OpTypeAdd:
			for i, v := range b {
				out[i] = c + v
			}
		case backends.OpTypeSub:
			for i, v := range b {
				out[i] = c - v
			}
		case backends.OpTypeMul:
			for i, v := range b {
				out[i] = c * v
			}
		case backends.OpTypeDiv:
			for i, v := range b {
				out[i] = c / v
			}
		case backends.OpTypeMax:
			for i, v := range b {
				out[i] = max(c, v)
			}
		case backends.OpTypeMin:
			for i, v := range b {
				out[i] = min(c, v)
			}
		}
	case len(b) == 1:
		c := b[0]
		switch op {
		case backends.OpTypeAdd:
			for i, v := range a {
				out[i] = v + c
			}
		case backends.OpTypeSub:
			for i, v := range a {
				out[i] = v - c
			}
		case backends.OpTypeMul:
			for i, v := range a {
				out[i] = v * c
			}
		case backends.OpTypeDiv:
			for i, v := range a {
				out[i] = v / c
			}
		case backends.OpTypeMax:
			for i, v := range a {
				out[i] = max(v, c)
			}
		case backends.OpTypeMin:
			for i, v := range a {
				out[i] = min(v, c)
			}
		}
	default:
		b = b[:len(a)]
		out = out[:len(a)]
		switch op {
		case backends.OpTypeAdd:
			for i, v := range a {
				out[i] = v + b[i]
			}
		case backends.OpTypeSub:
			for i, v := range a {
				out[i] = v - b[i]
			}
		case backends.OpTypeMul:
			for i, v := range a {
				out[i] = v * b[i]
			}
		case backends.OpTypeDiv:
			for i, v := range a {
				out[i] = v / b[i]
			}
		case backends.OpTypeMax:
			for i, v := range a {
				out[i] = max(v, b[i])
			}
		case backends.OpTypeMin:
			for i, v := range a {
				out[i] = min(v, b[i])
			}
		}
	}
}

// simdOps maps the binary ops to the vector kernels of package simd.
var simdOps = map[backends.OpType]simd.Op{backends.OpTypeAdd: simd.Add, backends.OpTypeSub: simd.Sub,
	backends.OpTypeMul: simd.Mul, backends.OpTypeDiv: simd.Div, backends.OpTypeMax: simd.Max,
	backends.OpTypeMin: simd.Min}

// binarySIMD runs binaryKernel's float32 op on the vector kernels, for as many elements as they take
// (a multiple of 8), and returns that number.
func binarySIMD(op backends.OpType, a, b, out []float32) int {
	sop, ok := simdOps[op]
	if !ok {
		return 0
	}
	switch {
	case len(a) == 1 && len(b) != 1:
		return simd.SV(sop, a[0], b, out)
	case len(b) == 1:
		return simd.VS(sop, a, b[0], out)
	default:
		return simd.VV(sop, a, b, out)
	}
}

// unaryOutput returns the buffer to write a unary op's result into: the input itself when the
// executor owns it (SimpleGo's convention: inputs[0] = nil tells it the buffer was taken over).
func unaryOutput(backend *simplego.Backend, inputs []*simplego.Buffer, owned []bool) *simplego.Buffer {
	if owned[0] {
		out := inputs[0]
		inputs[0] = nil
		return out
	}
	return getBufferForShape(backend, bufferShape(inputs[0]))
}

// execUnary runs the unary ops of unaryOps.
func execUnary(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	op := mirrorNode(node).opType
	in := inputs[0]
	dtype := bufferShape(in).DType
	if !isOurs(backend) || (dtype != dtypes.Float32 && dtype != dtypes.Float64) {
		return stock.elementwise[op](backend, node, inputs, owned)
	}
	out := unaryOutput(backend, inputs, owned)
	chunk := elemChunk
	if op == backends.OpTypeLog || op == backends.OpTypeCos {
		chunk = costlyChunk
	}
	if dtype == dtypes.Float32 {
		x, _ := flatOf[float32](in)
		y, _ := flatOf[float32](out)
		parallelChunks(len(x), chunk, func(lo, hi int) { unaryKernel(op, x[lo:hi], y[lo:hi]) })
	} else {
		x, _ := flatOf[float64](in)
		y, _ := flatOf[float64](out)
		parallelChunks(len(x), chunk, func(lo, hi int) { unaryKernel(op, x[lo:hi], y[lo:hi]) })
	}
	return out, nil
}

// execBinary runs the binary ops of binaryFns when both operands have the output's shape or one is
// a single value.
func execBinary(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	op := mirrorNode(node).opType
	outShape := nodeShape(node)
	ls, rs := bufferShape(inputs[0]), bufferShape(inputs[1])
	if !isOurs(backend) || (outShape.DType != dtypes.Float32 && outShape.DType != dtypes.Float64) ||
		!broadcastable(ls, outShape) || !broadcastable(rs, outShape) {
		return stock.elementwise[op](backend, node, inputs, owned)
	}
	lhs, rhs := inputs[0], inputs[1]
	// A bias (an operand that varies only along trailing axes, [1, ..., 1, C...], or a per-client
	// bias [K, 1, ..., 1, C...]) is applied period by period, without expanding it.
	for _, c := range [2]struct{ x, bias int }{{0, 1}, {1, 0}} {
		x := inputs[c.x]
		if !bufferShape(x).Equal(outShape) {
			continue
		}
		groups, period := biasLayout(bufferShape(inputs[c.bias]), outShape)
		// A single value per block is left to the loops below, and so are many short blocks (a
		// per-row value [K, B, 1] of log-softmax): each block is a call of its own.
		if period < 2 || (groups > 1 && outShape.Size()/groups < minBiasBlock) {
			continue
		}
		out := x
		if owned[c.x] {
			inputs[c.x] = nil
		} else {
			out = getBufferForShape(backend, outShape)
		}
		swapped := c.bias == 0 // op(bias, x)
		if outShape.DType == dtypes.Float32 {
			periodicGroups[float32](op, x, inputs[c.bias], out, groups, period, swapped)
		} else {
			periodicGroups[float64](op, x, inputs[c.bias], out, groups, period, swapped)
		}
		return out, nil
	}
	// An operand broadcast along some axes (a bias, a per-client scale) is expanded first with
	// runs of copies; the op is then element-wise.
	var expanded []*simplego.Buffer
	expand := func(b *simplego.Buffer) *simplego.Buffer {
		s := bufferShape(b)
		if s.Size() == 1 || s.Equal(outShape) {
			return b
		}
		e := getBufferForShape(backend, outShape)
		if outShape.DType == dtypes.Float32 {
			broadcastRuns[float32](b, e, iotaInts(s.Rank()))
		} else {
			broadcastRuns[float64](b, e, iotaInts(s.Rank()))
		}
		expanded = append(expanded, e)
		return e
	}
	lhs, rhs = expand(lhs), expand(rhs)
	defer func() {
		for _, e := range expanded {
			putBuffer(backend, e)
		}
	}()
	var out *simplego.Buffer
	switch {
	case owned[1] && rs.Equal(outShape):
		out, inputs[1] = rhs, nil
	case owned[0] && ls.Equal(outShape):
		out, inputs[0] = lhs, nil
	default:
		out = getBufferForShape(backend, outShape)
	}
	if outShape.DType == dtypes.Float32 {
		binaryParallel[float32](op, lhs, rhs, out)
	} else {
		binaryParallel[float64](op, lhs, rhs, out)
	}
	return out, nil
}

// biasLayout describes s, an operand broadcast to out, as a bias: out's shape with a run of middle
// axes reduced to 1 (at least one of them broadcast) after groups leading axes kept whole (the
// clients of a per-client bias [K, 1, 1, 1, C] of an activation [K, B, H, W, C]; none for a shared
// bias [1, 1, 1, C]). Its values then repeat with period along each of the groups' blocks of the flat
// output, block g using values [g*period, (g+1)*period). period is 0 when s is not such a bias.
func biasLayout(s, out shapes.Shape) (groups, period int) {
	if s.Rank() != out.Rank() || s.Size() == out.Size() {
		return 0, 0
	}
	a := 0
	for a < s.Rank() && s.Dimensions[a] == out.Dimensions[a] && out.Dimensions[a] != 1 {
		a++
	}
	groups = sizeOf(s.Dimensions[:a])
	for a < s.Rank() && s.Dimensions[a] == 1 {
		a++
	}
	for b := a; b < s.Rank(); b++ {
		if s.Dimensions[b] != out.Dimensions[b] {
			return 0, 0
		}
	}
	return groups, sizeOf(s.Dimensions[a:])
}

// minBiasBlock is the smallest block of a per-client bias applied period by period (biasLayout).
const minBiasBlock = 4096

// periodicGroups computes out = op(x, p) element-wise (op(p, x) when swapped), where out's flat
// data is groups blocks of equal size and p holds one period per block, repeating along it (see
// biasLayout). The expression per element is SimpleGo's, so the result is the same as with p
// expanded.
func periodicGroups[T float32 | float64](op backends.OpType, xBuf, pBuf, outBuf *simplego.Buffer, groups, period int, swapped bool) {
	x, _ := flatOf[T](xBuf)
	p, _ := flatOf[T](pBuf)
	out, _ := flatOf[T](outBuf)
	block := len(x) / groups
	for g := range groups {
		periodicParallel(op, x[g*block:(g+1)*block], p[g*period:(g+1)*period], out[g*block:(g+1)*block], swapped)
	}
}

// periodicParallel computes out = op(x, p) element-wise, where p repeats with its length along x
// (or op(p, x) when swapped), on both cores in chunks of whole periods that depend only on the
// lengths.
func periodicParallel[T float32 | float64](op backends.OpType, x, p, out []T, swapped bool) {
	period := len(p)
	// A short period is repeated into a block of about a thousand elements, so that the kernel
	// runs long loops.
	if reps := 1024 / period; reps > 1 {
		block := make([]T, 0, reps*period)
		for range reps {
			block = append(block, p...)
		}
		p, period = block, len(block)
	}
	n := len(x)
	perChunk := max(1, elemChunk/period) * period
	chunks := (n + perChunk - 1) / perChunk
	run := func(c int) {
		for lo := c * perChunk; lo < min(n, (c+1)*perChunk); lo += period {
			hi := min(n, lo+period)
			xs, ys, ps := x[lo:hi], out[lo:hi], p[:hi-lo]
			if swapped {
				binaryKernel(op, ps, xs, ys)
			} else {
				binaryKernel(op, xs, ps, ys)
			}
		}
	}
	if chunks == 1 {
		run(0)
		return
	}
	parallelDo(chunks, run)
}

// broadcastable reports whether s can be broadcast to out by SimpleGo's implicit binary-op
// broadcasting: a single value, or the same rank with each dimension equal or 1.
func broadcastable(s, out shapes.Shape) bool {
	if s.Size() == 1 {
		return true
	}
	if s.Rank() != out.Rank() {
		return false
	}
	for a, d := range s.Dimensions {
		if d != out.Dimensions[a] && d != 1 {
			return false
		}
	}
	return true
}

// binaryParallel computes out = op(a, b) element-wise on both cores; a or b may be a single value.
func binaryParallel[T float32 | float64](op backends.OpType, aBuf, bBuf, outBuf *simplego.Buffer) {
	a, _ := flatOf[T](aBuf)
	b, _ := flatOf[T](bBuf)
	out, _ := flatOf[T](outBuf)
	parallelRange(len(out), func(lo, hi int) { binaryKernel(op, chunkOf(a, lo, hi), chunkOf(b, lo, hi), out[lo:hi]) })
}

// chunkOf is x[lo:hi], or x itself when it holds a single value (an operand repeated over the output).
func chunkOf[T any](x []T, lo, hi int) []T {
	if len(x) == 1 {
		return x
	}
	return x[lo:hi]
}

// execBroadcastInDim broadcasts with runs: the output is walked over its leading axes, and each
// run along the trailing axes is either a copy of a contiguous block of the operand or the
// repetition of one of its values.
func execBroadcastInDim(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	axes, ok := nodeData(node).([]int)
	for i := 1; ok && i < len(axes); i++ {
		ok = axes[i] > axes[i-1] // the operand's axes keep their order in the output
	}
	if !ok || !isOurs(backend) {
		return stock.broadcastInDim(backend, node, inputs, owned)
	}
	outShape := nodeShape(node)
	out := getBufferForShape(backend, outShape)
	in := inputs[0]
	switch outShape.DType {
	case dtypes.Float32:
		broadcastRuns[float32](in, out, axes)
	case dtypes.Float64:
		broadcastRuns[float64](in, out, axes)
	case dtypes.Bool:
		broadcastRuns[bool](in, out, axes)
	case dtypes.Int32:
		broadcastRuns[int32](in, out, axes)
	case dtypes.Int64:
		broadcastRuns[int64](in, out, axes)
	default:
		putBuffer(backend, out)
		return stock.broadcastInDim(backend, node, inputs, owned)
	}
	return out, nil
}

// broadcastRuns fills out with the operand broadcast along the output axes not in axes (operand
// axis i becomes output axis axes[i]).
func broadcastRuns[T any](inBuf, outBuf *simplego.Buffer, axes []int) {
	x, _ := flatOf[T](inBuf)
	y, _ := flatOf[T](outBuf)
	outDims := bufferShape(outBuf).Dimensions
	rank := len(outDims)
	if len(x) == 1 {
		v := x[0]
		parallelRange(len(y), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				y[i] = v
			}
		})
		return
	}
	// Operand stride of each output axis (0 where the output broadcasts).
	inDims := make([]int, rank)
	for i := range inDims {
		inDims[i] = 1
	}
	for i, a := range axes {
		inDims[a] = bufferShape(inBuf).Dimensions[i]
	}
	strides := spatialStrides(inDims, 1)
	for a, d := range inDims {
		if d == 1 {
			strides[a] = 0
		}
	}
	gatherInto(y, x, 0, outDims, strides)
}

// elementwiseOps are the op types whose executors execUnary and execBinary replace.
func elementwiseOps() []backends.OpType { return append(slices.Clone(unaryOps), binaryOps...) }
