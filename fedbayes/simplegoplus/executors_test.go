package simplegoplus

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// TestInternalsLayout fails when a GoMLX upgrade changes SimpleGo's internals that internals.go
// mirrors: the Node and Buffer layouts, the node data of DotGeneral and ConvGeneral, and the
// executor table reached through go:linkname. When it fails, the fast executors are already off
// (internalsOK, viewData): update the mirrors or follow the route to delete in internals.go.
func TestInternalsLayout(t *testing.T) {
	// make test's test-fallback runs this package with FEDBAYES_SIMD=off to test the Go loops: that
	// run must not quietly test the vector kernels again.
	if v := os.Getenv("FEDBAYES_SIMD"); simd.Disabled(v) && (simd.Available || simd.FMAAvailable || directConvInUse()) {
		t.Fatalf("FEDBAYES_SIMD=%s, yet the vector kernels are on (AVX2 %v, FMA %v, direct convolutions %v)",
			v, simd.Available, simd.FMAAvailable, directConvInUse())
	}
	if !mirrorsMatch(reflect.TypeFor[nodeMirror](), reflect.TypeFor[simplego.Node]()) {
		t.Errorf("nodeMirror no longer matches simplego.Node")
	}
	if !mirrorsMatch(reflect.TypeFor[bufferMirror](), reflect.TypeFor[simplego.Buffer]()) {
		t.Errorf("bufferMirror no longer matches simplego.Buffer")
	}
	// Node data of real nodes, built by SimpleGo's own builder.
	b := stockBackend().Builder("layout").(*simplego.Builder)
	x, err := b.Parameter("x", shapes.Make(dtypes.Float32, 2, 3, 4), nil)
	if err != nil {
		t.Fatal(err)
	}
	dot, err := b.DotGeneral(x, []int{2}, []int{0}, x, []int{2}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	// SimpleGo returns a Reshape of the DotGeneral node.
	dotNode := nodeInputs(dot.(*simplego.Node))[0]
	if mirrorNode(dotNode).opType != backends.OpTypeDotGeneral {
		t.Fatalf("the input of DotGeneral's Reshape is %s, not the DotGeneral node", mirrorNode(dotNode).opType)
	}
	if p, ok := viewData[dotGeneralData](nodeData(dotNode)); !ok {
		t.Errorf("dotGeneralData no longer mirrors SimpleGo's DotGeneral node data (%T)", nodeData(dotNode))
	} else if p.batchSize != 2 || p.lhsCrossSize != 3 || p.contractingSize != 4 || !slices.Equal(p.lhsBatchAxes, []int{0}) {
		t.Errorf("dotGeneralData reads batch %d cross %d contracting %d batch axes %v; want 2, 3, 4, [0]",
			p.batchSize, p.lhsCrossSize, p.contractingSize, p.lhsBatchAxes)
	}
	img, _ := b.Parameter("img", shapes.Make(dtypes.Float32, 1, 5, 5, 2), nil)
	ker, _ := b.Parameter("ker", shapes.Make(dtypes.Float32, 3, 3, 2, 4), nil)
	axes := backends.ConvolveAxesConfig{InputBatch: 0, InputSpatial: []int{1, 2}, InputChannels: 3,
		KernelSpatial: []int{0, 1}, KernelInputChannels: 2, KernelOutputChannels: 3,
		OutputBatch: 0, OutputSpatial: []int{1, 2}, OutputChannels: 3}
	conv, err := b.ConvGeneral(img, ker, axes, []int{2, 1}, [][2]int{{1, 0}, {0, 1}}, []int{1, 1}, []int{1, 1}, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := viewData[convData](nodeData(conv.(*simplego.Node))); !ok {
		t.Errorf("convData no longer mirrors SimpleGo's ConvGeneral node data (%T)", nodeData(conv.(*simplego.Node)))
	} else if !slices.Equal(p.strides, []int{2, 1}) || p.paddings[1] != [2]int{0, 1} || p.axes.InputChannels != 3 {
		t.Errorf("convData reads strides %v paddings %v axes %+v", p.strides, p.paddings, p.axes)
	}
	if !internalsOK {
		t.Errorf("internalsOK is false: the fast executors are off")
	}
	// The linknamed executor table holds our executors, every one init registers: if SimpleGo
	// renames or moves the table, or gives up one of these ops, this fails.
	want := map[backends.OpType]executor{backends.OpTypeBroadcastInDim: execBroadcastInDim,
		backends.OpTypeWhere: execWhere, backends.OpTypeSlice: execSlice,
		opTiledPool: execTiledPool, opSelectScatter: execSelectScatter}
	for _, ops := range []struct {
		ops  []backends.OpType
		exec executor
	}{{reduceOps, execReduce}, {compareOps, execCompare}, {unaryOps, execUnary}, {binaryOps, execBinary}} {
		for _, op := range ops.ops {
			want[op] = ops.exec
		}
	}
	if BLASInUse() {
		want[backends.OpTypeDotGeneral] = execDotGeneral
	}
	if BLASInUse() || directConvInUse() {
		want[backends.OpTypeConvGeneral] = execConvGeneral
	}
	for op, exec := range want {
		if reflect.ValueOf(nodeExecutors[op]).Pointer() != reflect.ValueOf(exec).Pointer() {
			t.Errorf("SimpleGo's %s executor is not ours after init: setNodeExecutor did not take effect", op)
		}
	}
	if !directPooling {
		t.Errorf("the direct pooling executors are off: SimpleGo registers its own SelectAndScatter executor now?")
	}
	t.Logf("kernels: %s", Kernels())
}

// TestBLASAvailable fails when OpenBLAS should be there (FEDBAYES_REQUIRE_BLAS=1, set by make test)
// but is not: the suite would otherwise pass silently on the slow path.
func TestBLASAvailable(t *testing.T) {
	if !BLASInUse() {
		if requireBLAS() {
			t.Fatalf("FEDBAYES_REQUIRE_BLAS is set but %s", Kernels())
		}
		t.Skipf("OpenBLAS not in use: %s", Kernels())
	}
}

// TestDotGeneralVsStock compares DotGeneral on this backend (BLAS gemm when in use) with stock
// SimpleGo on random operands in the layouts gemm takes directly (with and without transposes),
// layouts that need a transpose first, batch axes in the middle, and vectors.
func TestDotGeneralVsStock(t *testing.T) {
	for _, tc := range []struct {
		name           string
		lDims, rDims   []int
		lc, lb, rc, rb []int
		tol32          float64
	}{
		{"matmul", []int{7, 5}, []int{5, 9}, []int{1}, nil, []int{0}, nil, 1e-5},
		{"lhs transposed", []int{5, 7}, []int{5, 9}, []int{0}, nil, []int{0}, nil, 1e-5},
		{"rhs transposed", []int{7, 5}, []int{9, 5}, []int{1}, nil, []int{1}, nil, 1e-5},
		{"batched clients", []int{3, 64, 40}, []int{3, 40, 10}, []int{2}, []int{0}, []int{1}, []int{0}, 1e-5},
		{"batched both transposed", []int{3, 40, 64}, []int{3, 10, 40}, []int{1}, []int{0}, []int{2}, []int{0}, 1e-5},
		{"batch axis in the middle", []int{6, 4, 5}, []int{5, 4, 3}, []int{2}, []int{1}, []int{0}, []int{1}, 1e-5},
		{"two contracting axes", []int{4, 3, 5, 2}, []int{3, 2, 6}, []int{1, 3}, nil, []int{0, 1}, nil, 1e-5},
		{"contracting order swapped", []int{4, 3, 5}, []int{5, 3, 2}, []int{2, 1}, nil, []int{0, 1}, nil, 1e-5},
		{"vector dot", []int{17}, []int{17}, []int{0}, nil, []int{0}, nil, 1e-5},
		{"large split rows", []int{300, 200}, []int{200, 150}, []int{1}, nil, []int{0}, nil, 1e-4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, r := randFloats(11, sizeOf(tc.lDims)), randFloats(12, sizeOf(tc.rDims))
			for _, dt := range []dtypes.DType{dtypes.Float64, dtypes.Float32} {
				run := func(be backends.Backend) []float64 {
					out, _ := eval(t, be, func(a, b *Node) *Node {
						a, b = ConvertDType(a, dt), ConvertDType(b, dt)
						return ConvertDType(DotGeneral(a, tc.lc, tc.lb, b, tc.rc, tc.rb), dtypes.Float64)
					}, tensors.FromFlatDataAndDimensions(l, tc.lDims...), tensors.FromFlatDataAndDimensions(r, tc.rDims...))
					return out
				}
				tol := 1e-12
				if dt == dtypes.Float32 {
					tol = tc.tol32
				}
				closeSlices(t, tc.name+" "+dt.String(), run(plusBackend()), run(stockBackend()), tol)
			}
		})
	}
}

// TestElementwiseVsStock compares every replaced unary and binary op with stock SimpleGo's, in
// float32 and float64, on values that include zeros, infinities and NaN, with scalar operands on
// either side, and on tensors large enough to be split over the cores. The ops must agree exactly,
// but Exp in float32, which is within one unit in the last place (fastmath.Exp32; see its TestExp32).
func TestElementwiseVsStock(t *testing.T) {
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 3e38, -3e38, 1e-40, math.Inf(1), math.Inf(-1), math.NaN(), 88, -100, 1e-3}
	n := 3*elemChunk + 17
	x := append(slices.Clone(special), randFloats(21, n-len(special))...)
	for i := len(special); i < n; i++ {
		x[i] *= 30
	}
	y := randFloats(22, n)
	unary := map[string]func(*Node) *Node{"Exp": Exp, "Log": Log, "Neg": Neg, "Abs": Abs, "Sqrt": Sqrt, "Rsqrt": Rsqrt, "Sign": Sign, "Cos": Cos}
	binary := map[string]func(a, b *Node) *Node{"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Max": Max, "Min": Min}
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
		xt, yt := tensors.FromFlatDataAndDimensions(x, n), tensors.FromFlatDataAndDimensions(y, n)
		check := func(name string, f func(a, b *Node) *Node, ulps int) {
			run := func(be backends.Backend) []float64 {
				out, _ := eval(t, be, func(a, b *Node) *Node {
					return ConvertDType(f(ConvertDType(a, dt), ConvertDType(b, dt)), dtypes.Float64)
				}, xt, yt)
				return out
			}
			got, want := run(plusBackend()), run(stockBackend())
			for i := range got {
				if !sameFloat(got[i], want[i], dt, ulps) {
					t.Fatalf("%s %s: element %d (x=%g, y=%g): %g, stock %g", name, dt, i, x[i], y[i], got[i], want[i])
				}
			}
		}
		for name, f := range unary {
			ulps := 0
			if name == "Exp" && dt == dtypes.Float32 {
				ulps = 1
			}
			check(name, func(a, _ *Node) *Node { return f(a) }, ulps)
		}
		for name, f := range binary {
			check(name, f, 0)
			check(name+" scalar rhs", func(a, b *Node) *Node { return f(a, Scalar(a.Graph(), dt, 0.75)) }, 0)
			check(name+" scalar lhs", func(a, b *Node) *Node { return f(Scalar(a.Graph(), dt, -1.5), b) }, 0)
			// The result of a previous op is owned by the executor, which may write into it.
			check(name+" in place", func(a, b *Node) *Node { return f(Neg(a), Abs(b)) }, 0)
		}
	}
}

