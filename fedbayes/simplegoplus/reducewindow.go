package simplegoplus

import (
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/gomlx/gomlx/backends"
)

// ReduceWindow reduces windows of x (pooling). When the windows tile the operand (strides equal to the
// window, no padding, no dilation: every pooling layer of the fedbayes models) it is a Reshape to
// [n0, w0, n1, w1, ...] and one reduction over the window axes; SimpleGo's generic ReduceWindow walks
// every window with shape iterators and took a fifth of a LeNet training step. Any other
// configuration is SimpleGo's.
func (b *Builder) ReduceWindow(x backends.Op, reductionType backends.ReduceOpType, windowDimensions, strides, baseDilations, windowDilations []int,
	paddings [][2]int) (out backends.Op, err error) {
	defer recoverOp("ReduceWindow", &out, &err)
	s := b.shape(x)
	rank := s.Rank()
	tiled := len(windowDimensions) == rank && (len(strides) == 0 || slices.Equal(strides, windowDimensions))
	for _, d := range slices.Concat(baseDilations, windowDilations) {
		tiled = tiled && d <= 1
	}
	for _, p := range paddings {
		tiled = tiled && p == [2]int{}
	}
	var covered, inter, windowAxes []int
	if tiled {
		for a := range rank {
			w := windowDimensions[a]
			if w < 1 || s.Dimensions[a] < w {
				tiled = false
				break
			}
			n := s.Dimensions[a] / w
			covered = append(covered, n*w)
			inter = append(inter, n, w)
			windowAxes = append(windowAxes, 2*a+1)
		}
	}
	if !tiled {
		return must(b.Builder.ReduceWindow(x, reductionType, windowDimensions, strides, baseDilations, windowDilations, paddings)), nil
	}
	isFloat := s.DType == dtypes.Float32 || s.DType == dtypes.Float64
	if directPooling && isFloat && (reductionType == backends.ReduceOpMax || reductionType == backends.ReduceOpMin) {
		return b.tiledPoolNode(x, slices.Clone(windowDimensions), reductionType == backends.ReduceOpMax), nil
	}
	if !slices.Equal(covered, s.Dimensions) {
		x = b.slice(x, make([]int, rank), covered)
	}
	xi := must(b.Reshape(x, inter...))
	switch reductionType {
	case backends.ReduceOpMax:
		return must(b.ReduceMax(xi, windowAxes...)), nil
	case backends.ReduceOpMin:
		return must(b.ReduceMin(xi, windowAxes...)), nil
	case backends.ReduceOpSum:
		return must(b.ReduceSum(xi, windowAxes...)), nil
	case backends.ReduceOpProduct:
		return must(b.ReduceProduct(xi, windowAxes...)), nil
	}
	return must(b.Builder.ReduceWindow(x, reductionType, windowDimensions, strides, baseDilations, windowDilations, paddings)), nil
}
