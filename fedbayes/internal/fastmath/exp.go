// Package fastmath holds table-based exponentials for the hot loops of fedbayes: the element-wise
// Exp of the pure-Go backend and the aggregation rules, which take the exponential of every client
// log-variance. Both compute e^x as 2^k 2^(j/32) e^r in float64 (the table method of Tang (1989),
// "Table-driven implementation of the exponential function in IEEE floating-point arithmetic", ACM
// TOMS 15(2)), several times faster than math.Exp in Go's scalar code.
package fastmath

import "math"

// exp2Table holds the bits of 2^(j/32) for j < 32 (exact to the last float64 bit).
var exp2Table = func() (t [32]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 32))
	}
	return
}()

// Constants of the reduction x = (32k + j) ln2/32 + r.
const (
	shifter = 0x1.8p52 // 1.5 * 2^52: adding it rounds to an integer in the low bits
	invLn2  = 32 / math.Ln2
	ln2By32 = math.Ln2 / 32
)

// ln2By32Hi and ln2By32Lo split ln2/32 so that n*ln2By32Hi is exact for |n| < 2^21 (Cody & Waite):
// fdlibm's ln2_hi (the top 32 bits of ln2) and ln2_lo (the rest, to float64 precision), over 32.
const (
	ln2By32Hi = 6.93147180369123816490e-01 / 32
	ln2By32Lo = 1.90821492927058770002e-10 / 32
)

// Range of Exp's table path: below expMin the result is subnormal (or 0), above expMax it overflows;
// both go to math.Exp, as does NaN.
const (
	expMin = -708.0
	expMax = 709.0
)

// Exp returns e^x in float64 with a relative error below 5e-15 (math.Exp: about 1e-16). It agrees
// with math.Exp on NaN, ±Inf, overflow and underflow.
func Exp(x float64) float64 {
	if !(x >= expMin && x <= expMax) {
		return math.Exp(x)
	}
	return expTable(x)
}

// expTable is Exp for x in [expMin, expMax]: n = round(32 x/ln2) (by adding shifter, which rounds
// in the FPU), r = x - n ln2/32 in two steps (|r| <= ln2/64), e^r by its degree-5 Taylor
// polynomial (truncation error below 3e-15 relative), and 2^(n/32) from the table and the exponent
// bits.
func expTable(x float64) float64 {
	t := x*invLn2 + shifter
	n := int64(int32(math.Float64bits(t)))
	nf := t - shifter
	r := (x - nf*ln2By32Hi) - nf*ln2By32Lo
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	return p * math.Float64frombits(exp2Table[n&31]+uint64(n>>5)<<52)
}

// ExpTo sets dst[i] = Exp(x[i]) for every i < len(x); dst may be x itself. It panics if dst is
// shorter than x.
func ExpTo(dst, x []float64) {
	dst = dst[:len(x)]
	for i, v := range x {
		if !(v >= expMin && v <= expMax) {
			dst[i] = math.Exp(v)
			continue
		}
		t := v*invLn2 + shifter
		n := int64(int32(math.Float64bits(t)))
		nf := t - shifter
		r := (v - nf*ln2By32Hi) - nf*ln2By32Lo
		p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
		dst[i] = p * math.Float64frombits(exp2Table[n&31]+uint64(n>>5)<<52)
	}
}

// Exp32 is e^x for float32, computed in float64 as 2^k 2^(j/32) e^r, with k and j from rounding
// x 32/ln2 to the nearest integer, |r| <= ln2/64, the table of 2^(j/32) and a degree-5 Taylor
// polynomial for e^r (relative error below 1e-13 before the final rounding to float32). So it
// agrees with float32(math.Exp(float64(x))) except where the exact value lies within about 1e-13 of
// a float32 rounding boundary, and is several times faster. It reduces in one step (r = x - n ln2/32
// with the rounded constant), which is exact enough for float32's range: its results are those of
// the pure-Go backend's Exp executor, bit for bit.
func Exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.8:
		return float32(math.Inf(1))
	case x < -104:
		return 0
	}
	t := float64(x)*invLn2 + shifter
	n := int64(int32(math.Float64bits(t))) // the rounded value of x*32/ln2
	r := float64(x) - (t-shifter)*ln2By32
	p := 1 + r*(1+r*(1.0/2+r*(1.0/6+r*(1.0/24+r*(1.0/120)))))
	scale := math.Float64frombits(exp2Table[n&31] + uint64(n>>5)<<52)
	return float32(p * scale)
}
