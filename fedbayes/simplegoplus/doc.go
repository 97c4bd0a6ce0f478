// Package simplegoplus closes, in one place, the gaps that keep GoMLX v0.26.0's pure-Go backend
// (SimpleGo) from training the fedbayes models, and makes that training fast enough to use.
//
// # Design
//
// GoMLX separates graph building (package graph, which also owns automatic differentiation) from
// backends, which are registered by name and only see a stream of primitive ops. SimpleGo exports its
// Backend and Builder types, but its op executors are private, so new kernels cannot be added from
// outside. This package therefore does two things, neither of which forks or copies GoMLX:
//
//   - Backend "simplegoplus" (BackendName) embeds simplego.Backend and wraps simplego.Builder. The
//     missing ops, and the slow ones worth replacing, are methods of the wrapper that emit ops
//     SimpleGo already executes; everything else, buffers and execution included, is SimpleGo's.
//     The graphs GoMLX builds are unchanged: only their lowering differs.
//   - Two entries of graph.VJPRegistration (DotGeneral and Dot) are replaced at init by gradients
//     written with DotGeneral. They check the graph's backend and defer to GoMLX's own gradient on any
//     other backend (XLA, stock SimpleGo), so nothing here is in the way when XLA is used.
//
// # Gaps closed (GoMLX v0.26.0)
//
//   - Reverse (conv input gradient): one Gather with a constant table of mirrored indices.
//   - Pad (Slice gradient, sum-pool gradient, and used here): Concatenate/Reshape/Slice per axis;
//     interior, negative and positive edges with XLA semantics.
//   - SelectAndScatterMax/Min (max/min-pool gradient): tiled windows (window == stride, no padding:
//     every pooling layer of the models) as Reshape + Reduce + first-match select; any other
//     window/stride/padding as strided Slices, a first-match mask and interior Pads.
//     OpTypeSelectAndScatterSum has no Builder method in v0.26.0, so there is nothing to implement.
//   - DynamicSlice / DynamicUpdateSlice (GoMLX's graph.DynamicSlice and their gradients): Gather with
//     a run-time index vector; element-wise ScatterSum plus an Iota box mask.
//   - ConvGeneral: SimpleGo's is a single-threaded direct loop and rejects the empty strides GoMLX's
//     input gradient passes. It is lowered here to patches (strided Slices) and one DotGeneral with
//     the image batch as a DotGeneral batch axis (so SimpleGo parallelises it), or, when the
//     convolution is mostly padding (the input gradient), to an input-side DotGeneral whose tap
//     slices are shifted into place with Pad. Grouped convolutions stay SimpleGo's.
//   - ReduceWindow: tiled pooling as Reshape + reduction instead of SimpleGo's per-window iterators.
//   - Gradients of DotGeneral and Dot: GoMLX v0.26.0 emits a broadcast Mul of [batch, in, out] and a
//     ReduceSum; here each operand's gradient is one DotGeneral and a Transpose (DotGeneralGradients).
//     The DotGeneral axes of a graph node are unexported: ReadDotGeneralAxes reads them with reflect
//     (read-only, no unsafe) and validates them against the node's shapes, falling back to the stock
//     gradient if anything does not match; a test fails loudly if GoMLX changes that layout.
//
// # Fast executors (internals.go, executors.go, exec_*.go)
//
// SimpleGo keeps its op executors in a package-level table that it fills with setNodeExecutor, with a
// priority level for user overrides. internals.go reaches that function, SimpleGo's buffer pool and
// its node constructor with go:linkname, and reads the unexported fields of nodes and buffers through
// mirror structs whose layout is checked with reflect at init and in TestInternalsLayout (a changed
// layout turns the executors off instead of corrupting memory). The executors registered there:
//
//   - DotGeneral and ConvGeneral through OpenBLAS's sgemm/dgemm (exec_dot.go, exec_conv.go): a
//     convolution is patches times kernel (im2col), or input times kernel scattered into the output
//     (col2im) for the transposed convolutions of input gradients. OpenBLAS is opened at run time
//     with dlopen (blas_cgo.go), so a machine without it, or a build without cgo, keeps SimpleGo's
//     executors and the composed lowering above; Kernels says which path is in use and why.
//   - LeNet-sized float32 convolutions (valid, unit stride; one input channel and 4-8 output
//     channels, or 16 output channels) and their kernel gradients computed directly with AVX2+FMA
//     (conv_direct.go), with or without OpenBLAS.
//   - Tiled max/min pooling and its gradient (SelectAndScatter) as direct loops (exec_pool.go).
//   - Element-wise Add, Sub, Mul, Div, Max, Min, Exp, Log, Neg, Abs, Sqrt, Rsqrt, Sign and
//     BroadcastInDim, split over both cores (exec_elementwise.go); comparisons, Where, reductions
//     and Slice (exec_select.go, exec_reduce.go, exec_slice.go).
//
// SimpleGo's executors are scalar Go loops and Go does not vectorise loops, so the float32 paths
// of these executors call AVX2 kernels in Go assembly (package internal/simd; its doc says why and
// when to delete it). They run where the CPU has AVX2 (FMA too for the direct convolutions) and
// FEDBAYES_SIMD is not off, 0, false, no or none; elsewhere the executors run their Go loops. Every
// kernel but the direct convolutions gives the bits of the Go loop it replaces. The direct
// convolutions sum their taps with fused multiply-adds in order, so LeNet's convolution outputs and
// kernel gradients differ in their last bits between a CPU with AVX2+FMA (direct) and one without,
// or FEDBAYES_SIMD=off (OpenBLAS's gemm, or SimpleGo's lowering without it): a LeNet run is
// reproducible bit for bit on the same kind of CPU with the same FEDBAYES_SIMD and FEDBAYES_BLAS.
// Kernels reports both.
//
// Every split of work depends only on the shapes, never on the number of cores, so results are
// bit-identical whatever GOMAXPROCS is. OpenBLAS runs on one thread per call (set at load); the
// second core comes from this package's own splits, so the two never oversubscribe the machine.
// The executors act only on graphs of this backend: stock SimpleGo ("go") shares the table and keeps
// its own behaviour.
//
// By default SimpleGo runs here with "parallelism=-1,ops_sequential" (see New): its parallel op
// scheduler has a data race, and its bounded worker pool can deadlock.
//
// Measured figures, profiles, what remains slow and why are in docs/pure-go-backend.md.
//
// # Dropping this package
//
// Upstream GoMLX added Reverse (v0.27.0), Pad (v0.27.1), a DotGeneral-based gradient (v0.28.0) and
// SimpleGo pooling gradients (gomlx/compute). Once fedbayes can require such a version: delete this
// package, set fedbayes/backend.PureGo back to simplego.BackendName ("go"), and run the model tests
// and `make bench` to check that stock SimpleGo now trains the CNN at comparable speed; keep the
// ConvGeneral and ReduceWindow lowerings (move them) only if the benchmarks say so. The AVX2
// kernels of internal/simd go with it, or earlier, once Go's simd/archsimd is stable or
// gomlx/compute's executors are vectorised (see that package's doc).
package simplegoplus
