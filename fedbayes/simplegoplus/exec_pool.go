package simplegoplus

import (
	"math"
	"unsafe"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// tiledPool is a pooling whose windows tile the operand: window == stride on every axis, no
// padding, no dilation (every pooling layer of the fedbayes models). Elements past the last whole
// window are in no window.
type tiledPool struct {
	window []int
	isMax  bool
}

// poolNode is the data of the nodes this package adds for tiled pooling: the forward reduction
// (opTiledPool) and its gradient, SelectAndScatter (opSelectScatter).
type poolNode struct {
	tiledPool
}

// The op types of the pooling nodes this package creates; their executors are ours alone
// (SimpleGo has none for SelectAndScatter, and ReduceWindow nodes made by SimpleGo's builder carry
// SimpleGo's own data type and go to its executor).
const (
	opTiledPool     = backends.OpTypeReduceWindow
	opSelectScatter = backends.OpTypeSelectAndScatterMax
)

// tiledPoolNode adds a node that max- or min-pools x over tiled windows.
func (b *Builder) tiledPoolNode(x backends.Op, window []int, isMax bool) backends.Op {
	in := x.(*simplego.Node)
	s := nodeShape(in)
	dims := make([]int, s.Rank())
	for a := range dims {
		dims[a] = s.Dimensions[a] / window[a]
	}
	n := newNode(b.Builder, opTiledPool, shapes.Make(s.DType, dims...), in)
	mirrorNode(n).data = &poolNode{tiledPool{window: window, isMax: isMax}}
	return n
}

// selectScatterNode adds a node computing SelectAndScatterMax/Min over tiled windows.
func (b *Builder) selectScatterNode(operand, source backends.Op, window []int, isMax bool) backends.Op {
	op, src := operand.(*simplego.Node), source.(*simplego.Node)
	n := newNode(b.Builder, opSelectScatter, nodeShape(op), op, src)
	mirrorNode(n).data = &poolNode{tiledPool{window: window, isMax: isMax}}
	return n
}

// execTiledPool runs opTiledPool nodes, and SimpleGo's ReduceWindow for every other.
func execTiledPool(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	p, ok := nodeData(node).(*poolNode)
	if !ok {
		return stock.reduceWindow(backend, node, inputs, owned)
	}
	out := getBufferForShape(backend, nodeShape(node))
	switch bufferShape(inputs[0]).DType {
	case dtypes.Float32:
		poolForward[float32](p.tiledPool, inputs[0], out)
	case dtypes.Float64:
		poolForward[float64](p.tiledPool, inputs[0], out)
	default:
		putBuffer(backend, out)
		return nil, errDType("tiled pooling", bufferShape(inputs[0]).DType)
	}
	return out, nil
}

// execSelectScatter runs opSelectScatter nodes.
func execSelectScatter(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, _ []bool) (*simplego.Buffer, error) {
	p, ok := nodeData(node).(*poolNode)
	if !ok {
		return nil, errDType("SelectAndScatter (node not made by simplegoplus)", bufferShape(inputs[0]).DType)
	}
	out := getBufferForShape(backend, nodeShape(node))
	switch bufferShape(inputs[0]).DType {
	case dtypes.Float32:
		poolBackward[float32](p.tiledPool, inputs[0], inputs[1], out)
	case dtypes.Float64:
		poolBackward[float64](p.tiledPool, inputs[0], inputs[1], out)
	default:
		putBuffer(backend, out)
		return nil, errDType("SelectAndScatter", bufferShape(inputs[0]).DType)
	}
	return out, nil
}

// poolLayout splits a tiled pooling into loops: the trailing axes with window 1 form a contiguous
// run of run elements; the other axes are walked per output position and window tap.
type poolLayout struct {
	run        int   // elements in the contiguous trailing run
	outer      []int // output dims of the leading axes (up to the run)
	window     []int // window of the leading axes
	inStrides  []int // operand strides (in elements) of the leading axes
	outStrides []int // output strides of the leading axes
}

func newPoolLayout(in shapes.Shape, window []int) poolLayout {
	rank := in.Rank()
	lead := rank
	run := 1
	for lead > 0 && window[lead-1] == 1 {
		lead--
		run *= in.Dimensions[lead]
	}
	l := poolLayout{run: run, outer: make([]int, lead), window: window[:lead],
		inStrides: make([]int, lead), outStrides: make([]int, lead)}
	is, os := run, run
	for a := lead - 1; a >= 0; a-- {
		l.outer[a] = in.Dimensions[a] / window[a]
		l.inStrides[a], l.outStrides[a] = is, os
		is *= in.Dimensions[a]
		os *= l.outer[a]
	}
	return l
}

// forEachWindow calls fn(outOffset, tapOffsets) for every output position, where tapOffsets are the
// operand offsets of the window's taps in row-major window order. Blocks of output positions run
// on both cores: windows tile the operand, so no two calls touch the same output (or, for the
// gradient, the same operand position).
func (l poolLayout) forEachWindow(fn func(outOff int, taps []int)) {
	var shifted []int
	l.forEachRow(func(outOff int, taps []int, n, inStep, outStep int) {
		if cap(shifted) < len(taps) {
			shifted = make([]int, len(taps))
		}
		shifted = shifted[:len(taps)]
		for w := range n {
			for i, t := range taps {
				shifted[i] = t + w*inStep
			}
			fn(outOff+w*outStep, shifted)
		}
	})
}

// forEachRow calls fn(outOffset, tapOffsets, n, inStep, outStep) for every row of windows along the
// last pooled axis: the row's n windows have their outputs outStep apart and their taps inStep
// apart, the first one at outOffset and tapOffsets. One call per row instead of per window keeps
// the loops long when the run of channels is short (a LeNet pools 6 channels). Blocks of rows run on
// both cores; no two windows share an output or an operand position.
func (l poolLayout) forEachRow(fn func(outOff int, taps []int, n, inStep, outStep int)) {
	lead := len(l.outer)
	nTaps := sizeOf(l.window)
	// Offsets of the taps relative to the window's first element.
	rel := make([]int, 0, nTaps)
	t := make([]int, lead)
	for range nTaps {
		off := 0
		for a := range lead {
			off += t[a] * l.inStrides[a]
		}
		rel = append(rel, off)
		advance(t, l.window)
	}
	if lead == 0 {
		fn(0, rel, 1, 0, 0)
		return
	}
	last := lead - 1
	n, inStep, outStep := l.outer[last], l.window[last]*l.inStrides[last], l.outStrides[last]
	rows := sizeOf(l.outer[:last])
	perChunk := max(1, elemChunk/max(1, n*nTaps*l.run))
	parallelDo((rows+perChunk-1)/perChunk, func(c int) {
		r0, r1 := c*perChunk, min(rows, (c+1)*perChunk)
		taps := make([]int, nTaps)
		o := make([]int, last)
		for a, rest := last-1, r0; a >= 0; a-- {
			o[a], rest = rest%l.outer[a], rest/l.outer[a]
		}
		for range r1 - r0 {
			base, outOff := 0, 0
			for a := range last {
				base += o[a] * l.window[a] * l.inStrides[a]
				outOff += o[a] * l.outStrides[a]
			}
			for i, r := range rel {
				taps[i] = base + r
			}
			fn(outOff, taps, n, inStep, outStep)
			advance(o, l.outer)
		}
	})
}

// poolForward writes the max (or min) of every window of x into out.
func poolForward[T float32 | float64](p tiledPool, xBuf, outBuf *simplego.Buffer) {
	x, _ := flatOf[T](xBuf)
	out, _ := flatOf[T](outBuf)
	l := newPoolLayout(bufferShape(xBuf), p.window)
	if x32, ok := any(x).([]float32); ok && p.isMax {
		out32 := any(out).([]float32)
		l.forEachRow(func(o int, taps []int, n, inStep, outStep int) {
			w0 := 0
			if outStep == l.run { // the vector loop: all windows of the row but the last
				w0 = simd.MaxRow(x32, taps, n, inStep, l.run, out32[o:])
			}
			for w := w0; w < n; w++ {
				maxWindow32(x32, out32[o+w*outStep:o+w*outStep+l.run], taps, w*inStep)
			}
		})
		return
	}
	l.forEachWindow(func(o int, taps []int) {
		dst := out[o : o+l.run]
		copy(dst, x[taps[0]:taps[0]+l.run])
		for _, t := range taps[1:] {
			src := x[t : t+l.run]
			if p.isMax {
				for i, v := range src {
					if v > dst[i] {
						dst[i] = v
					}
				}
			} else {
				for i, v := range src {
					if v < dst[i] {
						dst[i] = v
					}
				}
			}
		}
	})
}

// poolBackward is SelectAndScatter over tiled windows: out is zero but at the first maximum (or
// minimum) of each window of x, in row-major window order, which gets the window's value of src.
// Elements in no window get zero.
func poolBackward[T float32 | float64](p tiledPool, xBuf, srcBuf, outBuf *simplego.Buffer) {
	x, _ := flatOf[T](xBuf)
	src, _ := flatOf[T](srcBuf)
	out, _ := flatOf[T](outBuf)
	clear(out)
	l := newPoolLayout(bufferShape(xBuf), p.window)
	if x32, ok := any(x).([]float32); ok && p.isMax {
		src32, out32 := any(src).([]float32), any(out).([]float32)
		l.forEachRow(func(o int, taps []int, n, inStep, outStep int) {
			// The vector loop does all windows of the row but the last, and may write past its runs
			// into the next window, which is cleared before the scalar loop writes it.
			w0 := simd.ArgmaxRow(x32, src32[o:], taps, n, inStep, l.run, outStep, out32)
			if w0 > 0 {
				for _, t := range taps {
					clear(out32[t+w0*inStep : t+w0*inStep+l.run])
				}
			}
			for w := w0; w < n; w++ {
				argmaxScatter32(x32, src32[o+w*outStep:o+w*outStep+l.run], out32, taps, w*inStep)
			}
		})
		return
	}
	l.forEachWindow(func(o int, taps []int) {
		for i := range l.run {
			best, arg := x[taps[0]+i], taps[0]+i
			for _, t := range taps[1:] {
				if v := x[t+i]; (p.isMax && v > best) || (!p.isMax && v < best) {
					best, arg = v, t+i
				}
			}
			out[arg] = src[o+i]
		}
	})
}

// maxWindow32 writes into dst (a run of l.run outputs) the max over the window's taps (shifted by
// shift), as poolForward does (the first value, then each later one that is greater), without
// branches: max pooling follows a ReLU, and which tap wins is as random as the data. The
// greater-than flag (a byte, 0 or 1) becomes a mask of bits that selects the new value.
func maxWindow32(x, dst []float32, taps []int, shift int) {
	run := len(dst)
	copy(dst, x[taps[0]+shift:taps[0]+shift+run])
	for _, t := range taps[1:] {
		src := x[t+shift : t+shift+run]
		for i, v := range src {
			d := dst[i]
			gt := v > d
			m := -uint32(*(*uint8)(unsafe.Pointer(&gt)))
			dst[i] = math.Float32frombits(math.Float32bits(v)&m | math.Float32bits(d)&^m)
		}
	}
}

// argmaxScatter32 is poolBackward's loop for float32 max pooling without branches: for each of the
// run's positions, the first maximum of the window (the first value, then each later one that is
// greater) gets the window's gradient src[i]; the index is selected with the same mask as the value.
// The window's taps are shifted by shift.
func argmaxScatter32(x, src, out []float32, taps []int, shift int) {
	for i, g := range src {
		i := i + shift
		best, arg := math.Float32bits(x[taps[0]+i]), uint(taps[0]+i)
		for _, t := range taps[1:] {
			v := x[t+i]
			gt := v > math.Float32frombits(best)
			m := -uint32(*(*uint8)(unsafe.Pointer(&gt)))
			best = math.Float32bits(v)&m | best&^m
			arg = uint(t+i)&uint(int(int32(m))) | arg&^uint(int(int32(m)))
		}
		out[arg] = g
	}
}
