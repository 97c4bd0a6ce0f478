package simd

import "math"

// expConsts are fastmath.Exp32's constants, as Go rounds them to float64: 32/ln2, 1.5*2^52, ln2/32
// and the polynomial's coefficients 1/120, 1/24, 1/6, 1/2, 1.
var expConsts = [8]float64{32 / math.Ln2, 0x1.8p52, math.Ln2 / 32, 1.0 / 120, 1.0 / 24, 1.0 / 6, 1.0 / 2, 1}

// exp2By32 holds the bits of 2^(j/32), j < 32, computed as fastmath's table does.
var exp2By32 = func() (t [32]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(32*j) / 1024))
	}
	return
}()

// expLimits are Exp32's bounds as float32 (above the first +Inf, below the second 0) and +Inf.
var expLimits = [3]float32{88.8, -104, float32(math.Inf(1))}

// Exp32 sets y[i] = e^x[i] for the first n elements, n a multiple of 8 at most len(y), with the
// computation of fastmath.Exp32 (its table method in float64 on vectors of 4, the same operations in
// the same order: the same bits), and returns n (0 when the kernels are unavailable). y may be x.
func Exp32(x, y []float32) int {
	n := len(y) &^ 7
	if !Available || n == 0 || len(x) < n {
		return 0
	}
	exp32(&x[0], &y[0], n, &expConsts[0], &exp2By32[0], &expLimits[0])
	return n
}
