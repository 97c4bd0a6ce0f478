// Package fastmath holds table-based exponentials for the hot loops of fedbayes: the element-wise
// Exp of the pure-Go backend and the aggregation rules, which take the exponential of every client
// log-variance. Both compute e^x as 2^k 2^(j/N) e^r in float64 (the table method of Tang (1989),
// "Table-driven implementation of the exponential function in IEEE floating-point arithmetic", ACM
// TOMS 15(2)), several times faster than math.Exp in Go's scalar code: ExpCore and ExpTo with
// N = 1024 and a degree-2 polynomial (relative error below 1e-11, for float64 sums that are rounded to
// float32), Exp32 with N = 32 and degree 5 (float32 results, as the pure-Go backend's Exp).
package fastmath

import "math"

// exp2Table holds the bits of 2^(j/1024) for j < 1024 (exact to the last float64 bit). Entry 32j
// is 2^(j/32), the table of Exp32.
var exp2Table = func() (t [1024]uint64) {
	for j := range t {
		t[j] = math.Float64bits(math.Exp2(float64(j) / 1024))
	}
	return
}()

// Constants of the reductions x = (N k + j) ln2/N + r, N = 1024 (ExpCore) or 32 (Exp32).
const (
	shifter   = 0x1.8p52 // 1.5 * 2^52: adding it rounds to an integer in the low bits
	invLn2    = 1024 / math.Ln2
	ln2By1024 = math.Ln2 / 1024
	invLn232  = 32 / math.Ln2
	ln2By32   = math.Ln2 / 32
)

// ExpSafe bounds the arguments of ExpCore and of ExpTo's table path: [-ExpSafe, ExpSafe], where a
// sum of many results can neither overflow nor lose terms to subnormals.
const ExpSafe = 512

// Exp returns e^x in float64 with a relative error below 1e-11 (ExpCore). It agrees with math.Exp on
// NaN, ±Inf, overflow and underflow.
func Exp(x float64) float64 {
	if !InSafeRange(x) {
		return math.Exp(x)
	}
	return ExpCore(x)
}

// InSafeRange reports whether x lies in [-ExpSafe, ExpSafe] (false for NaN).
func InSafeRange(x float64) bool { return math.Abs(x) <= ExpSafe }

// ExpCore is e^x for |x| <= ExpSafe with a relative error below 1e-11, without the range check: any
// other x (NaN included) gives a meaningless value, never a panic. It is small enough for the
// compiler to inline into a caller's loop, which checks the range (InSafeRange) as it needs.
// n = round(1024 x/ln2) (by adding shifter, which rounds in the FPU), r = x - n ln2/1024 (|r| <=
// ln2/2048; the rounding of the constant adds below 6e-14 at |n| <= 1024 ExpSafe/ln2), e^r by
// 1 + r + r^2/2 (truncation error below r^3/6 < 6.5e-12 relative), and 2^(n/1024) from the table and
// the exponent bits (the low bits of t hold n in two's complement). Exponentials feed sums that are
// rounded to float32 (relative precision 6e-8); the aggregation rules need no more.
func ExpCore(x float64) float64 {
	t := x*invLn2 + shifter
	r := x - (t-shifter)*ln2By1024
	n := math.Float64bits(t)
	return (1 + r*(1+r*0.5)) * math.Float64frombits(exp2Table[n&1023]+(n>>10)<<52)
}

// ExpTo sets dst[i] = Exp(x[i]) for every i < len(x) (dst may be x itself) and returns how many
// x[i] lie outside [-ExpSafe, ExpSafe] or are NaN (those go to math.Exp). It panics if dst is
// shorter than x.
func ExpTo(dst, x []float64) (outside int) {
	dst = dst[:len(x)]
	for i, v := range x {
		if !InSafeRange(v) {
			dst[i] = math.Exp(v)
			outside++
			continue
		}
		dst[i] = ExpCore(v)
	}
	return outside
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
	// Each product is rounded by an explicit conversion before it is added (the Go spec: an explicit
	// conversion rounds, so the compiler may not fuse across it): with GOAMD64=v3 Go would otherwise
	// compile these steps into fused multiply-adds, and the bits would depend on the build and
	// differ from the unfused vector loop of simplegoplus/internal/simd.
	t := float64(float64(x)*invLn232) + shifter
	n := int64(int32(math.Float64bits(t))) // the rounded value of x*32/ln2
	r := float64(x) - float64((t-shifter)*ln2By32)
	p := 1 + float64(r*(1+float64(r*(1.0/2+float64(r*(1.0/6+float64(r*(1.0/24+float64(r*(1.0/120))))))))))
	scale := math.Float64frombits(exp2Table[(n&31)*32] + uint64(n>>5)<<52)
	return float32(p * scale)
}
