package simplegoplus

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
)

// Reverse reverses the order of the elements of x along the given axes (XLA's Reverse; GoMLX needs it
// for the gradient of a convolution with respect to its input, which convolves with the flipped
// kernel).
//
// It is one Gather whose start indices are a constant table of the reversed positions of the reversed
// axes: those axes are collapsed and come back, in the same place, as the Gather's batch axes, while
// every other axis is taken whole as an offset axis.
func (b *Builder) Reverse(x backends.Op, axes ...int) (out backends.Op, err error) {
	defer recoverOp("Reverse", &out, &err)
	s := b.shape(x)
	rank := s.Rank()
	seen := make([]bool, rank)
	var rev []int // axes that really need reversing, sorted
	for _, a := range axes {
		if a < 0 || a >= rank {
			fail("axis %d out of range for operand of shape %s", a, s)
		}
		if seen[a] {
			fail("axis %d given twice in %v", a, axes)
		}
		seen[a] = true
		if s.Dimensions[a] > 1 {
			rev = append(rev, a)
		}
	}
	if len(rev) == 0 || s.Size() == 0 {
		return must(b.Identity(x)), nil
	}
	slices.Sort(rev)

	// Start indices: shape [d(rev[0]), ..., d(rev[k-1]), k], holding the mirrored position of each
	// reversed axis, in row-major order of the reversed axes.
	k := len(rev)
	revDims := make([]int, k)
	for i, a := range rev {
		revDims[i] = s.Dimensions[a]
	}
	n := sizeOf(revDims)
	flat := make([]int32, 0, n*k)
	idx := make([]int, k)
	for range n {
		for i, a := range rev {
			flat = append(flat, int32(s.Dimensions[a]-1-idx[i]))
		}
		advance(idx, revDims)
	}
	indices := must(b.Constant(flat, append(slices.Clone(revDims), k)...))

	var offsetAxes []int
	sliceSizes := slices.Clone(s.Dimensions)
	for a := range rank {
		if slices.Contains(rev, a) {
			sliceSizes[a] = 1
		} else {
			offsetAxes = append(offsetAxes, a)
		}
	}
	return must(b.Gather(x, indices, k, offsetAxes, rev, rev, sliceSizes, false)), nil
}