// sameFloat reports whether a and b (values of dtype dt) are equal, both NaN, or within ulps units
// in the last place of dt.
func sameFloat(a, b float64, dt dtypes.DType, ulps int) bool {
	if a == b {
		return math.Signbit(a) == math.Signbit(b) // +0 and -0 differ
	}
	if math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if ulps == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	if dt == dtypes.Float32 {
		d := int64(math.Float32bits(float32(a))) - int64(math.Float32bits(float32(b)))
		return d >= -int64(ulps) && d <= int64(ulps)
	}
	d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
	return d >= -int64(ulps) && d <= int64(ulps)
}

// TestBroadcastInDimVsStock compares broadcasts (copy runs, repeat runs, mixed, scalars, bools).
func TestBroadcastInDimVsStock(t *testing.T) {
	for _, tc := range []struct {
		in, out []int
		axes    []int
	}{
		{[]int{5}, []int{3, 4, 5}, []int{2}},
		{[]int{3}, []int{3, 4, 5}, []int{0}},
		{[]int{4}, []int{3, 4, 5}, []int{1}},
		{[]int{3, 5}, []int{3, 4, 5}, []int{0, 2}},
		{[]int{1}, []int{6, 7}, []int{1}},
		{[]int{}, []int{2, 3}, []int{}},
		{[]int{2, 1, 3}, []int{2, 4, 3}, []int{0, 1, 2}},
	} {
		x := randFloats(5, sizeOf(tc.in))
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Bool} {
			run := func(be backends.Backend) []float64 {
				out, _ := eval(t, be, func(a *Node) *Node {
					var v *Node
					if dt == dtypes.Bool {
						v = GreaterThan(a, ScalarZero(a.Graph(), a.DType()))
					} else {
						v = ConvertDType(a, dt)
					}
					var expanded []int
					for a := range tc.out {
						if !slices.Contains(tc.axes, a) {
							expanded = append(expanded, a)
						}
					}
					if len(expanded) == 0 {
						v = BroadcastToDims(v, tc.out...)
					} else {
						v = ExpandAndBroadcast(v, tc.out, expanded)
					}
					return ConvertDType(v, dtypes.Float64)
				}, tensors.FromFlatDataAndDimensions(x, tc.in...))
				return out
			}
			closeSlices(t, "BroadcastInDim", run(plusBackend()), run(stockBackend()), 0)
		}
	}
}

