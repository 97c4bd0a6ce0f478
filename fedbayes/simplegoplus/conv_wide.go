package simplegoplus

// The "wide" form of a valid, unit-stride convolution (LeNet's, with few input channels): in
// channels-first order x [B, Cin, S...], output position o and tap t read the input at the flat index
// q(o) + q(t), q the row-major index over S. Computing the output at every q in [0, Q), Q = O_0 x
// S_1 x ... x S_(n-1) (whole input rows instead of the O_last valid columns), makes each row of
// the transposed patches, per example, ONE contiguous run of Q inputs starting at q(t): one copy
// instead of one per output row. The positions past the valid columns (o_i >= O_i for i >= 1) compute
// values that are thrown away when the output is compacted; each valid output is the same dot product
// over the same taps as in the narrow form. Only the forward pass uses it: a kernel gradient would
// multiply the thrown-away patch values by zeros, and 0 x Inf is not 0.

// wideRows reports whether the convolution has the wide form: no padding, unit strides, no dilation,
// at least two spatial axes, and rows noticeably longer (in wide positions per valid one) only by a
// kernel's width.
func (g *convGeometry) wideRows() bool {
	n := len(g.in)
	if n < 2 || !g.validUnitAxes() {
		return false
	}
	// The wide gemm does in[last]/out[last] times the work: worth it while that ratio is small.
	return 4*g.in[n-1] <= 5*g.out[n-1]+4*g.kernel[n-1]
}

// wideSize is Q, the number of wide output positions per example.
func (g *convGeometry) wideSize() int {
	return g.out[0] * sizeOf(g.in[1:])
}

// im2colWide fills pt [Cin*K, B*Q] from x [B, Cin, S...]: row (c, t), columns (b, q) hold x[b, c,
// q + q(t)], one copy per row and example. Reads past the end of x (the last example's thrown-away
// positions) are zeros.
func im2colWide[T float32 | float64](g convGeometry, x, pt []T) {
	n := len(g.in)
	kSize, sSize, q := sizeOf(g.kernel), sizeOf(g.in), g.wideSize()
	inStrides := spatialStrides(g.in, 1)
	cols := g.batch * q
	parallelDo(g.cin*kSize, func(row int) {
		c, tap := row/kSize, row%kSize
		off := 0
		for i, rest := n-1, tap; i >= 0; i-- {
			off += rest % g.kernel[i] * inStrides[i]
			rest /= g.kernel[i]
		}
		dstRow := pt[row*cols : (row+1)*cols]
		for b := range g.batch {
			start := (b*g.cin+c)*sSize + off
			dst := dstRow[b*q : (b+1)*q]
			k := copy(dst, x[start:min(len(x), start+q)])
			clear(dst[k:])
		}
	})
}

// compactWide copies the valid positions of yw [B*Q, Cout] into y [B, O..., Cout], a run of O_last
// positions at a time, in parallel over examples.
func compactWide[T float32 | float64](g convGeometry, yw, y []T) {
	n := len(g.in)
	q, oSize, cout := g.wideSize(), sizeOf(g.out), g.cout
	oLast := g.out[n-1]
	inStrides := spatialStrides(g.in, 1)
	outer := oSize / oLast
	run := oLast * cout
	parallelDo(g.batch, func(b int) {
		o := make([]int, n-1)
		for r := range outer {
			src := 0
			for i := range n - 1 {
				src += o[i] * inStrides[i]
			}
			copy(y[(b*oSize+r*oLast)*cout:][:run], yw[(b*q+src)*cout:][:run])
			advance(o, g.out)
		}
	})
}
