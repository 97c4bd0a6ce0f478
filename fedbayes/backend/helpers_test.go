package backend

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildLib compiles C source into a shared library with gcc, or skips the test where gcc is absent.
func buildLib(t *testing.T, dir, name, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build a test shared library")
	}
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, name+".so")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return so
}

// fakePlugin builds a library that exports GetPjrtApi returning a table with the given API version:
// enough for Probe and InstallFrom, which never initialise the plugin. Never load it with GoMLX.
func fakePlugin(t *testing.T, dir, name string, major, minor int) string {
	return buildLib(t, dir, name, fmt.Sprintf(`#include <stddef.h>
typedef struct { size_t struct_size; void* ext; int major; int minor; } version;
typedef struct { size_t struct_size; void* ext; version v; void* fns[8]; } api;
static api table = { sizeof(api), 0, { sizeof(version), 0, %d, %d } };
const api* GetPjrtApi(void) { return &table; }
`, major, minor))
}

// notAPlugin builds a valid shared library without GetPjrtApi.
func notAPlugin(t *testing.T, dir string) string {
	return buildLib(t, dir, "libplain", "int fedbayes_answer(void) { return 42; }\n")
}
