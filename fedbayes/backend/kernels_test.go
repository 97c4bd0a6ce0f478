package backend

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/simplegoplus"
)

// TestSlowKernels checks that SlowKernels speaks exactly when fedbayes's backend runs without
// OpenBLAS: in this process (whatever the machine has), and in a child process with FEDBAYES_BLAS=off,
// where it must speak and name the reason.
func TestSlowKernels(t *testing.T) {
	for _, config := range []string{"go", "xla:cuda", "xla:cpu"} {
		if got := SlowKernels(config); got != "" {
			t.Errorf("SlowKernels(%q) = %q, want \"\" (not fedbayes's pure-Go backend)", config, got)
		}
	}
	got := SlowKernels(simplegoplus.BackendName)
	if (got == "") != simplegoplus.BLASInUse() {
		t.Errorf("SlowKernels(%q) = %q while BLASInUse() = %v", simplegoplus.BackendName, got, simplegoplus.BLASInUse())
	}
	if os.Getenv("FEDBAYES_TEST_SLOW_CHILD") == "1" {
		if got == "" || !strings.Contains(got, "FEDBAYES_BLAS") {
			t.Fatalf("with FEDBAYES_BLAS=off, SlowKernels = %q, want the warning naming FEDBAYES_BLAS", got)
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^TestSlowKernels$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FEDBAYES_BLAS=off", "FEDBAYES_TEST_SLOW_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child with FEDBAYES_BLAS=off: %v\n%s", err, out)
	}
}
