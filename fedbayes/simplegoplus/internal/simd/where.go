package simd

import "unsafe"

// Where32 sets y[i] = t[i] if c[i] else f[i] on 32-bit values (float32 bits), where t or f may
// hold one value (used for every i), reading the condition as Go stores a bool (a byte, 0 or 1),
// for the first n elements, n a multiple of 32 at most len(y); it returns n (0 when the kernels are
// unavailable).
func Where32(c []bool, t, f, y []uint32) int {
	n := len(y) &^ 31
	if !Available || n == 0 || len(c) < n || len(t) == 0 || len(f) == 0 ||
		(len(t) != 1 && len(t) < n) || (len(f) != 1 && len(f) < n) {
		return 0
	}
	cb := (*uint8)(unsafe.Pointer(&c[0]))
	switch {
	case len(t) != 1 && len(f) != 1:
		whereVV32(cb, &t[0], &f[0], &y[0], n)
	case len(t) != 1:
		whereVS32(cb, &t[0], &f[0], &y[0], n)
	case len(f) != 1:
		whereSV32(cb, &t[0], &f[0], &y[0], n)
	default:
		whereSS32(cb, &t[0], &f[0], &y[0], n)
	}
	return n
}
