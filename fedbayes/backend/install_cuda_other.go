//go:build !(linux && amd64)

package backend

import (
	"fmt"
	"runtime"
)

func hasGPU() bool { return false }

func installCUDA(string, bool) error {
	return fmt.Errorf("go-xla installs the CUDA plugin on linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
}
