package simplegoplus

import (
	"slices"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// reduceOps are the reductions execReduce replaces.
var reduceOps = []backends.OpType{backends.OpTypeReduceSum, backends.OpTypeReduceMax, backends.OpTypeReduceMin}

// execReduce computes a float32/float64 ReduceSum, ReduceMax or ReduceMin over a contiguous block of
// axes, seen as [outer, reduced, inner]: every output element accumulates its inputs in increasing
// order of the reduced index from SimpleGo's initial value, as SimpleGo's executor does, so the
// result is bit-identical; the work is split over outer or inner blocks on both cores, and rows are
// added as vectors instead of through SimpleGo's per-element index iterator. Reductions over axes
// that are not contiguous go to SimpleGo.
func execReduce(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	op := mirrorNode(node).opType
	axes, ok := nodeData(node).([]int)
	in := bufferShape(inputs[0])
	if !ok || !isOurs(backend) || len(axes) == 0 || (in.DType != dtypes.Float32 && in.DType != dtypes.Float64) {
		return stock.reduce[op](backend, node, inputs, owned)
	}
	sorted := slices.Sorted(slices.Values(axes))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] != sorted[i-1]+1 {
			return stock.reduce[op](backend, node, inputs, owned)
		}
	}
	first, last := sorted[0], sorted[len(sorted)-1]
	outer, red, inner := sizeOf(in.Dimensions[:first]), sizeOf(in.Dimensions[first:last+1]), sizeOf(in.Dimensions[last+1:])
	out := getBufferForShape(backend, nodeShape(node))
	if in.DType == dtypes.Float32 {
		reduceBlocks[float32](op, inputs[0], out, outer, red, inner)
	} else {
		reduceBlocks[float64](op, inputs[0], out, outer, red, inner)
	}
	return out, nil
}

// reduceBlocks reduces x [outer, red, inner] over its middle axis into out [outer, inner].
func reduceBlocks[T float32 | float64](op backends.OpType, xBuf, outBuf *simplego.Buffer, outer, red, inner int) {
	x, _ := flatOf[T](xBuf)
	out, _ := flatOf[T](outBuf)
	dtype := bufferShape(xBuf).DType
	var init T
	switch op {
	case backends.OpTypeReduceMax:
		init = dtype.LowestValue().(T)
	case backends.OpTypeReduceMin:
		init = dtype.HighestValue().(T)
	}
	// One piece: outer rows [o0, o1) and inner columns [i0, i1).
	piece := func(o0, o1, i0, i1 int) {
		if inner == 1 { // reduction over trailing axes: one sequential fold per output
			for o := o0; o < o1; o++ {
				acc := init
				for _, v := range x[o*red : (o+1)*red] {
					switch op {
					case backends.OpTypeReduceSum:
						acc += v
					case backends.OpTypeReduceMax:
						acc = max(acc, v)
					case backends.OpTypeReduceMin:
						acc = min(acc, v)
					}
				}
				out[o] = acc
			}
			return
		}
		for o := o0; o < o1; o++ {
			dst := out[o*inner+i0 : o*inner+i1]
			for i := range dst {
				dst[i] = init
			}
			if op == backends.OpTypeReduceSum && sumRows32(x, dst, (o*red)*inner+i0, red, inner) {
				continue
			}
			for r := range red {
				src := x[(o*red+r)*inner+i0 : (o*red+r)*inner+i1]
				switch op {
				case backends.OpTypeReduceSum:
					for i, v := range src {
						dst[i] += v
					}
				case backends.OpTypeReduceMax:
					for i, v := range src {
						dst[i] = max(dst[i], v)
					}
				case backends.OpTypeReduceMin:
					for i, v := range src {
						dst[i] = min(dst[i], v)
					}
				}
			}
		}
	}
	total := outer * red * inner
	switch {
	case total <= elemChunk:
		piece(0, outer, 0, inner)
	case outer >= 2 && inner < elemChunk:
		rows := max(1, elemChunk/(red*inner))
		parallelDo((outer+rows-1)/rows, func(c int) { piece(c*rows, min(outer, (c+1)*rows), 0, inner) })
	default:
		cols := max(256, elemChunk/max(1, red))
		for o := range outer {
			parallelDo((inner+cols-1)/cols, func(c int) { piece(o, o+1, c*cols, min(inner, (c+1)*cols)) })
		}
	}
}

// sumRowsTile is how many rows sumRows32 adds per call: the vector loop walks a tile's rows once
// per block of 8 columns, so a tile of 256 rows stays in the cache between the walks when its rows
// are narrow (a bias gradient's: 16 KiB for 16 channels); wider rows, which the tile does not
// limit, get less of that reuse but the same sums.
const sumRowsTile = 256

// sumRows32 adds the red rows of x that start at offset off, stride apart, into dst (width len(dst))
// on the vector loop of package simd, rows in increasing order as the scalar loop does (same bits),
// and reports whether it did (x is float32 and the vector kernels are available).
func sumRows32[T float32 | float64](x, dst []T, off, red, stride int) bool {
	x32, ok := any(x).([]float32)
	d32, _ := any(dst).([]float32)
	if !ok || !simd.Available || red <= 0 || stride < len(d32) || len(x32) < off+(red-1)*stride+len(d32) {
		return false
	}
	// With the lengths checked above, no tile is refused.
	for r0 := 0; r0 < red; r0 += sumRowsTile {
		simd.SumRows(x32[off+r0*stride:], min(sumRowsTile, red-r0), stride, d32)
	}
	return true
}
