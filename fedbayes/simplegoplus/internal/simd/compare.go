package simd

// Cmp is a float comparison, as Go's operators compute it (false when either operand is NaN).
type Cmp int

// The comparisons of x and y.
const (
	Less      Cmp = iota // x < y
	LessEq               // x <= y
	Greater              // x > y
	GreaterEq            // x >= y
)

// CompareVV sets y[i] = a[i] cmp b[i] for the first n elements, n a multiple of 32 at most len(y),
// and returns n (0 when the kernels are unavailable).
func CompareVV(cmp Cmp, a, b []float32, y []bool) int {
	n := len(y) &^ 31
	if !Available || n == 0 || len(a) < n || len(b) < n {
		return 0
	}
	compareVV(cmp, &a[0], &b[0], &y[0], n)
	return n
}

// CompareVS sets y[i] = a[i] cmp c for the first n elements, n a multiple of 32 at most len(y), and
// returns n (0 when the kernels are unavailable).
func CompareVS(cmp Cmp, a []float32, c float32, y []bool) int {
	n := len(y) &^ 31
	if !Available || n == 0 || len(a) < n {
		return 0
	}
	compareVS(cmp, &a[0], &y[0], n, c)
	return n
}
