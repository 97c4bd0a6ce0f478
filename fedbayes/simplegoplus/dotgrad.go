package simplegoplus

import (
	"reflect"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX's own gradients of DotGeneral and Dot (layers.Dense uses Dot), kept to serve every graph
// that is not built on this backend (XLA in particular) and any node whose axes cannot be read.
var (
	stockDotGeneralVJP = graph.VJPRegistration[graph.NodeTypeDotGeneral]
	stockDotVJP        = graph.VJPRegistration[graph.NodeTypeDot]
)

func init() {
	graph.VJPRegistration[graph.NodeTypeDotGeneral] = dotGeneralVJP
	graph.VJPRegistration[graph.NodeTypeDot] = dotVJP
}

// DotGeneralAxes are the axis parameters of a DotGeneral node.
type DotGeneralAxes struct {
	LhsContracting, LhsBatch, RhsContracting, RhsBatch []int
}

// ReadDotGeneralAxes returns the axis parameters of a DotGeneral graph node, and false if node is not
// a DotGeneral or its parameters cannot be read consistently.
//
// GoMLX v0.26.0 keeps them in the unexported node.inputs (*graph.nodeInputsDotGeneral, fields
// lhsContractingAxes, lhsBatchAxes, rhsContractingAxes, rhsBatchAxes). They are read with reflect,
// which may read (not write, not escape) unexported fields; no unsafe. The result is checked
// against the node: every axis in range and used once, matching contracting and batch dimensions,
// and the output shape the axes imply equal to the node's. If GoMLX renames or reshapes those
// fields, the check fails and the stock gradient is used (slow but correct);
// TestReadDotGeneralAxes fails loudly in that case.
func ReadDotGeneralAxes(node *graph.Node) (DotGeneralAxes, bool) {
	var axes DotGeneralAxes
	if node == nil || node.Type() != graph.NodeTypeDotGeneral || len(node.Inputs()) != 2 {
		return axes, false
	}
	v := reflect.ValueOf(node).Elem().FieldByName("inputs")
	if !v.IsValid() || v.Kind() != reflect.Interface || v.IsNil() {
		return axes, false
	}
	p := v.Elem()
	if p.Kind() != reflect.Pointer || p.IsNil() || p.Elem().Kind() != reflect.Struct {
		return axes, false
	}
	st := p.Elem()
	read := func(name string) ([]int, bool) {
		f := st.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.Int {
			return nil, false
		}
		out := make([]int, f.Len())
		for i := range out {
			out[i] = int(f.Index(i).Int())
		}
		return out, true
	}
	var ok [4]bool
	axes.LhsContracting, ok[0] = read("lhsContractingAxes")
	axes.LhsBatch, ok[1] = read("lhsBatchAxes")
	axes.RhsContracting, ok[2] = read("rhsContractingAxes")
	axes.RhsBatch, ok[3] = read("rhsBatchAxes")
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return axes, false
	}
	lhs, rhs := node.Inputs()[0].Shape(), node.Inputs()[1].Shape()
	want, valid := dotGeneralOutputDims(lhs, rhs, axes)
	if !valid || !slices.Equal(want, node.Shape().Dimensions) {
		return axes, false
	}
	return axes, true
}

// dotGeneralOutputDims returns the output dimensions implied by axes ([batch..., lhs free...,
// rhs free...], free axes in increasing order), and false if the axes are inconsistent.
func dotGeneralOutputDims(lhs, rhs shapes.Shape, axes DotGeneralAxes) ([]int, bool) {
	if len(axes.LhsContracting) != len(axes.RhsContracting) || len(axes.LhsBatch) != len(axes.RhsBatch) {
		return nil, false
	}
	lhsFree, okL := freeAxes(lhs.Rank(), axes.LhsContracting, axes.LhsBatch)
	rhsFree, okR := freeAxes(rhs.Rank(), axes.RhsContracting, axes.RhsBatch)
	if !okL || !okR {
		return nil, false
	}
	for i := range axes.LhsContracting {
		if lhs.Dimensions[axes.LhsContracting[i]] != rhs.Dimensions[axes.RhsContracting[i]] {
			return nil, false
		}
	}
	var out []int
	for i := range axes.LhsBatch {
		if lhs.Dimensions[axes.LhsBatch[i]] != rhs.Dimensions[axes.RhsBatch[i]] {
			return nil, false
		}
		out = append(out, lhs.Dimensions[axes.LhsBatch[i]])
	}
	for _, a := range lhsFree {
		out = append(out, lhs.Dimensions[a])
	}
	for _, a := range rhsFree {
		out = append(out, rhs.Dimensions[a])
	}
	return out, true
}

// freeAxes returns the axes of a rank-r operand that are neither contracting nor batch, in
// increasing order, and false if an axis is out of range or used twice.
func freeAxes(rank int, contracting, batch []int) ([]int, bool) {
	used := make([]bool, rank)
	for _, a := range slices.Concat(contracting, batch) {
		if a < 0 || a >= rank || used[a] {
			return nil, false
		}
		used[a] = true
	}
	var free []int
	for a := range rank {
		if !used[a] {
			free = append(free, a)
		}
	}
	return free, true
}