// TestSameResultAnyCores checks that a LeNet training step gives bit-identical parameters with one
// core and with two: the work is split by shape, never by the number of cores.
func TestSameResultAnyCores(t *testing.T) {
	losses := func(procs int) []float64 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		tr := newTrainer(plusBackend(), lenetModel(10, 0), optimizers.Adam().Done(), 3)
		return trainSteps(t, tr, 4, func(step int) (*tensors.Tensor, *tensors.Tensor) {
			return syntheticBatch(uint64(step), 64, 10, []int{28, 28, 1})
		})
	}
	one, two := losses(1), losses(2)
	if !slices.Equal(one, two) {
		t.Fatalf("losses differ between GOMAXPROCS=1 (%v) and 2 (%v)", one, two)
	}
}

// TestReduceVsStock compares ReduceSum/Max/Min over leading, middle, trailing and all axes (and a
// non-contiguous pair, which stays SimpleGo's) with stock SimpleGo: the results must be identical.
func TestReduceVsStock(t *testing.T) {
	dims := []int{3, 70, 5, 130}
	x := randFloats(8, sizeOf(dims))
	for _, axes := range [][]int{{0}, {1}, {3}, {1, 2}, {2, 3}, {0, 1, 2, 3}, {0, 2}} {
		for name, f := range map[string]func(*Node, ...int) *Node{"Sum": ReduceSum, "Max": ReduceMax, "Min": ReduceMin} {
			for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
				run := func(be backends.Backend) []float64 {
					out, _ := eval(t, be, func(a *Node) *Node {
						return ConvertDType(f(ConvertDType(a, dt), axes...), dtypes.Float64)
					}, tensors.FromFlatDataAndDimensions(x, dims...))
					return out
				}
				closeSlices(t, fmt.Sprintf("Reduce%s%v %s", name, axes, dt), run(plusBackend()), run(stockBackend()), 0)
			}
		}
	}
}

