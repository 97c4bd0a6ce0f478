package simplegoplus

import (
	"math"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// The gradient of a tensor sliced into pieces along one axis (the vectorised client path slices a
// [K, ...] activation into K per-client convolutions) is, in GoMLX, the sum of one Pad per piece:
// each Pad puts a piece's gradient into a tensor of zeros of the full shape, and autodiff adds the K
// full tensors pairwise. That is K full-size Pads and K-1 full-size Adds, O(K²) passes over memory
// for what is one concatenation of the pieces.
//
// Here the Builder remembers which ops are zero apart from some pieces along one axis (the result of
// a Pad with a zero fill on that axis only), and an Add of two such ops with disjoint pieces becomes
// the concatenation of the pieces and the zero gaps between them, itself remembered. The Adds of the
// K pieces thus build K concatenations of which only the last is used: SimpleGo executes only the
// nodes an output needs, so the gradient costs one concatenation.
//
// Values: each element of the sum has one non-zero term, and x + 0 = x for every x except -0, which
// the Add turned into +0 and the concatenation keeps as -0 (equal as numbers; as a one-client graph,
// which slices nothing, has it).

// padPiece is a piece of a zero-padded op: op fills [lo, hi) of the axis.
type padPiece struct {
	lo, hi int
	op     backends.Op
}

// zeroPadded describes an op that is zero except for its pieces along axis (sorted, disjoint).
type zeroPadded struct {
	axis   int
	pieces []padPiece
}

// notePadded records out = Pad(x, fill, cfg...) when fill is a constant +0 and only one axis is
// padded, at its edges, by non-negative amounts.
func (b *Builder) notePadded(out, x, fill backends.Op, cfg []backends.PadAxis) {
	if !isPositiveZero(fill) {
		return
	}
	axis := -1
	for a, c := range cfg {
		if c.Interior != 0 || c.Start < 0 || c.End < 0 {
			return
		}
		if c.Start == 0 && c.End == 0 {
			continue
		}
		if axis >= 0 {
			return
		}
		axis = a
	}
	if axis < 0 {
		return
	}
	d := b.shape(x).Dimensions[axis]
	if b.padded == nil {
		b.padded = make(map[backends.Op]zeroPadded)
	}
	b.padded[out] = zeroPadded{axis: axis, pieces: []padPiece{{cfg[axis].Start, cfg[axis].Start + d, x}}}
}

// isPositiveZero reports whether op is a scalar constant +0 of a float dtype.
func isPositiveZero(op backends.Op) bool {
	n, ok := op.(*simplego.Node)
	if !ok || n == nil || mirrorNode(n).opType != backends.OpTypeConstant {
		return false
	}
	buf, ok := nodeData(n).(*simplego.Buffer)
	if !ok || buf == nil || !bufferShape(buf).IsScalar() {
		return false
	}
	switch bufferShape(buf).DType {
	case dtypes.Float32:
		f, ok := flatOf[float32](buf)
		return ok && len(f) == 1 && math.Float32bits(f[0]) == 0
	case dtypes.Float64:
		f, ok := flatOf[float64](buf)
		return ok && len(f) == 1 && math.Float64bits(f[0]) == 0
	}
	return false
}

// Add is SimpleGo's Add, except for two zero-padded operands with disjoint pieces on the same axis
// (see above), whose sum is built as a concatenation.
func (b *Builder) Add(lhs, rhs backends.Op) (out backends.Op, err error) {
	p, okP := b.padded[lhs]
	q, okQ := b.padded[rhs]
	if !okP || !okQ || p.axis != q.axis || !b.shape(lhs).Equal(b.shape(rhs)) {
		return b.Builder.Add(lhs, rhs)
	}
	pieces := append(slices.Clone(p.pieces), q.pieces...)
	slices.SortFunc(pieces, func(a, c padPiece) int { return a.lo - c.lo })
	for i := 1; i < len(pieces); i++ {
		if pieces[i].lo < pieces[i-1].hi {
			return b.Builder.Add(lhs, rhs) // overlapping pieces: a real sum
		}
	}
	defer recoverOp("Add", &out, &err)
	s := b.shape(lhs)
	var parts []backends.Op
	at := 0
	gap := func(lo, hi int) {
		if hi > lo {
			dims := slices.Clone(s.Dimensions)
			dims[p.axis] = hi - lo
			parts = append(parts, b.zerosOf(shapeWith(s, dims)))
		}
	}
	for _, pc := range pieces {
		gap(at, pc.lo)
		parts = append(parts, pc.op)
		at = pc.hi
	}
	gap(at, s.Dimensions[p.axis])
	out = must(b.Concatenate(p.axis, parts...))
	b.padded[out] = zeroPadded{axis: p.axis, pieces: pieces}
	return out, nil
}
