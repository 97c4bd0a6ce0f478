package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestRecordsTheBackendInUse checks that run.json names the backend the run computed on, in a fresh
// process (the backend is chosen once per process) whose GOMLX_BACKEND asks for GoMLX's stock SimpleGo
// ("go"). A run recorded the pure-Go default there while it computed on another backend (seen on XLA:
// run.json said simplegoplus) when the provenance was collected before the backend existed.
func TestRecordsTheBackendInUse(t *testing.T) {
	requireDigits(t)
	if os.Getenv("FEDBAYES_BACKEND_RECORD_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRecordsTheBackendInUse$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FEDBAYES_BACKEND_RECORD_CHILD=1", "GOMLX_BACKEND=go")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the child test failed: %v\n%s", err, out)
		}
		return
	}
	s := digitsSpec()
	s.Training.Rounds = 1
	dir := t.TempDir()
	if _, err := Run(context.Background(), s, Options{Dir: dir, NoFigures: true}); err != nil {
		t.Fatal(err)
	}
	runs, err := filepath.Glob(filepath.Join(dir, "*", results.MetaFile))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no run.json under %s (%v)", dir, err)
	}
	m, err := results.ReadMeta(filepath.Dir(runs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if m.Info.Backend != "go" {
		t.Errorf("run.json records backend %q; the run computed on GOMLX_BACKEND=go", m.Info.Backend)
	}
}
