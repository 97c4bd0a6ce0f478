package simplegoplus

import (
	"fmt"
	"os"
	"reflect"
	"sync"

	"fedbayes.dev/fedbayes/simplegoplus/internal/simd"
	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/gomlx/gomlx/backends/simplego"
)

// stock holds SimpleGo's own executors for the ops this package replaces. A replacement calls them
// for what it does not handle: graphs of another backend (stock SimpleGo shares the executor table),
// other dtypes, layouts it does not know.
var stock struct {
	dotGeneral, convGeneral, reduceWindow, broadcastInDim, where, slice executor
	elementwise, reduce, compare                                        map[backends.OpType]executor
}

// blasLibrary describes the OpenBLAS library in use; blasErr says why none is (then the BLAS
// executors are not registered and SimpleGo's own run).
var blasLibrary, blasErr = loadBLAS()

func init() {
	stock.dotGeneral = nodeExecutors[backends.OpTypeDotGeneral]
	stock.convGeneral = nodeExecutors[backends.OpTypeConvGeneral]
	stock.reduceWindow = nodeExecutors[backends.OpTypeReduceWindow]
	stock.broadcastInDim = nodeExecutors[backends.OpTypeBroadcastInDim]
	stock.elementwise = make(map[backends.OpType]executor)
	for _, op := range elementwiseOps() {
		stock.elementwise[op] = nodeExecutors[op]
	}
	stock.where = nodeExecutors[backends.OpTypeWhere]
	stock.compare = make(map[backends.OpType]executor)
	for _, op := range compareOps {
		stock.compare[op] = nodeExecutors[op]
	}
	stock.reduce = make(map[backends.OpType]executor)
	for _, op := range reduceOps {
		stock.reduce[op] = nodeExecutors[op]
	}
	if internalsOK && stock.broadcastInDim != nil {
		for _, op := range reduceOps {
			if stock.reduce[op] != nil {
				setNodeExecutor(op, priorityUser, execReduce)
			}
		}
		for _, op := range compareOps {
			if stock.compare[op] != nil {
				setNodeExecutor(op, priorityUser, execCompare)
			}
		}
		if stock.where != nil {
			setNodeExecutor(backends.OpTypeWhere, priorityUser, execWhere)
		}
		setNodeExecutor(backends.OpTypeBroadcastInDim, priorityUser, execBroadcastInDim)
		registerSlice()
		for _, op := range unaryOps {
			if stock.elementwise[op] != nil {
				setNodeExecutor(op, priorityUser, execUnary)
			}
		}
		for _, op := range binaryOps {
			if stock.elementwise[op] != nil {
				setNodeExecutor(op, priorityUser, execBinary)
			}
		}
	}
	if internalsOK && stock.reduceWindow != nil && nodeExecutors[opSelectScatter] == nil {
		setNodeExecutor(opTiledPool, priorityUser, execTiledPool)
		setNodeExecutor(opSelectScatter, priorityUser, execSelectScatter)
		directPooling = true
	}
	if BLASInUse() {
		setNodeExecutor(backends.OpTypeDotGeneral, priorityUser, execDotGeneral)
	}
	if BLASInUse() || directConvInUse() {
		setNodeExecutor(backends.OpTypeConvGeneral, priorityUser, execConvGeneral)
	}
}

// directConvInUse reports whether execConvGeneral computes LeNet-sized float32 convolutions and
// their kernel gradients directly (conv_direct.go), which needs AVX2 and FMA but no BLAS: without
// OpenBLAS it then runs those, and SimpleGo's executor every other convolution.
func directConvInUse() bool {
	return internalsOK && stock.convGeneral != nil && simd.FMAAvailable
}

// directPooling is true when tiled pooling and its gradient run as this package's direct loops
// (execTiledPool, execSelectScatter) rather than as compositions of SimpleGo ops.
var directPooling bool

// errDType is the error of an executor given a dtype it does not compute.
func errDType(op string, dtype dtypes.DType) error {
	return fmt.Errorf("simplegoplus: %s is not implemented for %s", op, dtype)
}

