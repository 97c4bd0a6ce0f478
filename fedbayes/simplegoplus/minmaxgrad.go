package simplegoplus

import (
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26.0's gradient of Max and Min (minMaxVJP, used by ReLU = Max(x, 0)) builds the side
// indicator as Sign(Sign(x0 - x1) + 1) and its complement as 1 - that: five element-wise passes over
// the activation before the two products, about a tenth of a LeNet training step here. On this
// backend the same gradients are two Wheres on one comparison: v where x0 is not below x1 (Max),
// else 0, and the rest for x1. The comparison is LessThan, which is false for NaN, so a NaN
// difference sends the gradient to x0 as the stock indicator does; the values are the same, but for
// the sign of zero where the stock product is v * 0. A scalar second operand (a clamp) gets the same
// Where for the first; other backends, and other operands broadcast by the op, get GoMLX's stock
// gradient. Delete with the rest of this package (see doc.go).
var (
	stockMaxVJP = graph.VJPRegistration[graph.NodeTypeMax]
	stockMinVJP = graph.VJPRegistration[graph.NodeTypeMin]
)

func init() {
	graph.VJPRegistration[graph.NodeTypeMax] = minMaxVJP
	graph.VJPRegistration[graph.NodeTypeMin] = minMaxVJP
}

// minMaxVJP is the gradient of Max and Min registered in graph.VJPRegistration.
func minMaxVJP(node *graph.Node, vjpOutputs []*graph.Node, outputShape shapes.Shape) []*graph.Node {
	isMax := node.Type() == graph.NodeTypeMax
	stock := stockMinVJP
	if isMax {
		stock = stockMaxVJP
	}
	in := node.Inputs()
	_, ours := node.Graph().Backend().(*Backend)
	if !ours || len(vjpOutputs) != 1 || len(in) != 2 || !in[0].Shape().Equal(node.Shape()) {
		return stock(node, vjpOutputs, outputShape)
	}
	v := vjpOutputs[0]
	if in[1].Shape().IsScalar() && !node.Shape().IsScalar() {
		// A clamp against a scalar bound (Max(x, lo), Min(x, hi)): x's gradient is one Where on one
		// comparison with the scalar, as below. The bound's gradient is a sum over the broadcast:
		// GoMLX's own (its nodes for x's side are then unused and never executed).
		below := graph.LessThan(in[0], in[1])
		zero := graph.ScalarZero(v.Graph(), v.DType())
		first := graph.Where(below, zero, v)
		if !isMax {
			first = graph.Where(below, v, zero)
		}
		return []*graph.Node{first, stock(node, vjpOutputs, outputShape)[1]}
	}
	if !in[1].Shape().Equal(node.Shape()) {
		return stock(node, vjpOutputs, outputShape)
	}
	zero := graph.ScalarZero(v.Graph(), v.DType())
	// Stock: side 0 gets v where x0 - x1 >= 0 (or is NaN) for Max; Min swaps the sides.
	below := graph.LessThan(in[0], in[1])
	toFirst, toSecond := graph.Where(below, zero, v), graph.Where(below, v, zero)
	if !isMax {
		return []*graph.Node{toSecond, toFirst}
	}
	return []*graph.Node{toFirst, toSecond}
}
