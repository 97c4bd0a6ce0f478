package models

import "fmt"

// panicf panics with a formatted error (inside graph building, where GoMLX itself panics; the public
// API converts it back with catch.Do from fedbayes/internal/catch).
func panicf(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}