// TestBroadcastingBinaryVsStock compares binary ops whose operands broadcast along some axes (a bias
// over a batch, a per-client scale) with stock SimpleGo, which walks them with an index iterator.
func TestBroadcastingBinaryVsStock(t *testing.T) {
	for _, tc := range []struct{ a, b []int }{
		{[]int{4, 3, 5}, []int{4, 1, 5}},
		{[]int{1, 3, 1}, []int{4, 3, 5}},
		{[]int{2, 70, 130}, []int{2, 70, 1}},
		// Biases: periodic along the flat output, on either side, in one chunk or several.
		{[]int{2, 70, 130}, []int{1, 1, 130}},
		{[]int{1, 70, 130}, []int{2, 70, 130}},
		{[]int{8, 40, 40, 6}, []int{1, 1, 1, 6}},
		{[]int{3, 5}, []int{1, 5}},
		// Per-client biases [K, 1, ..., 1, C]: periodic within each client's block.
		{[]int{10, 8, 12, 12, 6}, []int{10, 1, 1, 1, 6}},
		{[]int{3, 1, 7}, []int{3, 600, 7}},
		{[]int{10, 64, 10}, []int{10, 64, 1}}, // short blocks: expanded
		{[]int{2, 9000, 6}, []int{2, 1, 6}},
		{[]int{1, 4, 5}, []int{1, 1, 5}},
		{[]int{3, 4, 5}, []int{3, 1, 1}},
	} {
		a, b := randFloats(3, sizeOf(tc.a)), randFloats(4, sizeOf(tc.b))
		for name, f := range map[string]func(a, b *Node) *Node{"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Max": Max, "Min": Min} {
			for _, form := range []struct {
				shared bool
				dt     dtypes.DType
			}{{false, dtypes.Float32}, {true, dtypes.Float32}, {false, dtypes.Float64}} {
				shared := form.shared
				run := func(be backends.Backend) []float64 {
					out, _ := eval(t, be, func(x, y *Node) *Node {
						x, y = ConvertDType(Neg(x), form.dt), ConvertDType(Neg(y), form.dt)
						r := f(x, y)
						if shared { // x and y are used again: the op cannot write into them
							r = Add(Add(r, ReduceAllSum(x)), ReduceAllSum(y))
						}
						return ConvertDType(r, dtypes.Float64)
					}, tensors.FromFlatDataAndDimensions(a, tc.a...), tensors.FromFlatDataAndDimensions(b, tc.b...))
					return out
				}
				closeSlices(t, fmt.Sprintf("%s %v %v %v", name, tc.a, tc.b, form), run(plusBackend()), run(stockBackend()), 0)
			}
		}
	}
}

