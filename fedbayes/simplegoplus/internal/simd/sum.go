package simd

// SumRows adds the rows of x into dst in turn: dst[c] += x[r*stride+c] for r = 0, ..., rows-1, c <
// len(dst), in that order for every c (so the bits are those of the scalar loop that does the
// same). It returns false, doing nothing, when the kernels are unavailable or x is too short.
func SumRows(x []float32, rows, stride int, dst []float32) bool {
	width := len(dst)
	if !Available || rows <= 0 || width == 0 || stride < width || len(x) < (rows-1)*stride+width {
		return false
	}
	sumRows32(&x[0], &dst[0], rows, width, stride)
	return true
}

// AddTo computes dst[i] += src[i] for i < len(dst) (same bits as the scalar loop), and returns
// false, doing nothing, when the kernels are unavailable or src is shorter than dst.
func AddTo(dst, src []float32) bool {
	if !Available || len(src) < len(dst) {
		return false
	}
	if len(dst) > 0 {
		addTo32(&dst[0], &src[0], len(dst))
	}
	return true
}
