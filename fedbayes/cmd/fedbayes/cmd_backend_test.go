package main

import (
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/backend"
)

func TestBackendAndDoctorCommands(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "xla_cuda_plugin.so")
	if err := os.WriteFile(text, []byte("not a plugin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(backend.DirEnv, filepath.Join(dir, "xla"))
	tests := []commandCase{
		{args: []string{"doctor", "-h"}, status: 0, wantOut: "Checks that this machine can run fedbayes"},
		{args: []string{"doctor", "extra"}, status: 2, wantStderr: "doctor takes no arguments"},
		{args: []string{"backend", "-h"}, status: 0, wantOut: "fedbayes backend install [cpu|cuda]"},
		{args: []string{"backend", "install", "-h"}, status: 0, wantOut: "the CPU plugin " + backend.CPUPluginVersion},
		{args: []string{"backend", "install", "tpu"}, status: 2, wantStderr: `unknown plugin kind "tpu"`},
		{args: []string{"backend", "install", "cpu", "-from", text}, status: 2, wantStderr: "not both"},
		{args: []string{"backend", "install", "-from", text}, status: 1, wantStderr: "not installed: " + text + " is not a loadable shared library"},
		{args: []string{"backend", "cpu"}, status: 2, wantStderr: "did you mean `fedbayes backend install cpu`"},
	}
	runCommandCases(t, tests)
	if _, err := os.Stat(filepath.Join(dir, "xla")); !os.IsNotExist(err) {
		t.Errorf("a rejected --from created the plugin folder (%v)", err)
	}
}
