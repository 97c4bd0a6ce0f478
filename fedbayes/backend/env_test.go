package backend

import (
	"os"
	"path/filepath"
	"testing"
)

func mkfile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestCUDADataDir covers the two layouts a CUDA plugin comes in: go-xla's installer
// (lib/go-xla/nvidia/{pjrt_c_api_cuda_plugin.so,bin/ptxas}) and a pip environment
// (site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so next to site-packages/nvidia/cu13/bin/ptxas).
func TestCUDADataDir(t *testing.T) {
	root := t.TempDir()
	goxla := filepath.Join(root, "lib", "go-xla", "nvidia")
	mkfile(t, filepath.Join(goxla, "bin", "ptxas"))
	site := filepath.Join(root, "venv", "lib", "python3.12", "site-packages")
	mkfile(t, filepath.Join(site, "nvidia", "cu13", "bin", "ptxas"))
	tests := []struct{ plugin, want string }{
		{filepath.Join(goxla, "pjrt_c_api_cuda_plugin.so"), goxla},
		{filepath.Join(site, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so"), filepath.Join(site, "nvidia", "cu13")},
	}
	for _, tc := range tests {
		if got := CUDADataDir(tc.plugin); got != tc.want && !(tc.want == "" && got == "/usr/local/cuda") {
			t.Errorf("CUDADataDir(%s) = %q, want %q", tc.plugin, got, tc.want)
		}
	}
}

func TestPrepareXLA(t *testing.T) {
	root := t.TempDir()
	nv := filepath.Join(root, "go-xla", "nvidia")
	mkfile(t, filepath.Join(nv, "bin", "ptxas"))
	cuda := Plugin{Name: "cuda", Path: filepath.Join(nv, "pjrt_c_api_cuda_plugin.so")}

	t.Setenv(XLAFlagsEnv, "--xla_dump_to=/tmp/x")
	if set := prepareXLA(cuda); len(set) != 1 || os.Getenv(XLAFlagsEnv) != "--xla_dump_to=/tmp/x --xla_gpu_cuda_data_dir="+nv {
		t.Errorf("prepareXLA: set %v, XLA_FLAGS = %q", set, os.Getenv(XLAFlagsEnv))
	}
	t.Setenv(XLAFlagsEnv, "--xla_gpu_cuda_data_dir=/opt/cuda")
	if set := prepareXLA(cuda); set != nil || os.Getenv(XLAFlagsEnv) != "--xla_gpu_cuda_data_dir=/opt/cuda" {
		t.Errorf("prepareXLA overrode the user's flag: set %v, XLA_FLAGS = %q", set, os.Getenv(XLAFlagsEnv))
	}
	t.Setenv(XLAFlagsEnv, "")
	if set := prepareXLA(Plugin{Name: "cpu", Path: "/x/pjrt_c_api_cpu_plugin.so"}); set != nil || os.Getenv(XLAFlagsEnv) != "" {
		t.Errorf("prepareXLA touched XLA_FLAGS for a CPU plugin: %v", set)
	}
}
