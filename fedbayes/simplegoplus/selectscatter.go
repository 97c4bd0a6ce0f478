package simplegoplus

import (
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// SelectAndScatterMax is XLA's SelectAndScatter with a "greater or equal" selection: for every window
// of the operand (as in ReduceWindow with these window dimensions, strides and paddings) the matching
// value of source is added at the position of the window's maximum. GoMLX emits it for the gradient
// of max-pooling. Ties go to the first maximum in row-major window order, padding is never selected.
func (b *Builder) SelectAndScatterMax(operand, source backends.Op, windowDimensions, windowStrides []int, paddings [][2]int) (out backends.Op, err error) {
	defer recoverOp("SelectAndScatterMax", &out, &err)
	return b.selectAndScatter(operand, source, windowDimensions, windowStrides, paddings, true), nil
}

// SelectAndScatterMin is SelectAndScatterMax selecting each window's minimum (gradient of min-pooling).
func (b *Builder) SelectAndScatterMin(operand, source backends.Op, windowDimensions, windowStrides []int, paddings [][2]int) (out backends.Op, err error) {
	defer recoverOp("SelectAndScatterMin", &out, &err)
	return b.selectAndScatter(operand, source, windowDimensions, windowStrides, paddings, false), nil
}

// selectAndScatter validates the arguments and picks the tiled fast path (windows that neither
// overlap nor need padding: every pooling layer of the fedbayes models) or the general one.
func (b *Builder) selectAndScatter(operand, source backends.Op, window, strides []int, paddings [][2]int, isMax bool) backends.Op {
	s, src := b.shape(operand), b.shape(source)
	rank := s.Rank()
	if src.DType != s.DType || src.Rank() != rank {
		fail("source %s must have the operand's dtype and rank (operand %s)", src, s)
	}
	if len(window) != rank {
		fail("%d window dimensions for operand of rank %d", len(window), rank)
	}
	if len(strides) == 0 {
		strides = slices.Repeat([]int{1}, rank)
	}
	if len(strides) != rank {
		fail("%d window strides for operand of rank %d", len(strides), rank)
	}
	if len(paddings) != 0 && len(paddings) != rank {
		fail("%d paddings for operand of rank %d", len(paddings), rank)
	}
	padded := false
	lo, hi := make([]int, rank), make([]int, rank)
	for a := range rank {
		if window[a] < 1 || strides[a] < 1 {
			fail("axis %d: window %d and stride %d must be >= 1", a, window[a], strides[a])
		}
		if len(paddings) > 0 {
			lo[a], hi[a] = paddings[a][0], paddings[a][1]
			if lo[a] < 0 || hi[a] < 0 {
				fail("axis %d: negative padding %v", a, paddings[a])
			}
			padded = padded || lo[a] > 0 || hi[a] > 0
		}
		pd := s.Dimensions[a] + lo[a] + hi[a]
		want := 0
		if pd >= window[a] {
			want = (pd-window[a])/strides[a] + 1
		}
		if src.Dimensions[a] != want {
			fail("source %s does not match the %d windows of axis %d (operand %s, window %v, strides %v, paddings %v)",
				src, want, a, s, window, strides, paddings)
		}
	}
	if src.Size() == 0 || s.Size() == 0 {
		return b.zerosOf(s)
	}
	if !padded && slices.Equal(window, strides) {
		if directPooling && (s.DType == dtypes.Float32 || s.DType == dtypes.Float64) {
			return b.selectScatterNode(operand, source, slices.Clone(window), isMax)
		}
		return b.selectAndScatterTiled(operand, source, window, isMax)
	}
	return b.selectAndScatterGeneral(operand, source, window, strides, lo, hi, isMax)
}

// selectAndScatterTiled handles windows equal to strides without padding. The covered part of the
// operand is reshaped to [n0, w0, n1, w1, ...], so each window is a block of the odd axes: the
// window's extreme is a reduction, the first position holding it is a ReduceMin over the positions
// that match, and source lands there through one Where. Elements no window covers get zero.
func (b *Builder) selectAndScatterTiled(operand, source backends.Op, window []int, isMax bool) backends.Op {
	s, src := b.shape(operand), b.shape(source)
	rank := s.Rank()
	covered := make([]int, rank)
	inter := make([]int, 0, 2*rank)
	var gridAxes, windowAxes []int
	for a := range rank {
		covered[a] = src.Dimensions[a] * window[a]
		gridAxes = append(gridAxes, 2*a)
		windowAxes = append(windowAxes, 2*a+1)
		inter = append(inter, src.Dimensions[a], window[a])
	}
	x := operand
	if !slices.Equal(covered, s.Dimensions) {
		x = b.slice(x, make([]int, rank), covered)
	}
	interShape := shapes.Make(s.DType, inter...)
	xi := must(b.Reshape(x, inter...))
	var ext backends.Op
	if isMax {
		ext = must(b.ReduceMax(xi, windowAxes...))
	} else {
		ext = must(b.ReduceMin(xi, windowAxes...))
	}
	eq := must(b.Equal(xi, must(b.BroadcastInDim(ext, interShape, gridAxes))))

	// Row-major position of each element inside its window, broadcast over the grid.
	nWin := sizeOf(window)
	pos := make([]int32, nWin)
	for i := range pos {
		pos[i] = int32(i)
	}
	posShape := shapes.Make(dtypes.Int32, inter...)
	posB := must(b.BroadcastInDim(must(b.Constant(pos, window...)), posShape, windowAxes))
	cand := must(b.Where(eq, posB, b.scalarOf(dtypes.Int32, float64(nWin))))
	first := must(b.ReduceMin(cand, windowAxes...))
	sel := must(b.Equal(posB, must(b.BroadcastInDim(first, posShape, gridAxes))))
	srcB := must(b.BroadcastInDim(source, interShape, gridAxes))
	res := must(b.Where(sel, srcB, b.scalarOf(s.DType, 0)))
	res = must(b.Reshape(res, covered...))
	if !slices.Equal(covered, s.Dimensions) {
		cfg := make([]backends.PadAxis, rank)
		for a := range rank {
			cfg[a].End = s.Dimensions[a] - covered[a]
		}
		res = must(b.Pad(res, b.scalarOf(s.DType, 0), cfg...))
	}
	return res
}

// selectAndScatterGeneral handles overlapping windows and padding. For each of the window's
// positions it takes the strided slice of the (padded) operand that this position sees in every
// window; the first slice equal to the windows' extreme (and not in the padding) is selected, and
// source is put back at that position with an interior-and-edge Pad, then summed and un-padded.
func (b *Builder) selectAndScatterGeneral(operand, source backends.Op, window, strides, lo, hi []int, isMax bool) backends.Op {
	s, src := b.shape(operand), b.shape(source)
	rank := s.Rank()
	padDims := make([]int, rank)
	padCfg := make([]backends.PadAxis, rank)
	anyPad := false
	for a := range rank {
		padDims[a] = s.Dimensions[a] + lo[a] + hi[a]
		padCfg[a] = backends.PadAxis{Start: lo[a], End: hi[a]}
		anyPad = anyPad || lo[a] > 0 || hi[a] > 0
	}
	p, valid := operand, backends.Op(nil)
	if anyPad {
		fillValue := s.DType.HighestValue()
		if isMax {
			fillValue = s.DType.LowestValue()
		}
		p = must(b.Pad(operand, b.scalarAny(s.DType, fillValue), padCfg...))
		trueOp := b.broadcastScalar(must(b.Constant([]bool{true})), s.Dimensions)
		valid = must(b.Pad(trueOp, must(b.Constant([]bool{false})), padCfg...))
	}

	offsets := windowOffsets(window)
	views := make([]backends.Op, len(offsets))
	views2 := make([]backends.Op, len(offsets))
	for i, off := range offsets {
		starts, limits := make([]int, rank), make([]int, rank)
		for a := range rank {
			starts[a] = off[a]
			limits[a] = off[a] + (src.Dimensions[a]-1)*strides[a] + 1
		}
		views[i] = must(b.Slice(p, starts, limits, strides))
		if valid != nil {
			views2[i] = must(b.Slice(valid, starts, limits, strides))
		}
	}
	ext := views[0]
	for _, v := range views[1:] {
		if isMax {
			ext = must(b.Max(ext, v))
		} else {
			ext = must(b.Min(ext, v))
		}
	}
	zero := b.scalarOf(s.DType, 0)
	var taken, acc backends.Op
	for i, off := range offsets {
		eq := must(b.Equal(views[i], ext))
		if valid != nil {
			eq = must(b.LogicalAnd(eq, views2[i]))
		}
		sel := eq
		if taken != nil {
			sel = must(b.LogicalAnd(eq, must(b.LogicalNot(taken))))
			taken = must(b.LogicalOr(taken, eq))
		} else {
			taken = eq
		}
		contrib := must(b.Where(sel, source, zero))
		place := make([]backends.PadAxis, rank)
		for a := range rank {
			last := off[a] + (src.Dimensions[a]-1)*strides[a]
			place[a] = backends.PadAxis{Start: off[a], End: padDims[a] - 1 - last, Interior: strides[a] - 1}
		}
		placed := must(b.Pad(contrib, zero, place...))
		if acc == nil {
			acc = placed
		} else {
			acc = must(b.Add(acc, placed))
		}
	}
	if anyPad {
		limits := make([]int, rank)
		for a := range rank {
			limits[a] = lo[a] + s.Dimensions[a]
		}
		acc = b.slice(acc, lo, limits)
	}
	return acc
}

// windowOffsets lists every position inside a window, in row-major order.
func windowOffsets(window []int) [][]int {
	n := sizeOf(window)
	out := make([][]int, 0, n)
	idx := make([]int, len(window))
	for range n {
		out = append(out, slices.Clone(idx))
		advance(idx, window)
	}
	return out
}

// scalarAny returns a scalar constant of dtype holding v, a Go value convertible to dtype's Go type.
func (b *Builder) scalarAny(dtype dtypes.DType, v any) backends.Op {
	goType := dtype.GoType()
	flat := reflect.MakeSlice(reflect.SliceOf(goType), 1, 1)
	flat.Index(0).Set(reflect.ValueOf(v).Convert(goType))
	return must(b.Constant(flat.Interface()))
}
