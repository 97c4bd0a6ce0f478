package simplegoplus

import (
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// DynamicSlice takes the slice of size sliceDims starting at the run-time position startIndices (one
// integer scalar per axis), each start clamped to [0, dim-size] as in XLA. It is one Gather with a
// single index vector (SimpleGo's Gather clamps the same way).
func (b *Builder) DynamicSlice(operand backends.Op, startIndices []backends.Op, sliceDims []int) (out backends.Op, err error) {
	defer recoverOp("DynamicSlice", &out, &err)
	s := b.shape(operand)
	rank := s.Rank()
	if len(sliceDims) != rank {
		fail("%d slice dimensions for operand of shape %s", len(sliceDims), s)
	}
	for a, d := range sliceDims {
		if d < 0 || d > s.Dimensions[a] {
			fail("slice dimension %d of axis %d out of [0, %d]", d, a, s.Dimensions[a])
		}
	}
	starts := b.startIndices(startIndices, rank)
	if rank == 0 {
		return must(b.Identity(operand)), nil
	}
	all := iotaInts(rank)
	return must(b.Gather(operand, b.stack(starts), 0, all, nil, all, sliceDims, false)), nil
}

// DynamicUpdateSlice returns operand with update written at the run-time position startIndices (each
// start clamped to [0, dim-update] as in XLA): update is scattered (ScatterSum into zeros) and a mask
// built from Iota comparisons chooses it over the operand inside the updated box.
// A rank-0 operand is replaced by the update.
func (b *Builder) DynamicUpdateSlice(operand, update backends.Op, startIndices []backends.Op) (out backends.Op, err error) {
	defer recoverOp("DynamicUpdateSlice", &out, &err)
	s, u := b.shape(operand), b.shape(update)
	rank := s.Rank()
	if u.DType != s.DType || u.Rank() != rank {
		fail("update %s must have the operand's dtype and rank (operand %s)", u, s)
	}
	for a := range rank {
		if u.Dimensions[a] > s.Dimensions[a] {
			fail("update %s larger than operand %s on axis %d", u, s, a)
		}
	}
	if u.Size() == 0 {
		return must(b.Identity(operand)), nil
	}
	if rank == 0 {
		return must(b.Identity(update)), nil
	}
	starts := b.startIndices(startIndices, rank)
	idxShape := shapes.Make(dtypes.Int32, s.Dimensions...)
	var mask backends.Op
	for a := range rank {
		limit := b.scalarOf(dtypes.Int32, float64(s.Dimensions[a]-u.Dimensions[a]))
		starts[a] = must(b.Clamp(b.scalarOf(dtypes.Int32, 0), starts[a], limit))
		end := must(b.Add(starts[a], b.scalarOf(dtypes.Int32, float64(u.Dimensions[a]))))
		io := must(b.Iota(idxShape, a))
		in := must(b.LogicalAnd(
			must(b.GreaterOrEqual(io, must(b.BroadcastInDim(starts[a], idxShape, nil)))),
			must(b.LessThan(io, must(b.BroadcastInDim(end, idxShape, nil))))))
		if mask == nil {
			mask = in
		} else {
			mask = must(b.LogicalAnd(mask, in))
		}
	}
	// One scatter index per update element (start + offset): SimpleGo v0.26.0's ScatterSum misplaces
	// windows narrower than the operand on a non-leading axis, so every window here is one element.
	n := u.Size()
	offsets := make([]int32, 0, n*rank)
	for i := range n {
		rem := i
		idx := make([]int32, rank)
		for a := rank - 1; a >= 0; a-- {
			idx[a] = int32(rem % u.Dimensions[a])
			rem /= u.Dimensions[a]
		}
		offsets = append(offsets, idx...)
	}
	idxShape2 := shapes.Make(dtypes.Int32, n, rank)
	startsB := must(b.BroadcastInDim(b.stack(starts), idxShape2, []int{1}))
	indices := must(b.Add(must(b.Constant(offsets, n, rank)), startsB))
	flatUpdate := must(b.Reshape(update, n))
	all := iotaInts(rank)
	scattered := must(b.ScatterSum(b.zerosOf(s), indices, flatUpdate, 1, nil, all, all, true, true))
	return must(b.Where(mask, scattered, operand)), nil
}

// startIndices checks the start indices (integer scalars, one per axis) and converts them to Int32.
func (b *Builder) startIndices(ops []backends.Op, rank int) []backends.Op {
	if len(ops) != rank {
		fail("%d start indices for operand of rank %d", len(ops), rank)
	}
	out := make([]backends.Op, rank)
	for a, op := range ops {
		s := b.shape(op)
		if !s.IsScalar() || !s.DType.IsInt() {
			fail("start index %d must be an integer scalar, got %s", a, s)
		}
		out[a] = op
		if s.DType != dtypes.Int32 {
			out[a] = must(b.ConvertDType(op, dtypes.Int32))
		}
	}
	return out
}

// stack turns int32 scalars into a vector.
func (b *Builder) stack(scalars []backends.Op) backends.Op {
	parts := make([]backends.Op, len(scalars))
	for i, sc := range scalars {
		parts[i] = must(b.Reshape(sc, 1))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return must(b.Concatenate(0, parts...))
}

// iotaInts returns 0, 1, ..., n-1.
func iotaInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
