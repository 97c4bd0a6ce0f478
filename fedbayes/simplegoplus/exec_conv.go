package simplegoplus

import (
	"slices"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// convData mirrors SimpleGo's convNode (convgeneral.go in v0.26.0), the parameters of a ConvGeneral
// node. viewData checks the layout against the real type before it is read.
type convData struct {
	axes              backends.ConvolveAxesConfig
	strides           []int
	paddings          [][2]int
	inputDilations    []int
	kernelDilations   []int
	channelGroupCount int
	batchGroupCount   int

	hasInputDilations, hasKernelDilations            bool
	inputStrides, inputSpatialStrides, kernelStrides []int
	dilatedInputSpatialDims                          []int
}

// convGeometry is a convolution in canonical form: input [B, S..., Cin], kernel [K..., Cin, Cout],
// output [B, O..., Cout]. Output position o and kernel tap t read the input at dilated coordinate
// o*stride + t*kernelDilation - padLow, which exists when it is a multiple of the input dilation
// and, divided by it, falls inside S (XLA's ConvGeneralDilated semantics).
type convGeometry struct {
	batch, cin, cout int
	in, kernel, out  []int // spatial dimensions S, K, O
	stride, padLow   []int
	inDil, kDil      []int
}

// execConvGeneral computes an ungrouped float32/float64 ConvGeneral: LeNet-sized float32 ones and
// their kernel gradients directly in AVX2+FMA (conv_direct.go), others with a BLAS gemm: patches of
// the input times the kernel (im2col), or, when the output has more positions than the input (the
// transposed convolutions of input gradients), the input times the kernel scattered into the output
// (col2im). Without OpenBLAS it runs the direct ones only. Anything else goes to SimpleGo's executor.
func execConvGeneral(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	p, ok := viewData[convData](nodeData(node))
	if !ok || !isOurs(backend) || p.channelGroupCount > 1 || p.batchGroupCount > 1 || len(p.axes.InputSpatial) == 0 {
		return stock.convGeneral(backend, node, inputs, owned)
	}
	xs, ks := bufferShape(inputs[0]), bufferShape(inputs[1])
	g := p.geometry(xs, ks, nodeShape(node))
	form := directNone
	if xs.DType == dtypes.Float32 && ks.DType == dtypes.Float32 {
		form = g.direct()
	}
	if !BLASInUse() && form == directNone {
		// Registered for the direct convolutions only (directConvInUse): anything else is SimpleGo's.
		return stock.convGeneral(backend, node, inputs, owned)
	}
	switch xs.DType {
	case dtypes.Float32:
		return convBLAS[float32](backend, node, p, g, form, inputs[0], inputs[1]), nil
	case dtypes.Float64:
		return convBLAS[float64](backend, node, p, g, form, inputs[0], inputs[1]), nil
	}
	return stock.convGeneral(backend, node, inputs, owned)
}

// geometry returns the canonical form of the convolution with parameters p.
func (p *convData) geometry(xs, ks, os shapes.Shape) convGeometry {
	ax := p.axes
	n := len(ax.InputSpatial)
	g := convGeometry{
		batch: xs.Dimensions[ax.InputBatch], cin: xs.Dimensions[ax.InputChannels],
		cout: ks.Dimensions[ax.KernelOutputChannels],
		in:   make([]int, n), kernel: make([]int, n), out: make([]int, n),
		stride: make([]int, n), padLow: make([]int, n), inDil: make([]int, n), kDil: make([]int, n),
	}
	at := func(v []int, i int) int {
		if i < len(v) && v[i] > 0 {
			return v[i]
		}
		return 1
	}
	for i := range n {
		g.in[i] = xs.Dimensions[ax.InputSpatial[i]]
		g.kernel[i] = ks.Dimensions[ax.KernelSpatial[i]]
		g.out[i] = os.Dimensions[ax.OutputSpatial[i]]
		g.stride[i], g.inDil[i], g.kDil[i] = at(p.strides, i), at(p.inputDilations, i), at(p.kernelDilations, i)
		if i < len(p.paddings) {
			g.padLow[i] = p.paddings[i][0]
		}
	}
	return g
}

// inputCoord returns the input coordinate along spatial axis i read by output position o and
// kernel tap t, or -1 if that is padding or a hole of the input dilation.
func (g *convGeometry) inputCoord(i, o, t int) int {
	d := o*g.stride[i] + t*g.kDil[i] - g.padLow[i]
	if d < 0 || d%g.inDil[i] != 0 {
		return -1
	}
	if d /= g.inDil[i]; d >= g.in[i] {
		return -1
	}
	return d
}

// useScatter reports whether the col2im form is cheaper: it does its gemm over input positions
// instead of output positions. gemmRatio is roughly how many multiply-adds gemm does in the time of
// one element copied or added by the patch loops.
func (g *convGeometry) useScatter() bool {
	const gemmRatio = 16
	s, o, k := sizeOf(g.in), sizeOf(g.out), sizeOf(g.kernel)
	gather := o * k * g.cin * (1 + 2*g.cout/gemmRatio)
	scatter := s * k * g.cout * (1 + 2*g.cin/gemmRatio)
	return scatter < gather
}

// convBLAS computes the convolution g (parameters p, output the node's) in the direct form form
// (directNone unless T is float32), else with a gemm.
func convBLAS[T float32 | float64](backend *simplego.Backend, node *simplego.Node, p *convData, g convGeometry, form directForm,
	xBuf, kBuf *simplego.Buffer) *simplego.Buffer {
	xs, ks, os := bufferShape(xBuf), bufferShape(kBuf), nodeShape(node)
	ax := p.axes
	var temps []*simplego.Buffer
	canonical := func(buf *simplego.Buffer, perm []int) []T {
		flat, _ := flatOf[T](buf)
		s := bufferShape(buf)
		if sameLayout(s.Dimensions, perm) {
			return flat
		}
		tmp := getBufferForShape(backend, s)
		dst, _ := flatOf[T](tmp)
		transposeInto(dst, flat, s.Dimensions, perm)
		temps = append(temps, tmp)
		return dst
	}
	outPerm := slices.Concat([]int{ax.OutputBatch}, ax.OutputSpatial, []int{ax.OutputChannels})
	out := getBufferForShape(backend, os)
	y, _ := flatOf[T](out)
	yc := y // the output in canonical order [B, O..., Cout]
	outMoves := !sameLayout(os.Dimensions, outPerm)
	if outMoves {
		tmp := getBufferForShape(backend, os)
		yc, _ = flatOf[T](tmp)
		temps = append(temps, tmp)
	}

	channelsLast := func() []T {
		return canonical(xBuf, slices.Concat([]int{ax.InputBatch}, ax.InputSpatial, []int{ax.InputChannels}))
	}
	kernelGradDY := func() []T { // a kernel gradient's output gradient (its kernel) as [B_f, O_f..., Cout]
		return canonical(kBuf, slices.Concat([]int{ax.KernelInputChannels}, ax.KernelSpatial, []int{ax.KernelOutputChannels}))
	}
	switch {
	case form == directKGradOne:
		// The forward is direct (conv_direct.go): so is its kernel gradient. x as [B_f, S...]
		// (Cin_f = 1), dy as [B_f, O_f..., Cout], Y as [K_f..., Cout] (B = Cin_f = 1).
		dy := kernelGradDY()
		x := canonical(xBuf, slices.Concat([]int{ax.InputChannels, ax.InputBatch}, ax.InputSpatial))
		kernelGradOneChannel(g.forward(), any(x).([]float32), any(dy).([]float32), any(yc).([]float32))
	case form == directKGradSixteen:
		// Likewise for the direct sixteen-channel forward: x as [B_f, S..., Cin_f], Y as
		// [Cin_f, K_f..., Cout].
		dy := kernelGradDY()
		x := canonical(xBuf, slices.Concat([]int{ax.InputChannels}, ax.InputSpatial, []int{ax.InputBatch}))
		kernelGradSixteen(g.forward(), any(x).([]float32), any(dy).([]float32), any(yc).([]float32))
	case form == directSixteen || form == directOne:
		// Sixteen output channels (LeNet's second layer), or one input channel and a few output
		// channels (its first, a row of output pixels at a time): direct, channels last
		// (conv_direct.go).
		conv := convOneChannel
		if form == directSixteen {
			conv = convSixteen
		}
		x := channelsLast()
		w := canonical(kBuf, slices.Concat(ax.KernelSpatial, []int{ax.KernelInputChannels, ax.KernelOutputChannels}))
		conv(g, any(x).([]float32), any(w).([]float32), any(yc).([]float32))
	case g.isKernelGradient():
		// The gradient of a kernel: output positions are the forward taps, taps the forward outputs.
		// As the forward convolution f (batch and input channels swapped back), with its patches P
		// [B_f*O_f, K_f*Cin_f]: Y = P^T . dY, dY as [B_f*O_f, Cout]; both operands are read in the
		// layouts the forward pass has, and the long contraction is split over the cores.
		f := g.forward()
		dy := kernelGradDY()
		rows, cols := f.batch*sizeOf(f.out), sizeOf(f.kernel)*f.cin
		pBuf := getBufferForShape(backend, shapes.Make(xs.DType, rows, cols))
		patches, _ := flatOf[T](pBuf)
		if f.patchesByColumn() {
			// PT [Cin_f*K_f, B_f*O_f]: Y rows in the canonical order (Cin_f = this batch, then taps).
			x := canonical(xBuf, slices.Concat([]int{ax.InputChannels, ax.InputBatch}, ax.InputSpatial))
			im2colT(f, x, patches)
			contractSplit(backend, gemm{Batch: 1, M: cols, N: g.cout, K: rows, LdA: rows, LdB: g.cout, LdC: g.cout}, patches, dy, yc)
		} else {
			// P [B_f*O_f, K_f*Cin_f]: Y rows come as (taps, Cin_f); reorder into the canonical [Cin_f, K_f, Cout].
			x := canonical(xBuf, slices.Concat([]int{ax.InputChannels}, ax.InputSpatial, []int{ax.InputBatch}))
			im2col(f, x, patches)
			tmp := getBufferForShape(backend, os)
			yt, _ := flatOf[T](tmp)
			contractSplit(backend, gemm{Batch: 1, M: cols, N: g.cout, K: rows, TransA: true, LdA: cols, LdB: g.cout, LdC: g.cout}, patches, dy, yt)
			transposeInto(yc, yt, []int{sizeOf(f.kernel), f.cin, g.cout}, []int{1, 0, 2})
			putBuffer(backend, tmp)
		}
		putBuffer(backend, pBuf)
	case g.useScatter():
		// Kernel as [Cin, K..., Cout]; R = X [B*S, Cin] . W [Cin, K*Cout]; then col2im into Y.
		x := channelsLast()
		w := canonical(kBuf, slices.Concat([]int{ax.KernelInputChannels}, ax.KernelSpatial, []int{ax.KernelOutputChannels}))
		runs := g.outputRuns()
		if runs {
			// Taps along the last axis reversed, so that consecutive taps of one input position
			// land on consecutive output positions: col2im then adds runs of taps and channels.
			tmp := getBufferForShape(backend, ks)
			wr, _ := flatOf[T](tmp)
			kl, c := g.kernel[len(g.kernel)-1], g.cout
			for blk := range len(w) / (kl * c) {
				src, dst := w[blk*kl*c:(blk+1)*kl*c], wr[blk*kl*c:(blk+1)*kl*c]
				for t := range kl {
					copy(dst[(kl-1-t)*c:(kl-t)*c], src[t*c:(t+1)*c])
				}
			}
			w = wr
			temps = append(temps, tmp)
		}
		rows, cols := g.batch*sizeOf(g.in), sizeOf(g.kernel)*g.cout
		rBuf := getBufferForShape(backend, shapes.Make(xs.DType, rows, cols))
		r, _ := flatOf[T](rBuf)
		runGemm(gemm{Batch: 1, M: rows, N: cols, K: g.cin, LdA: g.cin, LdB: cols, LdC: cols}, x, w, r)
		if runs {
			col2imRuns(g, r, yc)
		} else {
			col2im(g, r, yc)
		}
		putBuffer(backend, rBuf)
	case g.patchesByColumn():
		// Kernel as [Cin, K..., Cout]; PT = the patches transposed [Cin*K, B*O], filled in runs along
		// the last output axis from X as [B, Cin, S...]; Y = PT^T . W.
		x := canonical(xBuf, slices.Concat([]int{ax.InputBatch, ax.InputChannels}, ax.InputSpatial))
		w := canonical(kBuf, slices.Concat([]int{ax.KernelInputChannels}, ax.KernelSpatial, []int{ax.KernelOutputChannels}))
		rows, cols := g.cin*sizeOf(g.kernel), g.batch*sizeOf(g.out)
		if g.wideRows() {
			// Whole input rows per patch row (conv_wide.go), then the valid columns kept.
			cols = g.batch * g.wideSize()
			pBuf := getBufferForShape(backend, shapes.Make(xs.DType, rows, cols))
			pt, _ := flatOf[T](pBuf)
			im2colWide(g, x, pt)
			wBuf := getBufferForShape(backend, shapes.Make(xs.DType, cols, g.cout))
			yw, _ := flatOf[T](wBuf)
			runGemm(gemm{Batch: 1, M: cols, N: g.cout, K: rows, TransA: true, LdA: cols, LdB: g.cout, LdC: g.cout}, pt, w, yw)
			compactWide(g, yw, yc)
			putBuffer(backend, wBuf)
			putBuffer(backend, pBuf)
			break
		}
		pBuf := getBufferForShape(backend, shapes.Make(xs.DType, rows, cols))
		pt, _ := flatOf[T](pBuf)
		im2colT(g, x, pt)
		runGemm(gemm{Batch: 1, M: cols, N: g.cout, K: rows, TransA: true, LdA: cols, LdB: g.cout, LdC: g.cout}, pt, w, yc)
		putBuffer(backend, pBuf)
	default:
		// Kernel as [K..., Cin, Cout]; P = im2col(X) [B*O, K*Cin]; Y = P . W.
		x := channelsLast()
		w := canonical(kBuf, slices.Concat(ax.KernelSpatial, []int{ax.KernelInputChannels, ax.KernelOutputChannels}))
		rows, cols := g.batch*sizeOf(g.out), sizeOf(g.kernel)*g.cin
		pBuf := getBufferForShape(backend, shapes.Make(xs.DType, rows, cols))
		patches, _ := flatOf[T](pBuf)
		im2col(g, x, patches)
		runGemm(gemm{Batch: 1, M: rows, N: g.cout, K: cols, LdA: cols, LdB: g.cout, LdC: g.cout}, patches, w, yc)
		putBuffer(backend, pBuf)
	}

	if outMoves {
		// yc is [B, O..., Cout]; the output axis outPerm[j] is canonical axis j.
		inv := make([]int, len(outPerm))
		for j, a := range outPerm {
			inv[a] = j
		}
		canonDims := make([]int, len(outPerm))
		for j, a := range outPerm {
			canonDims[j] = os.Dimensions[a]
		}
		transposeInto(y, yc, canonDims, inv)
	}
	for _, t := range temps {
		putBuffer(backend, t)
	}
	return out
}

// isKernelGradient reports whether the convolution has the shape of a kernel's gradient (as GoMLX
// builds it: the forward input with its batch and channel axes swapped, the output gradient as
// kernel): fewer output values per output channel than terms in each of them, so patches by output
// position would be a few very long rows, read from transposed operands.
func (g *convGeometry) isKernelGradient() bool {
	return g.batch*sizeOf(g.out) < g.cin*sizeOf(g.kernel)
}

// forward returns the convolution whose kernel gradient g is: the forward output positions are g's
// taps and the forward taps g's output positions, so the forward stride is g's kernel dilation and
// the forward kernel dilation g's stride; batch and input channels swap.
func (g *convGeometry) forward() convGeometry {
	return convGeometry{
		batch: g.cin, cin: g.batch, cout: g.cout,
		in: g.in, kernel: g.out, out: g.kernel,
		stride: g.kDil, padLow: g.padLow, inDil: g.inDil, kDil: g.stride,
	}
}

// contractSplit computes the product g (Batch 1) with its contraction cut into pieces whose partial
// products are summed in a fixed order: for products with a long contraction and a small result
// (kernel gradients), where splitting the rows leaves too few for both cores. The pieces depend
// only on the shapes, so the result is the same whatever the number of cores.
func contractSplit[T float32 | float64](backend *simplego.Backend, g gemm, a, b, c []T) {
	flop := 2 * g.M * g.N * g.K
	n := min(maxChunks, max(1, flop/minChunkFLOP), max(1, g.K/256))
	if n == 1 {
		runGemm(g, a, b, c)
		return
	}
	size := g.M * g.N
	partBuf := getBufferForShape(backend, shapes.Make(dtypes.FromGenericsType[T](), n-1, size))
	parts, _ := flatOf[T](partBuf)
	parallelDo(n, func(i int) {
		lo, hi := i*g.K/n, (i+1)*g.K/n
		p := g
		p.K = hi - lo
		if g.TransA {
			p.OffA += lo * g.LdA // A is stored [K, M]
		} else {
			p.OffA += lo
		}
		p.OffB += lo * g.LdB
		dst := c
		if i > 0 {
			dst = parts[(i-1)*size : i*size]
			p.LdC = g.N
			p.OffC = 0
		}
		switch a := any(a).(type) {
		case []float32:
			gemm32(p, a, any(b).([]float32), any(dst).([]float32))
		case []float64:
			gemm64(p, a, any(b).([]float64), any(dst).([]float64))
		}
	})
	for i := 1; i < n; i++ {
		part := parts[(i-1)*size : i*size]
		for r := range g.M {
			row := c[g.OffC+r*g.LdC : g.OffC+r*g.LdC+g.N]
			for j, v := range part[r*g.N : (r+1)*g.N] {
				row[j] += v
			}
		}
	}
	putBuffer(backend, partBuf)
}

// sameLayout reports whether transposing an array of dimensions dims into the axis order perm
// leaves its elements where they are: the axes longer than 1 keep their relative order (a LeNet's
// first layer has one channel, so its input is channels-first and channels-last at once).
func sameLayout(dims, perm []int) bool {
	prev := -1
	for _, a := range perm {
		if dims[a] == 1 {
			continue
		}
		if a < prev {
			return false
		}
		prev = a
	}
	return true
}

// patchesByColumn reports whether the patches are cheaper to fill transposed ([Cin*K, B*O], in
// runs along the last output axis) than by rows ([B*O, K*Cin], in runs of Cin channels): a run
// costs about runOverhead element copies besides its length, and few input channels make the row
// runs short (a LeNet's first convolution has one).
func (g *convGeometry) patchesByColumn() bool {
	const runOverhead = 8
	n := len(g.out)
	oLast := g.out[n-1]
	k, o := sizeOf(g.kernel), sizeOf(g.out)
	byRow := g.batch * o * k * (runOverhead + g.cin)
	if g.tapRuns() {
		kLast := g.kernel[n-1]
		byRow = g.batch * o * (k / kLast) * (runOverhead + kLast*g.cin)
	}
	byCol := g.cin * k * g.batch * (o / oLast) * (runOverhead + oLast)
	if g.cin > 1 {
		byCol += g.batch * sizeOf(g.in) * g.cin // the transpose to channels-first
	}
	return byCol < byRow
}

// tapRuns reports whether the taps along the last spatial axis read consecutive input positions
// (no kernel or input dilation there), so that im2col copies all of them, channels included, as one
// run where none is padding.
func (g *convGeometry) tapRuns() bool {
	last := len(g.in) - 1
	return g.kDil[last] == 1 && g.inDil[last] == 1
}

// coordTables returns, per spatial axis i, the input coordinate read by output o and tap t at
// [o*K_i + t] (-1 for padding).
func (g *convGeometry) coordTables() [][]int {
	tables := make([][]int, len(g.in))
	for i := range g.in {
		t := make([]int, g.out[i]*g.kernel[i])
		for o := range g.out[i] {
			for k := range g.kernel[i] {
				t[o*g.kernel[i]+k] = g.inputCoord(i, o, k)
			}
		}
		tables[i] = t
	}
	return tables
}

// chunkElems is about how many patch elements one goroutine fills at a time.
const chunkElems = 1 << 15

// im2col fills patches [B*O, K*Cin] from x [B, S..., Cin]: row (b, o), column (t, c) is the input
// value at the coordinates output o and tap t read, channel c, or 0 for padding.
func im2col[T float32 | float64](g convGeometry, x, patches []T) {
	n, cin := len(g.in), g.cin
	tables := g.coordTables()
	inStrides := spatialStrides(g.in, cin)
	oSize, kSize := sizeOf(g.out), sizeOf(g.kernel)
	rows, cols := g.batch*oSize, kSize*cin
	rowsPerChunk := max(1, chunkElems/cols)
	chunks := (rows + rowsPerChunk - 1) / rowsPerChunk
	sSize := sizeOf(g.in) * cin
	tapRuns := g.tapRuns()
	parallelDo(chunks, func(c int) {
		o := make([]int, n)
		t := make([]int, n)
		for row := c * rowsPerChunk; row < min(rows, (c+1)*rowsPerChunk); row++ {
			b, rest := row/oSize, row%oSize
			for i := n - 1; i >= 0; i-- {
				o[i], rest = rest%g.out[i], rest/g.out[i]
			}
			dst := patches[row*cols : (row+1)*cols]
			xb := x[b*sSize : (b+1)*sSize]
			clear(t)
			for tap := 0; tap < kSize; {
				// Offset of the taps' row along all but the last spatial axis.
				base, valid := 0, true
				for i := range n - 1 {
					c := tables[i][o[i]*g.kernel[i]+t[i]]
					if c < 0 {
						valid = false
						break
					}
					base += c * inStrides[i]
				}
				last := n - 1
				kl := g.kernel[last]
				seg := dst[tap*cin : (tap+kl)*cin]
				if !valid {
					clear(seg)
				} else {
					tl := tables[last][o[last]*kl : (o[last]+1)*kl]
					if tapRuns && tl[0] >= 0 && tl[kl-1] >= 0 {
						// Consecutive input positions tl[0]..tl[0]+kl-1, all inside: one copy.
						copy(seg, xb[base+tl[0]*cin:base+(tl[0]+kl)*cin])
					} else if cin == 1 {
						xr := xb[base:]
						for k, c := range tl {
							if c < 0 {
								seg[k] = 0
							} else {
								seg[k] = xr[c]
							}
						}
					} else {
						for k, c := range tl {
							if c < 0 {
								clear(seg[k*cin : (k+1)*cin])
							} else {
								copy(seg[k*cin:(k+1)*cin], xb[base+c*cin:base+(c+1)*cin])
							}
						}
					}
				}
				tap += kl
				advance(t[:last], g.kernel)
			}
		}
	})
}

// im2colT fills pt [Cin*K, B*O] from x [B, Cin, S...]: row (c, t), column (b, o) is the input value
// at the coordinates output o and tap t read, channel c, or 0 for padding. Each row is filled in
// runs along the last output axis; with unit stride and no input dilation there, a run is one copy
// between zeroed edges.
func im2colT[T float32 | float64](g convGeometry, x, pt []T) {
	n := len(g.in)
	last := n - 1
	tables := g.coordTables()
	inStrides := spatialStrides(g.in, 1)
	kSize, oSize, sSize := sizeOf(g.kernel), sizeOf(g.out), sizeOf(g.in)
	oLast, kLast := g.out[last], g.kernel[last]
	outerO := oSize / oLast
	cols := g.batch * oSize
	contiguous := g.stride[last] == 1 && g.inDil[last] == 1
	parallelDo(g.cin*kSize, func(row int) {
		c, tap := row/kSize, row%kSize
		t := make([]int, n)
		unravel(tap, g.kernel, t)
		tl := tables[last]
		// The run of valid o_last: coordinates o*stride + t*kDil - padLow inside [0, S_last).
		lo, hi := 0, 0
		if contiguous {
			first := t[last]*g.kDil[last] - g.padLow[last] // coordinate read by o_last = 0
			lo = min(oLast, max(0, -first))
			hi = max(lo, min(oLast, g.in[last]-first))
		}
		o := make([]int, n)
		dstRow := pt[row*cols : (row+1)*cols]
		for b := range g.batch {
			xb := x[(b*g.cin+c)*sSize : (b*g.cin+c+1)*sSize]
			clear(o)
			for oo := range outerO {
				dst := dstRow[(b*outerO+oo)*oLast : (b*outerO+oo+1)*oLast]
				base, valid := 0, true
				for i := range last {
					ci := tables[i][o[i]*g.kernel[i]+t[i]]
					if ci < 0 {
						valid = false
						break
					}
					base += ci * inStrides[i]
				}
				switch {
				case !valid:
					clear(dst)
				case contiguous:
					first := t[last]*g.kDil[last] - g.padLow[last]
					clear(dst[:lo])
					copy(dst[lo:hi], xb[base+lo+first:base+hi+first])
					clear(dst[hi:])
				default:
					for j := range dst {
						if ci := tl[j*kLast+t[last]]; ci < 0 {
							dst[j] = 0
						} else {
							dst[j] = xb[base+ci]
						}
					}
				}
				advance(o[:last], g.out)
			}
		}
	})
}

// col2im accumulates r [B*S, K*Cout] into y [B, O..., Cout] (zeroed first): input position s and
// tap t add r[(b, s), (t, :)] to the output position o with o*stride + t*kDil - padLow = s*inDil.
// Batches are independent and each is accumulated in a fixed order, so the result does not depend
// on the number of cores.
func col2im[T float32 | float64](g convGeometry, r, y []T) {
	n, cout := len(g.in), g.cout
	sSize, kSize, oSize := sizeOf(g.in), sizeOf(g.kernel), sizeOf(g.out)
	outStrides := spatialStrides(g.out, cout)
	tables := g.outputTables(n) // for each axis, the output coordinate hit by input s and tap t, or -1
	parallelDo(g.batch, func(b int) {
		yb := y[b*oSize*cout : (b+1)*oSize*cout]
		clear(yb)
		s := make([]int, n)
		t := make([]int, n)
		for sIdx := range sSize {
			unravel(sIdx, g.in, s)
			src := r[(b*sSize+sIdx)*kSize*cout:]
			clear(t)
			for tap := range kSize {
				off, valid := 0, true
				for i := range n {
					o := tables[i][s[i]*g.kernel[i]+t[i]]
					if o < 0 {
						valid = false
						break
					}
					off += o * outStrides[i]
				}
				if valid {
					addTo(yb[off:off+cout], src[tap*cout:(tap+1)*cout])
				}
				advance(t, g.kernel)
			}
		}
	})
}

// addTo adds src into dst element by element (the vector loop of package simd for float32: same
// bits as the scalar loop).
func addTo[T float32 | float64](dst, src []T) {
	if d32, ok := any(dst).([]float32); ok && simd.AddTo(d32, any(src).([]float32)) {
		return
	}
	for j, v := range src[:len(dst)] {
		dst[j] += v
	}
}

// outputTables gives, for each of the first axes spatial axes, the output coordinate that input
// position s reaches through tap k, at index s*kernel+k, or -1 where none does (o*stride +
// k*kDil - padLow = s*inDil): col2im's tables.
func (g *convGeometry) outputTables(axes int) [][]int {
	tables := make([][]int, axes)
	for i := range axes {
		tab := make([]int, g.in[i]*g.kernel[i])
		for s := range g.in[i] {
			for k := range g.kernel[i] {
				d := s*g.inDil[i] + g.padLow[i] - k*g.kDil[i]
				o := -1
				if d >= 0 && d%g.stride[i] == 0 && d/g.stride[i] < g.out[i] {
					o = d / g.stride[i]
				}
				tab[s*g.kernel[i]+k] = o
			}
		}
		tables[i] = tab
	}
	return tables
}

// outputRuns reports whether consecutive taps along the last spatial axis reach consecutive output
// positions (unit stride, no dilation there), so that col2imRuns applies.
func (g *convGeometry) outputRuns() bool {
	last := len(g.in) - 1
	return g.stride[last] == 1 && g.kDil[last] == 1 && g.inDil[last] == 1
}

// col2imRuns is col2im for outputRuns geometries, with r's taps along the last axis reversed
// ([B*S, K_0.., reversed K_last, Cout]): input position s and reversed tap t' reach output
// s + padLow - (K_last-1) + t' along the last axis, so the taps of one input position along that
// axis, channels included, add to the output as one run. Every output element receives the same
// terms in the same order as in col2im, so the result is identical.
func col2imRuns[T float32 | float64](g convGeometry, r, y []T) {
	n, cout := len(g.in), g.cout
	last := n - 1
	kl := g.kernel[last]
	sSize, kSize, oSize := sizeOf(g.in), sizeOf(g.kernel), sizeOf(g.out)
	outStrides := spatialStrides(g.out, cout)
	tables := g.outputTables(last) // the same for every axis but the last
	outerTaps := kSize / kl
	parallelDo(g.batch, func(b int) {
		yb := y[b*oSize*cout : (b+1)*oSize*cout]
		clear(yb)
		s := make([]int, n)
		t := make([]int, last)
		for sIdx := range sSize {
			unravel(sIdx, g.in, s)
			first := s[last] + g.padLow[last] - (kl - 1) // output position of reversed tap 0
			lo, hi := max(0, -first), min(kl, g.out[last]-first)
			if lo >= hi {
				continue
			}
			src := r[(b*sSize+sIdx)*kSize*cout:]
			clear(t)
			for ot := range outerTaps {
				off, valid := (first+lo)*cout, true
				for i := range last {
					o := tables[i][s[i]*g.kernel[i]+t[i]]
					if o < 0 {
						valid = false
						break
					}
					off += o * outStrides[i]
				}
				if valid {
					seg := src[(ot*kl+lo)*cout : (ot*kl+hi)*cout]
					addTo(yb[off:off+len(seg)], seg)
				}
				advance(t, g.kernel)
			}
		}
	})
}

// spatialStrides returns the row-major strides of the spatial axes of [B, dims..., channels].
func spatialStrides(dims []int, channels int) []int {
	strides := make([]int, len(dims))
	s := channels
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = s
		s *= dims[i]
	}
	return strides
}
