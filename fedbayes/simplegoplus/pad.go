package simplegoplus

import (
	"slices"

	"github.com/gomlx/gomlx/backends"
)

// Pad adds fillValue before (Start), after (End) and between the elements (Interior) of each axis of
// x, as XLA's Pad; negative Start/End remove elements. GoMLX uses it for the gradient of Slice and of
// sum-pooling, and this package for SelectAndScatter and the strided or dilated convolutions.
//
// Per axis: interior padding interleaves x with a block of fill values (Concatenate on a new unit
// axis, Reshape, then Slice off the trailing fill), and edge padding concatenates fill blocks (or
// slices, when negative).
func (b *Builder) Pad(x, fillValue backends.Op, axesConfig ...backends.PadAxis) (out backends.Op, err error) {
	defer recoverOp("Pad", &out, &err)
	s := b.shape(x)
	fs := b.shape(fillValue)
	if !fs.IsScalar() || fs.DType != s.DType {
		fail("fillValue must be a scalar of dtype %s, got %s", s.DType, fs)
	}
	if len(axesConfig) > s.Rank() {
		fail("%d PadAxis given for operand of rank %d (shape %s)", len(axesConfig), s.Rank(), s)
	}
	for axis, cfg := range axesConfig {
		if cfg.Interior < 0 {
			fail("axis %d: negative interior padding %d", axis, cfg.Interior)
		}
		d := s.Dimensions[axis]
		padded := d + cfg.Start + cfg.End
		if d > 0 {
			padded += (d - 1) * cfg.Interior
		}
		if padded < 0 {
			fail("axis %d: padding %+v of dimension %d gives a negative size %d", axis, cfg, d, padded)
		}
	}
	out = x
	for axis, cfg := range axesConfig {
		out = b.padAxis(out, fillValue, axis, cfg)
	}
	if out == x {
		out = must(b.Identity(x))
	}
	b.notePadded(out, x, fillValue, axesConfig)
	return out, nil
}

// padAxis applies one axis' padding. It returns x itself when cfg is all zeros.
func (b *Builder) padAxis(x, fill backends.Op, axis int, cfg backends.PadAxis) backends.Op {
	s := b.shape(x)
	dims := s.Dimensions
	d := dims[axis]
	if cfg.Interior > 0 && d > 1 {
		// View x as [pre, d, 1, post], append [pre, d, interior, post] of fill on axis 2, then
		// flatten to [pre, d*(1+interior), post] and drop the trailing interior block.
		pre, post := sizeOf(dims[:axis]), sizeOf(dims[axis+1:])
		x4 := must(b.Reshape(x, pre, d, 1, post))
		block := b.broadcastScalar(fill, []int{pre, d, cfg.Interior, post})
		cat := must(b.Concatenate(2, x4, block))
		flat := must(b.Reshape(cat, pre, d*(1+cfg.Interior), post))
		newD := d + (d-1)*cfg.Interior
		flat = b.slice(flat, []int{0, 0, 0}, []int{pre, newD, post})
		newDims := slices.Clone(dims)
		newDims[axis] = newD
		x = must(b.Reshape(flat, newDims...))
		dims = newDims
	}
	// Positive edges first, then negative ones crop the result: this matches XLA when a negative
	// edge reaches into the opposite edge's fill.
	if cfg.Start > 0 || cfg.End > 0 {
		parts := make([]backends.Op, 0, 3)
		if cfg.Start > 0 {
			blockDims := slices.Clone(dims)
			blockDims[axis] = cfg.Start
			parts = append(parts, b.broadcastScalar(fill, blockDims))
		}
		if dims[axis] > 0 {
			parts = append(parts, x)
		}
		if cfg.End > 0 {
			blockDims := slices.Clone(dims)
			blockDims[axis] = cfg.End
			parts = append(parts, b.broadcastScalar(fill, blockDims))
		}
		if len(parts) == 1 {
			x = parts[0]
		} else {
			x = must(b.Concatenate(axis, parts...))
		}
		dims = slices.Clone(b.shape(x).Dimensions)
	}
	if cfg.Start < 0 || cfg.End < 0 {
		starts := make([]int, len(dims))
		limits := slices.Clone(dims)
		if cfg.Start < 0 {
			starts[axis] = -cfg.Start
		}
		if cfg.End < 0 {
			limits[axis] += cfg.End
		}
		x = b.slice(x, starts, limits)
	}
	return x
}
