package simd

// FMAAvailable reports whether ConvRow runs: Available and a CPU with FMA3.
var FMAAvailable = Available && hasFMA()

// ConvRow computes one output row of a valid, unit-stride convolution with one input channel and
// 4 to 8 output channels (LeNet's first layer): out[p*cout+c] = sum over taps t, in order, of
// x[p+offs[t]] * w[t*8+c], for pixels p < n and channels c < cout, with fused multiply-adds
// starting from zero. w holds each tap's cout weights padded to 8 lanes (the padding is not read
// into the outputs). It returns false, doing nothing, when FMAAvailable is false or a length does
// not fit: x must hold every tap of every pixel, out n*cout values, w 8 per tap.
func ConvRow(x, w []float32, offs []int, n, cout int, out []float32) bool {
	// At least 4 channels: the lanes a pixel's store writes past its outputs then stay within the
	// next pixel's.
	if !FMAAvailable || n <= 0 || cout < 4 || cout > 8 || len(offs) == 0 || len(w) < 8*len(offs) ||
		len(out) < n*cout {
		return false
	}
	hi, ok := maxOffset(offs)
	if !ok {
		return false
	}
	if len(x) < hi+n {
		return false
	}
	// Each pixel's 8-lane store reaches 8 values from its first output: in bounds for all but the
	// last pixel (masked) when out has room for them.
	if n > 1 && len(out) < (n-2)*cout+8 {
		return false
	}
	convRow32(&x[0], &w[0], &offs[0], len(offs), &out[0], n, cout, &laneMasks[8-cout])
	return true
}

// KGradTaps is how many taps KGradRows accumulates at a time (one vector register each).
const KGradTaps = 13

// KGradRows adds to acc the kernel gradient of ConvRow's convolution for KGradTaps taps over rows
// output rows of n pixels: for each tap k, acc[k*8+c] += x[r*xStride+p+offs[k]] *
// dy[(r*n+p)*cout+c], with fused multiply-adds, pixels p and rows r in order (so the result depends
// only on the arguments). acc holds 8 lanes per tap, lanes past cout unused. It returns false, doing
// nothing, when FMAAvailable is false, xStride is negative or a length does not fit.
func KGradRows(x, dy []float32, offs []int, rows, n, xStride, cout int, acc []float32) bool {
	if !FMAAvailable || rows <= 0 || n <= 0 || xStride < 0 || cout <= 0 || cout > 8 || len(offs) != KGradTaps ||
		len(acc) < 8*KGradTaps || len(dy) < rows*n*cout {
		return false
	}
	hi, ok := maxOffset(offs)
	if !ok {
		return false
	}
	if len(x) < (rows-1)*xStride+n+hi {
		return false
	}
	kgradRows32(&x[0], &dy[0], &offs[0], rows, n, xStride, cout, &acc[0], &laneMasks[8-cout])
	return true
}

// ConvRow16 computes one output row of a valid, unit-stride convolution with channels last, cin
// input channels and 16 output channels (LeNet's second layer): out[p*16+c] = sum over taps t and
// input channels i, in that order, of x[p*cin+offs[t]+i] * w[(t*cin+i)*16+c], for pixels p < n,
// with fused multiply-adds from zero. It returns false, doing nothing, when FMAAvailable is false or
// a length does not fit.
func ConvRow16(x, w []float32, offs []int, cin, n int, out []float32) bool {
	if !FMAAvailable || n <= 0 || cin <= 0 || len(offs) == 0 || len(w) < len(offs)*cin*16 || len(out) < n*16 {
		return false
	}
	hi, ok := maxOffset(offs)
	if !ok {
		return false
	}
	if len(x) < (n-1)*cin+hi+cin {
		return false
	}
	convRow16(&x[0], &w[0], &offs[0], len(offs), cin, &out[0], n)
	return true
}

// KGradPairs16 is how many (tap, input channel) pairs KGradRows16 accumulates at a time.
const KGradPairs16 = 6

// KGradRows16 adds to acc the kernel gradient of ConvRow16's convolution for KGradPairs16 (tap,
// input channel) pairs over rows output rows of n pixels: for each pair k, acc[k*16+c] +=
// x[r*xStride+p*pixStride+offs[k]] * dy[(r*n+p)*16+c], with fused multiply-adds, pixels p and rows
// r in order. It returns false, doing nothing, when FMAAvailable is false, a stride is negative
// (pixStride must be positive) or a length does not fit.
func KGradRows16(x, dy []float32, offs []int, rows, n, xStride, pixStride int, acc []float32) bool {
	if !FMAAvailable || rows <= 0 || n <= 0 || xStride < 0 || pixStride <= 0 || len(offs) != KGradPairs16 ||
		len(acc) < 16*KGradPairs16 || len(dy) < rows*n*16 {
		return false
	}
	hi, ok := maxOffset(offs)
	if !ok {
		return false
	}
	if len(x) <= (rows-1)*xStride+(n-1)*pixStride+hi {
		return false
	}
	kgradRows16(&x[0], &dy[0], &offs[0], rows, n, xStride, pixStride, &acc[0])
	return true
}

// maxOffset is the largest of the offsets, and false when one is negative (a kernel would read
// before its input).
func maxOffset(offs []int) (int, bool) {
	hi := 0
	for _, o := range offs {
		if o < 0 {
			return 0, false
		}
		hi = max(hi, o)
	}
	return hi, true
}
