package simplegoplus

import (
	"slices"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// dotGeneralData mirrors SimpleGo's dotGeneralNodeData (dotgeneral.go in v0.26.0): the axes of a
// DotGeneral node and the sizes of its normalised form [batch, cross, contracting]. viewData checks
// the layout against the real type before it is read.
type dotGeneralData struct {
	lhsContractingAxes, lhsBatchAxes                       []int
	rhsContractingAxes, rhsBatchAxes                       []int
	batchSize, lhsCrossSize, rhsCrossSize, contractingSize int
	lhsBlockedShape, rhsBlockedShape, outputBlockedShape   shapes.Shape
}

// execDotGeneral computes a float32 or float64 DotGeneral with BLAS gemm. SimpleGo's DotGeneral
// node keeps its operands in their original layout and outputs [batch, lhsCross, rhsCross]; an
// operand whose axes are already in [batch, cross, contracting] or [batch, contracting, cross]
// order is handed to gemm as it is (with a transpose flag), any other is transposed once first.
// Everything else (other backends, dtypes, an unexpected node layout) goes to SimpleGo's executor.
func execDotGeneral(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	p, ok := viewData[dotGeneralData](nodeData(node))
	if !ok || !isOurs(backend) {
		return stock.dotGeneral(backend, node, inputs, owned)
	}
	switch bufferShape(inputs[0]).DType {
	case dtypes.Float32:
		return dotGeneralBLAS[float32](backend, node, p, inputs[0], inputs[1]), nil
	case dtypes.Float64:
		return dotGeneralBLAS[float64](backend, node, p, inputs[0], inputs[1]), nil
	}
	return stock.dotGeneral(backend, node, inputs, owned)
}

func dotGeneralBLAS[T float32 | float64](backend *simplego.Backend, node *simplego.Node, p *dotGeneralData, lhsBuf, rhsBuf *simplego.Buffer) *simplego.Buffer {
	lhsShape, rhsShape := bufferShape(lhsBuf), bufferShape(rhsBuf)
	out := getBufferForShape(backend, nodeShape(node))
	c, _ := flatOf[T](out)
	bs, m, n, k := p.batchSize, p.lhsCrossSize, p.rhsCrossSize, p.contractingSize

	// lhs as [B, M, K] or, transposed, [B, K, M]; rhs as [B, K, N] or, transposed, [B, N, K].
	lhsCross := crossAxes(lhsShape.Rank(), p.lhsContractingAxes, p.lhsBatchAxes)
	rhsCross := crossAxes(rhsShape.Rank(), p.rhsContractingAxes, p.rhsBatchAxes)
	lhs, transA, tmpA := gemmOperand[T](backend, lhsBuf, p.lhsBatchAxes, lhsCross, p.lhsContractingAxes)
	rhs, transB, tmpB := gemmOperand[T](backend, rhsBuf, p.rhsBatchAxes, p.rhsContractingAxes, rhsCross)

	g := gemm{Batch: bs, M: m, N: n, K: k, TransA: transA, TransB: transB,
		LdA: k, LdB: n, LdC: n, StrideA: m * k, StrideB: k * n, StrideC: m * n}
	if transA {
		g.LdA = m
	}
	if transB {
		g.LdB = k
	}
	runGemm(g, lhs, rhs, c)
	if tmpA != nil {
		putBuffer(backend, tmpA)
	}
	if tmpB != nil {
		putBuffer(backend, tmpB)
	}
	return out
}

// gemmOperand returns the data of a DotGeneral operand as gemm reads it: [batch, first, second]
// in row-major order, or, with trans set, [batch, second, first]. When its axes are in neither order
// it is transposed into a temporary buffer (returned, for putBuffer) in the first.
func gemmOperand[T float32 | float64](backend *simplego.Backend, buf *simplego.Buffer, batch, first, second []int) (flat []T, trans bool, tmp *simplego.Buffer) {
	flat, _ = flatOf[T](buf)
	order := slices.Concat(batch, first, second)
	switch {
	case isIdentity(order):
		return flat, false, nil
	case isIdentity(slices.Concat(batch, second, first)):
		return flat, true, nil
	}
	s := bufferShape(buf)
	tmp = getBufferForShape(backend, s)
	dst, _ := flatOf[T](tmp)
	transposeInto(dst, flat, s.Dimensions, order)
	return dst, false, tmp
}

// crossAxes returns, in increasing order, the axes of a rank-r operand that are neither contracted
// nor batch axes.
func crossAxes(rank int, contracting, batch []int) []int {
	cross := make([]int, 0, rank)
	for a := range rank {
		if !slices.Contains(contracting, a) && !slices.Contains(batch, a) {
			cross = append(cross, a)
		}
	}
	return cross
}

// isIdentity reports whether perm is 0, 1, ..., len(perm)-1.
func isIdentity(perm []int) bool {
	for i, a := range perm {
		if a != i {
			return false
		}
	}
	return true
}

// transposeInto writes src (row-major with dimensions dims) into dst with its axes in the order
// perm: dst's axis i is src's axis perm[i].
func transposeInto[T any](dst, src []T, dims, perm []int) {
	srcStrides := spatialStrides(dims, 1)
	outDims := make([]int, len(perm))
	strides := make([]int, len(perm)) // src stride of each dst axis
	for i, a := range perm {
		outDims[i] = dims[a]
		strides[i] = srcStrides[a]
	}
	gatherInto(dst, src, 0, outDims, strides)
}