// TestMinMaxGradientVsStock compares the Max and Min gradients (ReLU's among them) with GoMLX's
// stock gradient on stock SimpleGo, on values with ties, zeros, infinities and NaN: the same values
// (zeros compared without their sign).
func TestMinMaxGradientVsStock(t *testing.T) {
	a := []float64{1, -2, 0, 3, 3, math.Inf(1), math.Inf(-1), math.NaN(), -0.5, 2}
	b := []float64{0, 0, 0, 3, 4, math.Inf(1), 1, 0, math.NaN(), -1}
	w := []float64{0.5, -1, 2, -3, 1, 1, -2, 1, 1, -0.25}
	for name, f := range map[string]func(x, y *Node) *Node{"Max": Max, "Min": Min, "Relu": func(x, _ *Node) *Node { return Max(x, ZerosLike(x)) },
		// Clamps against a scalar bound (3 is tied with two of x).
		"Max scalar": func(x, _ *Node) *Node { return Max(x, Scalar(x.Graph(), x.DType(), 3)) },
		"Min scalar": func(x, _ *Node) *Node { return Min(x, Scalar(x.Graph(), x.DType(), 3)) },
		"clamp": func(x, _ *Node) *Node {
			return Min(Max(x, Scalar(x.Graph(), x.DType(), -1)), Scalar(x.Graph(), x.DType(), 2))
		}} {
		run := func(be backends.Backend) []float64 {
			out, _ := eval(t, be, func(x, y, w *Node) *Node {
				g := Gradient(ReduceAllSum(Mul(f(x, y), w)), x, y)
				return Concatenate([]*Node{g[0], g[1]}, 0)
			}, tensors.FromFlatDataAndDimensions(a, len(a)), tensors.FromFlatDataAndDimensions(b, len(b)), tensors.FromFlatDataAndDimensions(w, len(w)))
			return out
		}
		got, want := run(plusBackend()), run(stockBackend())
		for i := range got {
			if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%s gradient element %d: %g, stock %g", name, i, got[i], want[i])
			}
		}
	}
}

