// Package catch converts GoMLX panics into errors. GoMLX reports graph-building and execution
// errors by panicking; fedbayes returns errors at every package boundary, and calls Do there.
package catch

import (
	"errors"
	"fmt"
)

// Do runs fn and returns the value of a panic inside it as an error (nil if fn returns normally).
func Do(fn func()) (err error) {
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
