//go:build !amd64

package simd

func hasAVX2() bool { return false }

func vv(Op, *float32, *float32, *float32, int) {}
func vs(Op, *float32, *float32, int, float32)  {}
func sv(Op, *float32, *float32, int, float32)  {}