// BLASInUse reports whether DotGeneral (and so every dense layer and convolution) runs on OpenBLAS.
func BLASInUse() bool {
	return internalsOK && blasErr == nil && stock.dotGeneral != nil && stock.convGeneral != nil
}

// BLASCore names the CPU kernels OpenBLAS chose (for example "Haswell" or "SkylakeX": its
// DYNAMIC_ARCH choice for this CPU, or OPENBLAS_CORETYPE), or "" when OpenBLAS is not in use. Kernels
// of different cores sum in different orders, so results on the OpenBLAS path agree to rounding
// between cores, and bit for bit only on one core.
func BLASCore() string {
	if !BLASInUse() {
		return ""
	}
	return blasCoreName()
}

// Kernels describes which CPU kernels this backend uses, in one line, for `fedbayes backend -v`,
// `fedbayes doctor` and provenance: OpenBLAS (with its build configuration) or SimpleGo's own, and why.
func Kernels() string {
	switch {
	case !internalsOK:
		return "SimpleGo's own kernels: SimpleGo's internal layout differs from what fedbayes expects " +
			"(GoMLX upgraded?), so the OpenBLAS executors are off"
	case blasErr != nil:
		own := "SimpleGo's own DotGeneral and convolutions (slow): "
		if directConvInUse() {
			own = "SimpleGo's own DotGeneral and convolutions (slow; the direct LeNet-sized convolutions excepted): "
		}
		return own + blasErr.Error() + "; " + vectorKernels()
	}
	return fmt.Sprintf("OpenBLAS sgemm/dgemm for DotGeneral and convolutions: %s; %s", blasLibrary, vectorKernels())
}

// vectorKernels says whether the float32 loops of package simd run (AVX2, and FMA for the direct
// convolutions, which change results in their last bits), for Kernels.
func vectorKernels() string {
	switch {
	case !simd.Available:
		if v := os.Getenv("FEDBAYES_SIMD"); simd.Disabled(v) {
			return "no AVX2 vector loops (disabled by FEDBAYES_SIMD=" + v + ")"
		}
		return "no AVX2 vector loops (CPU without AVX2, or not amd64)"
	case !simd.FMAAvailable:
		return "AVX2 vector loops for element-wise ops, reductions and pooling (no FMA: no direct convolutions)"
	}
	return "AVX2 vector loops for element-wise ops, reductions, pooling and LeNet-sized direct convolutions (FMA)"
}

// requireBLAS reports whether $FEDBAYES_REQUIRE_BLAS asks for OpenBLAS to be in use (make test sets
// it, so that a machine where the library did not load fails instead of testing only the slow path).
func requireBLAS() bool {
	v := os.Getenv("FEDBAYES_REQUIRE_BLAS")
	return v != "" && v != "0"
}

// ours is the set of SimpleGo backends created by New: the replaced executors act only on their
// graphs, so stock SimpleGo ("go") keeps its own behaviour.
var ours sync.Map // *simplego.Backend -> struct{}

// isOurs reports whether b was created by this package.
func isOurs(b *simplego.Backend) bool {
	_, ok := ours.Load(b)
	return ok
}

// layoutChecks caches, per node-data type, whether it has the layout of a mirror type.
var layoutChecks sync.Map // [2]reflect.Type{mirror, real} -> bool

// viewData returns SimpleGo's node data (a pointer to one of its unexported structs) as *M, after
// checking once per type that M mirrors it field by field; ok is false if it does not.
func viewData[M any](data any) (*M, bool) {
	v := reflect.ValueOf(data)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	key := [2]reflect.Type{reflect.TypeFor[M](), v.Type().Elem()}
	match, seen := layoutChecks.Load(key)
	if !seen {
		match = mirrorsMatch(key[0], key[1])
		layoutChecks.Store(key, match)
	}
	if !match.(bool) {
		return nil, false
	}
	return (*M)(v.UnsafePointer()), true
}
