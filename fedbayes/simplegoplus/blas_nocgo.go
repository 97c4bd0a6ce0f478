//go:build !cgo

package simplegoplus

import "errors"

// loadBLAS without cgo: OpenBLAS cannot be called, so SimpleGo's own executors are kept.
func loadBLAS() (string, error) {
	return "", errors.New("built without cgo (CGO_ENABLED=0), so OpenBLAS cannot be called; " +
		"rebuild with cgo and gcc to use it")
}

// gemm32 is never called without cgo: the BLAS executors are not registered.
func gemm32(g gemm, a, b, c []float32) { panic("simplegoplus: gemm32 called without cgo") }

// gemm64 is never called without cgo: the BLAS executors are not registered.
func gemm64(g gemm, a, b, c []float64) { panic("simplegoplus: gemm64 called without cgo") }

// blasCoreName without cgo: no OpenBLAS is loaded.
func blasCoreName() string { return "" }
