package simplegoplus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Backends shared by the tests: this package's and stock SimpleGo, both created once.
var (
	plusBackend = sync.OnceValue(func() backends.Backend {
		b, err := New(os.Getenv("FEDBAYES_TEST_BACKEND_CONFIG"))
		if err != nil {
			panic(err)
		}
		return b
	})
	// Stock SimpleGo runs its ops one at a time too: its parallel scheduler has the data race
	// described in New (an op may overwrite an input another op still reads), which the race
	// detector reports in the tests that compare executors that write in place.
	stockBackend = sync.OnceValue(func() backends.Backend {
		b, err := simplego.New("ops_sequential")
		if err != nil {
			panic(err)
		}
		return b
	})
)

// catch runs fn and returns whatever it panicked with, as an error (nil if it returned).
func catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	fn()
	return nil
}

// randFloats returns n values uniform in [-1, 1) from a fixed seed.
func randFloats(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 42))
	out := make([]float64, n)
	for i := range out {
		out[i] = 2*r.Float64() - 1
	}
	return out
}

// eval runs fn on backend with inputs (tensors) and returns the flat float64 values and dims of the
// first output.
func eval(t *testing.T, be backends.Backend, fn any, inputs ...any) ([]float64, []int) {
	t.Helper()
	exec, err := NewExecAny(be, fn)
	if err != nil {
		t.Fatalf("NewExec: %v", err)
	}
	// Tensors stick to the backend they were first used on: give each run its own copies.
	inputs = slices.Clone(inputs)
	for i, in := range inputs {
		if tt, ok := in.(*tensors.Tensor); ok {
			c, err := tt.LocalClone()
			if err != nil {
				t.Fatal(err)
			}
			inputs[i] = c
		}
	}
	var out []*tensors.Tensor
	if err := catch(func() { out, err = exec.Exec(inputs...) }); err != nil {
		t.Fatalf("exec panicked: %v", err)
	}
	if err != nil {
		t.Fatalf("exec: %v", err)
	}
	return tensors.MustCopyFlatData[float64](out[0]), out[0].Shape().Dimensions
}

// gradCheck compares, in float64 on the given backend, the GoMLX gradient of
// L(x) = sum(w * f(x)) (w fixed random weights) with central finite differences, and returns the
// autodiff gradient.
func gradCheck(t *testing.T, be backends.Backend, f func(x *Node) *Node, x []float64, dims []int, tol float64) []float64 {
	t.Helper()
	xT := tensors.FromFlatDataAndDimensions(x, dims...)
	// Output shape, to draw the weights.
	_, outDims := eval(t, be, func(x *Node) *Node { return ConvertDType(f(x), x.DType()) }, xT)
	n := 1
	for _, d := range outDims {
		n *= d
	}
	wT := tensors.FromFlatDataAndDimensions(randFloats(7, n), outDims...)
	loss := func(x, w *Node) *Node { return ReduceAllSum(Mul(f(x), w)) }
	grad, _ := eval(t, be, func(x, w *Node) *Node { return Gradient(loss(x, w), x)[0] }, xT, wT)

	lossExec, err := NewExec(be, loss)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	xp := append([]float64(nil), x...)
	at := func(v []float64) float64 {
		out := lossExec.MustExec(tensors.FromFlatDataAndDimensions(v, dims...), wT)
		return tensors.MustCopyFlatData[float64](out[0])[0]
	}
	for i := range x {
		xp[i] = x[i] + h
		up := at(xp)
		xp[i] = x[i] - h
		down := at(xp)
		xp[i] = x[i]
		fd := (up - down) / (2 * h)
		if math.Abs(fd-grad[i]) > tol*(1+math.Abs(fd)) {
			t.Fatalf("gradient[%d] = %.10g, finite difference %.10g (dims %v)", i, grad[i], fd, dims)
		}
	}
	return grad
}

// closeSlices fails if a and b differ by more than tol (relative to 1+|a|).
func closeSlices(t *testing.T, what string, a, b []float64, tol float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: lengths %d and %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*(1+math.Abs(a[i])) {
			t.Fatalf("%s: element %d: %.12g vs %.12g", what, i, a[i], b[i])
		}
	}
}

// strides returns the row-major strides of dims.
func stridesOf(dims []int) []int {
	s := make([]int, len(dims))
	acc := 1
	for a := len(dims) - 1; a >= 0; a-- {
		s[a] = acc
		acc *= dims[a]
	}
	return s
}

// unflatten returns the multi-index of flat position i.
func unflatten(i int, dims []int) []int {
	idx := make([]int, len(dims))
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = i % dims[a]
		i /= dims[a]
	}
	return idx
}
