package simplegoplus

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
)

// BackendName is the name under which this backend is registered with GoMLX: use it in
// $GOMLX_BACKEND ("simplegoplus", or "simplegoplus:parallelism=2" with any SimpleGo option).
const BackendName = "simplegoplus"

func init() {
	backends.Register(BackendName, New)
}

// Backend is SimpleGo with the ops GoMLX v0.26.0's SimpleGo lacks added on top. Buffers, execution
// and every op SimpleGo implements are SimpleGo's own; only the Builder is wrapped.
type Backend struct {
	*simplego.Backend
}

// Compile-time check that Backend implements backends.Backend.
var _ backends.Backend = (*Backend)(nil)

// New creates the backend. The configuration is passed to SimpleGo (for example "parallelism=2");
// an unknown option is an error.
//
// Unless the configuration sets "parallelism" or an ops mode, SimpleGo runs its ops one at a time
// with unlimited worker parallelism ("parallelism=-1,ops_sequential"):
//
//   - ops_sequential: SimpleGo v0.26.0's parallel op scheduler (ops_parallel) decides that an op
//     owns an input buffer, and may overwrite it, by reading a use counter without the lock that
//     guards it; `go test -race` reports it, with the buffer of one op written while another reads
//     it. One op at a time has no such race. The second core is used inside the ops instead: BLAS
//     gemm, patches, pooling and element-wise executors split their work (executors.go).
//   - parallelism=-1: SimpleGo's bounded worker pool deadlocks when as many DotGenerals as it has
//     slots run at once, each holding a slot while it waits for slots for its own sub-tasks (seen in
//     LeNet training without OpenBLAS). Unlimited parallelism cannot deadlock.
func New(config string) (backends.Backend, error) {
	quiet := false
	if !strings.Contains(config, "parallelism") && !strings.Contains(config, "ops_") {
		config = strings.TrimSuffix("parallelism=-1,ops_sequential,"+config, ",")
		quiet = true
	}
	inner, err := newSimpleGo(config, quiet)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", BackendName, err)
	}
	sg, ok := inner.(*simplego.Backend)
	if !ok {
		return nil, fmt.Errorf("%s: simplego.New returned %T, expected *simplego.Backend", BackendName, inner)
	}
	ours.Store(sg, struct{}{})
	return &Backend{Backend: sg}, nil
}

// Name returns the short name of the backend.
func (b *Backend) Name() string { return "SimpleGo+ (" + BackendName + ")" }

// String returns the registered name of the backend.
func (b *Backend) String() string { return BackendName }

// Description describes the backend in a few words.
func (b *Backend) Description() string {
	return "SimpleGo (pure Go) with Reverse, Pad, SelectAndScatter, DynamicSlice/DynamicUpdateSlice, " +
		"an im2col ConvGeneral and a DotGeneral-based gradient added by fedbayes"
}

// Capabilities returns SimpleGo's capabilities plus the ops this package adds.
func (b *Backend) Capabilities() backends.Capabilities {
	c := simplego.Capabilities.Clone()
	for _, op := range addedOps {
		c.Operations[op] = true
	}
	return c
}

// addedOps lists the ops this package implements on top of SimpleGo.
var addedOps = []backends.OpType{
	backends.OpTypeReverse,
	backends.OpTypePad,
	backends.OpTypeSelectAndScatterMax,
	backends.OpTypeSelectAndScatterMin,
	backends.OpTypeDynamicSlice,
	backends.OpTypeDynamicUpdateSlice,
}

// Builder creates a computation builder: SimpleGo's, with the added ops.
func (b *Backend) Builder(name string) backends.Builder {
	inner := b.Backend.Builder(name).(*simplego.Builder)
	return &Builder{Builder: inner}
}

// Builder wraps simplego.Builder. Every op it adds is expressed with ops SimpleGo implements, so the
// nodes it returns are ordinary SimpleGo nodes and compilation and execution are SimpleGo's.
type Builder struct {
	*simplego.Builder

	// padded remembers the ops that are zero apart from pieces along one axis (padsum.go).
	padded map[backends.Op]zeroPadded
}

// Compile-time check that Builder implements backends.Builder.
var _ backends.Builder = (*Builder)(nil)

// stdoutMu serialises the short swap of os.Stdout in newSimpleGo.
var stdoutMu sync.Mutex

// newSimpleGo calls simplego.New. With quiet set, the line SimpleGo prints on stdout when
// parallelism is configured ("SimpleGo backend: parallelism set to ...") is discarded, so that a
// default the user did not ask for does not write into a program's output.
func newSimpleGo(config string, quiet bool) (backends.Backend, error) {
	if !quiet {
		return simplego.New(config)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return simplego.New(config)
	}
	defer devNull.Close()
	stdoutMu.Lock()
	defer stdoutMu.Unlock()
	saved := os.Stdout
	os.Stdout = devNull
	defer func() { os.Stdout = saved }()
	return simplego.New(config)
}
