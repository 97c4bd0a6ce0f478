package models

import (
	"errors"
	"fmt"
)

// catch runs fn and converts a panic (GoMLX reports graph-building and execution errors by panicking)
// into an error. It stands in for exceptions.TryCatch[error], whose module is not a direct dependency.
func catch(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case error:
				err = e
			case string:
				err = errors.New(e)
			default:
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	fn()
	return nil
}

// panicf panics with a formatted error (inside graph building, where GoMLX itself panics; the public
// API converts it back with catch).
func panicf(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}
