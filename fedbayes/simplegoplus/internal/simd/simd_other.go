//go:build !amd64

package simd

// Other architectures have no vector kernels: hasAVX2 is false, so Available and FMAAvailable are
// false, every exported function returns before calling the kernels below, and callers keep their
// Go loops. The empty kernels only satisfy the compiler.

func hasAVX2() bool { return false }

func vv(Op, *float32, *float32, *float32, int) {}
func vs(Op, *float32, *float32, int, float32)  {}
func sv(Op, *float32, *float32, int, float32)  {}

func maxRow32(x, out *float32, taps *int, nTaps, n, inStep, run int)                  {}
func argmaxRow32(x, src, out *float32, taps *int, nTaps, n, inStep, run, srcStep int) {}

func sumRows32(x, dst *float32, rows, width, stride int) {}
func addTo32(dst, src *float32, n int)                   {}

func compareVV(Cmp, *float32, *float32, *bool, int) {}
func compareVS(Cmp, *float32, *bool, int, float32)  {}

func whereVV32(c *uint8, t, f, y *uint32, n int) {}
func whereVS32(c *uint8, t, f, y *uint32, n int) {}
func whereSV32(c *uint8, t, f, y *uint32, n int) {}
func whereSS32(c *uint8, t, f, y *uint32, n int) {}

func hasFMA() bool                                                                          { return false }
func convRow32(x, w *float32, offs *int, nTaps int, out *float32, n, cout int, mask *int32) {}

func kgradRows32(x, dy *float32, offs *int, rows, n, xStride, cout int, acc *float32, mask *int32) {
}

func convRow16(x, w *float32, offs *int, nTaps, cin int, out *float32, n int) {}

func kgradRows16(x, dy *float32, offs *int, rows, n, xStride, pixStride int, acc *float32) {}

func exp32(x, y *float32, n int, consts *float64, table *uint64, limits *float32) {}
