package simplegoplus

// This file is the only place where fedbayes reaches into SimpleGo's unexported internals. Everything
// here is a workaround for GoMLX v0.26.0, where SimpleGo's op executors, its buffer pool and the data
// of its graph nodes are private:
//
//   - setNodeExecutor fills SimpleGo's package-level executor table; priorityUser (100) is documented
//     there as "custom user overrides". nodeExecutors is read once, at init, to keep the executors we
//     replace so they can still be called (for other backends, dtypes and layouts).
//   - getBufferForShape / putBuffer are SimpleGo's buffer pool, so our executors allocate and free the
//     way SimpleGo's own do.
//   - newNode adds a node to a SimpleGo graph; our Builder uses it for ops whose executor is ours.
//   - nodeMirror and bufferMirror have the memory layout of simplego.Node and simplego.Buffer.
//     TestInternalsLayout checks both against reflect, field by field (name, type, offset), so a GoMLX
//     upgrade that changes them fails a test instead of corrupting memory.
//
// Route to delete: upstream GoMLX moved SimpleGo to github.com/gomlx/compute, whose executors and
// buffers are exported and which has its own packed matmul kernels. When fedbayes can require it,
// register the BLAS executors through its public API (or drop them if its kernels are as fast; see
// docs/pure-go-backend.md for the benchmark to run) and delete this file.

import (
	"reflect"
	"unsafe"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// executor is the signature of SimpleGo's (unexported) nodeExecutor type.
type executor func(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, inputsOwned []bool) (*simplego.Buffer, error)

// priorityUser is SimpleGo's registerPriority for user overrides (exec.go: priorityUser = 100).
const priorityUser = 100

//go:linkname setNodeExecutor github.com/gomlx/gomlx/backends/simplego.setNodeExecutor
func setNodeExecutor(opType backends.OpType, priority int, fn executor)

//go:linkname nodeExecutors github.com/gomlx/gomlx/backends/simplego.nodeExecutors
var nodeExecutors [backends.OpTypeLast]executor

//go:linkname getBufferForShape github.com/gomlx/gomlx/backends/simplego.(*Backend).getBufferForShape
func getBufferForShape(b *simplego.Backend, shape shapes.Shape) *simplego.Buffer

//go:linkname putBuffer github.com/gomlx/gomlx/backends/simplego.(*Backend).putBuffer
func putBuffer(b *simplego.Backend, buffer *simplego.Buffer)

//go:linkname newNode github.com/gomlx/gomlx/backends/simplego.(*Builder).newNode
func newNode(b *simplego.Builder, opType backends.OpType, shape shapes.Shape, inputs ...*simplego.Node) *simplego.Node

// nodeMirror has the layout of simplego.Node (builder.go in v0.26.0).
type nodeMirror struct {
	builderIdx         int
	inputs             []*simplego.Node
	opType             backends.OpType
	shape              shapes.Shape
	builder            *simplego.Builder
	multiOutputsShapes []shapes.Shape
	multiOutputsNodes  []*simplego.Node
	isNodeSelectOutput bool
	selectOutputIdx    int
	data               any
}

// bufferMirror has the layout of simplego.Buffer (buffers.go in v0.26.0).
type bufferMirror struct {
	shape shapes.Shape
	valid bool
	flat  any
}

func mirrorNode(n *simplego.Node) *nodeMirror       { return (*nodeMirror)(unsafe.Pointer(n)) }
func mirrorBuffer(b *simplego.Buffer) *bufferMirror { return (*bufferMirror)(unsafe.Pointer(b)) }

// nodeData returns the op-specific data of a SimpleGo node.
func nodeData(n *simplego.Node) any { return mirrorNode(n).data }

// nodeShape returns the output shape of a SimpleGo node.
func nodeShape(n *simplego.Node) shapes.Shape { return mirrorNode(n).shape }

// nodeInputs returns the input nodes of a SimpleGo node.
func nodeInputs(n *simplego.Node) []*simplego.Node { return mirrorNode(n).inputs }

// bufferShape returns the shape of a SimpleGo buffer.
func bufferShape(b *simplego.Buffer) shapes.Shape { return mirrorBuffer(b).shape }

// flatOf returns the flat data of a buffer as []T; ok is false if it holds another type.
func flatOf[T any](b *simplego.Buffer) ([]T, bool) {
	f, ok := mirrorBuffer(b).flat.([]T)
	return f, ok
}

// mirrorsMatch reports whether mirror has exactly the fields (names, types and offsets) of real.
func mirrorsMatch(mirror, real reflect.Type) bool {
	if mirror.NumField() != real.NumField() || mirror.Size() != real.Size() {
		return false
	}
	for i := range real.NumField() {
		m, r := mirror.Field(i), real.Field(i)
		if m.Name != r.Name || m.Type != r.Type || m.Offset != r.Offset {
			return false
		}
	}
	return true
}

// internalsOK is computed once: the fast executors are registered only when the mirrors match
// SimpleGo's types, so a changed layout falls back to SimpleGo's executors instead of reading garbage.
var internalsOK = mirrorsMatch(reflect.TypeFor[nodeMirror](), reflect.TypeFor[simplego.Node]()) &&
	mirrorsMatch(reflect.TypeFor[bufferMirror](), reflect.TypeFor[simplego.Buffer]())
