//go:build !linux && !darwin

package backend

import (
	"fmt"
	"runtime"
)

// Probe checks that the file at path is a PJRT plugin. It is implemented on Linux and macOS only.
func Probe(path string) (APIVersion, error) {
	return APIVersion{}, fmt.Errorf("checking PJRT plugins is not implemented on %s", runtime.GOOS)
}