// TestCompareAndWhereVsStock compares the comparisons and Where (with single-value branches, and a
// branch the executor owns) with stock SimpleGo on values with ties, infinities and NaN.
func TestCompareAndWhereVsStock(t *testing.T) {
	n := 2*elemChunk + 5
	x := append([]float64{0, 1, math.NaN(), math.Inf(1), -1}, randFloats(40, n-5)...)
	y := append([]float64{0, 2, 0, math.Inf(1), math.NaN()}, randFloats(41, n-5)...)
	cmp := map[string]func(a, b *Node) *Node{"LessThan": LessThan, "LessOrEqual": LessOrEqual, "GreaterThan": GreaterThan, "GreaterOrEqual": GreaterOrEqual}
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.Float64} {
		for name, c := range cmp {
			for _, form := range []string{"tensors", "scalar", "scalar lhs", "owned"} {
				run := func(be backends.Backend) []float64 {
					out, _ := eval(t, be, func(a, b *Node) *Node {
						a, b = ConvertDType(a, dt), ConvertDType(b, dt)
						cond := c(a, b)
						switch form {
						case "scalar":
							cond = c(a, Scalar(a.Graph(), dt, 0.25))
							return ConvertDType(Where(cond, Scalar(a.Graph(), dt, 3), b), dtypes.Float64)
						case "scalar lhs":
							cond = c(Scalar(a.Graph(), dt, 0.25), b)
							return ConvertDType(Where(cond, a, Scalar(a.Graph(), dt, -2)), dtypes.Float64)
						case "owned":
							return ConvertDType(Where(cond, Neg(a), Abs(b)), dtypes.Float64)
						}
						return ConvertDType(Where(cond, a, b), dtypes.Float64)
					}, tensors.FromFlatDataAndDimensions(x, n), tensors.FromFlatDataAndDimensions(y, n))
					return out
				}
				got, want := run(plusBackend()), run(stockBackend())
				for i := range got {
					if got[i] != want[i] && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
						t.Fatalf("%s %s %s: element %d: %g, stock %g", name, form, dt, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestCompareKernelUnknownOp checks that compareKernel panics (a broken internal invariant) when
// given an op that is not one of compareOps, in every operand form, instead of computing another
// comparison.
func TestCompareKernelUnknownOp(t *testing.T) {
	long, one := make([]float32, 20), []float32{1}
	for _, tc := range []struct {
		name string
		a, b []float32
		n    int
	}{{"slices", long, long, 20}, {"short slices", long[:3], long[:3], 3}, {"single right", long, one, 20},
		{"single left", one, long, 20}, {"two singles", one, one, 20}} {
		for _, op := range []backends.OpType{backends.OpTypeAdd, backends.OpTypeEqual} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s, %s: no panic", tc.name, op)
					}
				}()
				compareKernel(op, tc.a, tc.b, make([]bool, tc.n))
			}()
		}
	}
}

// TestBLASCore: with OpenBLAS in use, BLASCore names the kernels it chose, which its configuration
// line (in Kernels, and so in every run's provenance) also names; without it, "".
func TestBLASCore(t *testing.T) {
	core := BLASCore()
	if !BLASInUse() {
		if core != "" {
			t.Errorf("BLASCore %q without OpenBLAS", core)
		}
		return
	}
	if core == "" || !strings.Contains(Kernels(), core) {
		t.Errorf("BLASCore %q: want a core name that Kernels (%q) also states", core, Kernels())
	}
	if want := os.Getenv("OPENBLAS_CORETYPE"); want != "" && !strings.EqualFold(want, core) {
		t.Logf("OPENBLAS_CORETYPE=%s, core %s (OpenBLAS may map one core to another)", want, core)
	}
}
