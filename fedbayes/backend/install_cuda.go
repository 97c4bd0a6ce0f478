//go:build linux && amd64

package backend

import "github.com/gomlx/go-xla/pkg/installer"

// hasGPU is go-xla's installer test for an NVIDIA GPU (/dev/nvidia*, else nvidia-smi).
func hasGPU() bool { return installer.HasNvidiaGPU() }

// installCUDA installs jax's CUDA 13 PJRT plugin and the NVIDIA libraries from pypi.org, as go-xla's
// CudaAutoInstall does; with force, also where no GPU is found.
func installCUDA(dir string, force bool) error {
	if force && !installer.HasNvidiaGPU() {
		return installer.CudaInstall("cuda13", "latest", dir, true, installer.Normal)
	}
	return installer.CudaAutoInstall(dir, true, installer.Normal)
}
