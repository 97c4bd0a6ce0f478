// Package simd holds the vector (AVX2) loops of fedbayes/simplegoplus's float32 executors, in Go
// assembly (Go does not vectorise loops): element-wise binary ops out[i] = op(x, y) with op one of
// Add, Sub, Mul, Div, Max, Min, where x and y are two slices (VV), a slice and a single value (VS),
// or a single value and a slice (SV); comparisons (CompareVV, CompareVS) and Where32; Exp32; max
// pooling and its gradient (MaxRow, ArgmaxRow); sums of rows (SumRows) and of runs (AddTo); and
// direct convolutions for LeNet's shapes with their kernel gradients (ConvRow, ConvRow16,
// KGradRows, KGradRows16, which also need FMA).
//
// All but the convolutions give the same bits as the scalar Go code they replace: the arithmetic
// ops are IEEE operations, correctly rounded per element whatever the vector width, sums add their
// terms in the same order, Max and Min repeat the instruction sequence Go's compiler emits for the
// builtins max and min on amd64 (see min_sequence in gen.py), so NaN, ±0 and ties come out as in Go,
// and Exp32 repeats fastmath.Exp32's float64 operations. The convolutions use fused multiply-adds in
// a fixed order (their results depend only on their arguments). Kernels that process a multiple of
// 8 (or 32) elements return how many they did; the caller finishes the rest with its scalar loop.
//
// Where the CPU lacks AVX2 (or on other architectures, or with FEDBAYES_SIMD set to off, 0, false,
// no or none: see Disabled) Available is false and the functions do nothing (they return 0 or
// false); FMAAvailable likewise for FMA. The callers then run their Go loops, which give the same
// bits, except that LeNet's convolutions go back to patches and a gemm (other last bits).
// gen.py writes simd_amd64.s (go generate); the other .s files are written by hand.
//
// # Why this package exists, and how to delete it
//
// It works around two gaps. SimpleGo's executors (GoMLX v0.26.0) are scalar Go loops, one float at
// a time, and Go has no stable way to write vector code: the compiler does not vectorise loops, and
// its SIMD package (simd/archsimd) is an experiment in Go 1.26: absent from a default build (it
// needs GOEXPERIMENT=simd) and outside the compatibility promise. Go assembly is the only vector
// code that a default build of the standard toolchain compiles without cgo.
//
// Delete it when one of these is true: archsimd is stable in a Go release fedbayes can require
// (rewrite these kernels as Go with its types, same operations in the same order, and keep the
// bit-for-bit tests), or gomlx/compute's executors, which replace SimpleGo's, are vectorised for
// these ops (then drop this package and the executors that call it). Either way compare first:
// go test -bench 'BenchmarkVV|BenchmarkPoolRow' ./fedbayes/simplegoplus/internal/simd for the
// kernels and make bench for the model steps, and keep whichever is faster.
package simd

//go:generate python3 gen.py

import (
	"os"
	"strings"
)

// laneMasks holds eight lanes on, then eight off: the 8 lanes from index 8-k have the first k on.
// The masked last blocks of the convolution and row-sum loops load their masks from it.
var laneMasks = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// Op is an element-wise binary operation.
type Op int

// The operations, as Go expressions of x and y.
const (
	Add Op = iota // x + y
	Sub           // x - y
	Mul           // x * y
	Div           // x / y
	Max           // max(x, y)
	Min           // min(x, y)
)

// Available reports whether the vector kernels run: an amd64 CPU with AVX2 and an OS that saves
// its registers, and FEDBAYES_SIMD not set to turn them off (see Disabled).
var Available = hasAVX2() && !Disabled(os.Getenv("FEDBAYES_SIMD"))

// Disabled reports whether a value of FEDBAYES_SIMD turns the vector kernels off: "off", "0",
// "false", "no" or "none" in any case, the values that turn OpenBLAS off in FEDBAYES_BLAS.
func Disabled(v string) bool {
	switch strings.ToLower(v) {
	case "off", "0", "false", "no", "none":
		return true
	}
	return false
}

// VV computes out[i] = op(a[i], b[i]) for the first n elements, n a multiple of 8 at most len(out),
// and returns n (0 when Available is false). a, b and out have the same length; out may be a or b.
func VV(op Op, a, b, out []float32) int {
	n := len(out) &^ 7
	if !Available || n == 0 || len(a) < n || len(b) < n {
		return 0
	}
	vv(op, &a[0], &b[0], &out[0], n)
	return n
}

// VS computes out[i] = op(a[i], c) for the first n elements, n a multiple of 8, and returns n (0
// when Available is false). out may be a.
func VS(op Op, a []float32, c float32, out []float32) int {
	n := len(out) &^ 7
	if !Available || n == 0 || len(a) < n {
		return 0
	}
	vs(op, &a[0], &out[0], n, c)
	return n
}

// SV computes out[i] = op(c, b[i]) for the first n elements, n a multiple of 8, and returns n (0
// when Available is false). out may be b.
func SV(op Op, c float32, b []float32, out []float32) int {
	n := len(out) &^ 7
	if !Available || n == 0 || len(b) < n {
		return 0
	}
	sv(op, &b[0], &out[0], n, c)
	return n
}
