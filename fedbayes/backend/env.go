package backend

import (
	"os"
	"path/filepath"
	"strings"
)

// This file is the one place where fedbayes sets what differs between the pure-Go and the XLA
// backends (docs/backends.md, "What differs on XLA"):
//
//   - GOMLX_NO_AUTO_INSTALL=1 (package init): GoMLX never downloads a plugin by itself while fedbayes
//     computes; `fedbayes backend install` calls go-xla's installer explicitly instead.
//   - XLA_FLAGS=--xla_gpu_cuda_data_dir=DIR (prepareXLA, for a CUDA plugin): go-xla v0.1.4 sets this
//     flag to a folder under its author's home directory when it finds NVIDIA libraries next to the
//     plugin and XLA_FLAGS does not name one (pkg/pjrt/cuda_linux.go). fedbayes names the real folder
//     first; a value the user set is kept.
//   - TF_CPP_MIN_LOG_LEVEL=2 is set by GoMLX's XLA package itself, so XLA logs only errors.
//
// Data types and determinism need no setting: fedbayes computes in float32 (float64 for numerical
// checks), which XLA supports on CPU and CUDA; see docs/backends.md for what is and is not bitwise
// reproducible on XLA.

// XLAFlagsEnv is the environment variable XLA reads its flags from.
const XLAFlagsEnv = "XLA_FLAGS"

const cudaDataDirFlag = "--xla_gpu_cuda_data_dir"

// CUDADataDir returns the folder holding the CUDA toolkit files XLA needs at run time (bin/ptxas,
// nvvm/libdevice) for the CUDA plugin at pluginPath, or "" if none is found. It looks where go-xla's
// installer puts them (the plugin's own folder, go-xla/nvidia), where go-xla looks (../nvidia from the
// plugin's folder), where pip puts them next to jax's plugin (site-packages/nvidia/cu13 or
// nvidia/cuda_nvcc), then /usr/local/cuda.
func CUDADataDir(pluginPath string) string {
	dir := filepath.Dir(pluginPath)
	parent := filepath.Dir(dir)
	sitePackages := filepath.Dir(parent) // site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so
	for _, d := range []string{
		dir,
		filepath.Join(parent, "nvidia"),
		filepath.Join(parent, "nvidia", "cu13"),
		filepath.Join(sitePackages, "nvidia", "cu13"),
		filepath.Join(sitePackages, "nvidia", "cuda_nvcc"),
		"/usr/local/cuda",
	} {
		if exists(filepath.Join(d, "bin", "ptxas")) || exists(filepath.Join(d, "nvvm", "libdevice")) {
			return d
		}
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// prepareXLA sets the environment the plugin at pluginPath reads when it is loaded, and returns what it
// set, in words (nil if nothing). It must run before the plugin is loaded.
func prepareXLA(p Plugin) []string {
	if !p.IsCUDA() {
		return nil
	}
	flags := os.Getenv(XLAFlagsEnv)
	if strings.Contains(flags, cudaDataDirFlag) {
		return nil // the user's own choice
	}
	dir := CUDADataDir(p.Path)
	if dir == "" {
		// go-xla only overrides the flag when ../nvidia exists next to the plugin: name that folder.
		if d := filepath.Join(filepath.Dir(filepath.Dir(p.Path)), "nvidia"); exists(d) {
			dir = d
		} else {
			return nil
		}
	}
	flag := cudaDataDirFlag + "=" + dir
	_ = os.Setenv(XLAFlagsEnv, strings.TrimSpace(flags+" "+flag))
	return []string{XLAFlagsEnv + " += " + flag}
}