// dotGeneralVJP is the gradient of DotGeneral registered in graph.VJPRegistration. On this backend it
// is two DotGenerals (DotGeneralGradients); on any other backend, or if the node's axes cannot be
// read, it is GoMLX's stock gradient.
func dotGeneralVJP(node *graph.Node, vjpOutputs []*graph.Node, outputShape shapes.Shape) []*graph.Node {
	if _, ours := node.Graph().Backend().(*Backend); ours && len(vjpOutputs) == 1 {
		if axes, ok := ReadDotGeneralAxes(node); ok {
			lhs, rhs := node.Inputs()[0], node.Inputs()[1]
			gl, gr := DotGeneralGradients(lhs, rhs, axes, vjpOutputs[0])
			return []*graph.Node{gl, gr}
		}
	}
	return stockDotGeneralVJP(node, vjpOutputs, outputShape)
}

// dotVJP is the gradient of Dot registered in graph.VJPRegistration: Dot is a DotGeneral whose axes
// follow from the ranks (vector.vector, matrix.vector, matrix.matrix), so on this backend it is
// DotGeneralGradients; elsewhere it is GoMLX's stock gradient.
func dotVJP(node *graph.Node, vjpOutputs []*graph.Node, outputShape shapes.Shape) []*graph.Node {
	if _, ours := node.Graph().Backend().(*Backend); ours && len(vjpOutputs) == 1 && len(node.Inputs()) == 2 {
		lhs, rhs := node.Inputs()[0], node.Inputs()[1]
		if (lhs.Rank() == 1 || lhs.Rank() == 2) && (rhs.Rank() == 1 || rhs.Rank() == 2) && !(lhs.Rank() == 1 && rhs.Rank() == 2) {
			axes := DotGeneralAxes{LhsContracting: []int{lhs.Rank() - 1}, RhsContracting: []int{0}}
			if want, ok := dotGeneralOutputDims(lhs.Shape(), rhs.Shape(), axes); ok && slices.Equal(want, node.Shape().Dimensions) {
				gl, gr := DotGeneralGradients(lhs, rhs, axes, vjpOutputs[0])
				return []*graph.Node{gl, gr}
			}
		}
	}
	return stockDotVJP(node, vjpOutputs, outputShape)
}

// DotGeneralGradients returns the gradients of out = DotGeneral(lhs, rhs) with the given axes, for
// the output cotangent v, each as one DotGeneral plus a transposition. With out's axes ordered
// [batch B, lhs free L, rhs free R] and the contracted axes C:
//
//	dlhs[B, L, C] = sum over R of v[B, L, R] * rhs[B, R, C]  (contract v's R axes with rhs's free axes)
//	drhs[B, C, R] = sum over L of lhs[B, L, C] * v[B, L, R]  (contract lhs's free axes with v's L axes)
//
// which is the chain rule for a bilinear map; GoMLX v0.28.0 adopted the same form. It never builds
// the [B, L, R, C] broadcast product that v0.26.0's dotGeneralVJP reduces.
func DotGeneralGradients(lhs, rhs *graph.Node, axes DotGeneralAxes, v *graph.Node) (dlhs, drhs *graph.Node) {
	lhsFree, _ := freeAxes(lhs.Rank(), axes.LhsContracting, axes.LhsBatch)
	rhsFree, _ := freeAxes(rhs.Rank(), axes.RhsContracting, axes.RhsBatch)
	nb, nl, nr := len(axes.LhsBatch), len(lhsFree), len(rhsFree)
	vBatch := iotaFrom(0, nb)
	vL := iotaFrom(nb, nl)
	vR := iotaFrom(nb+nl, nr)

	// dlhs: DotGeneral(v, contract vR, batch vB; rhs, contract rhsFree, batch RhsBatch) has axes
	// [B, L, rhs contracting axes in increasing rhs order]; map each to its lhs axis.
	{
		g := graph.DotGeneral(v, vR, vBatch, rhs, rhsFree, axes.RhsBatch)
		src := slices.Concat(axes.LhsBatch, lhsFree, pairedAxes(axes.RhsContracting, axes.LhsContracting))
		dlhs = transposeTo(g, src)
	}
	// drhs: DotGeneral(lhs, contract lhsFree, batch LhsBatch; v, contract vL, batch vB) has axes
	// [B, lhs contracting axes in increasing lhs order, R]; map each to its rhs axis.
	{
		g := graph.DotGeneral(lhs, lhsFree, axes.LhsBatch, v, vL, vBatch)
		src := slices.Concat(axes.RhsBatch, pairedAxes(axes.LhsContracting, axes.RhsContracting), rhsFree)
		drhs = transposeTo(g, src)
	}
	return dlhs, drhs
}

// pairedAxes sorts the contracting axes `from` (of the operand that keeps them in a DotGeneral
// result, where they appear in increasing order) and returns the matching contracting axes `to` of
// the other operand, in that order.
func pairedAxes(from, to []int) []int {
	order := iotaFrom(0, len(from))
	slices.SortFunc(order, func(i, j int) int { return from[i] - from[j] })
	out := make([]int, len(order))
	for k, i := range order {
		out[k] = to[i]
	}
	return out
}

// transposeTo permutes x so that its axis k moves to axis target[k].
func transposeTo(x *graph.Node, target []int) *graph.Node {
	perm := make([]int, len(target))
	identity := true
	for k, t := range target {
		perm[t] = k
		identity = identity && k == t
	}
	if identity {
		return x
	}
	return graph.TransposeAllAxes(x, perm...)
}

// iotaFrom returns start, start+1, ..., start+n-1.
func iotaFrom(start, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i
	}
	return out
}
