package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
)

// SIGTERM (what kill, timeout and Slurm send) stops `fedbayes reproduce` the way Ctrl-C does: the
// run in progress stops unfinished (to resume from its last checkpoint), and the command says how to continue and exits
// non-zero (that the same command then resumes the run is TestTwoResumesAtOnce's and the engine's).
func TestReproduceStopsOnSIGTERM(t *testing.T) {
	needReproductionData(t, "a reproduction preset for seconds")
	res := t.TempDir()
	args := []string{"reproduce", "-run-only", "-budget", "reduced", "-papers", "000",
		"-presets", "ozer2022-fmnist-c10-iid-reduced", "-results", res}
	cmd, out := commandProcess(t, args...)
	first := filepath.Join(res, "000", "ozer2022-fmnist-c10-iid-reduced-FED-seed0")
	waitForGlob(filepath.Join(first, results.CheckpointsDir, "*"), 2*time.Minute)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if st := exitCode(t, cmd); st == 0 {
		t.Skip("the preset finished before the signal")
	}
	for _, want := range []string{"terminated: stopping the current run (it resumes from its last checkpoint)", "interrupted; finished runs are kept"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("after SIGTERM the output lacks %q:\n%s", want, lastLines(out.String(), 12))
		}
	}
	// An interrupted run writes no status (it is resumed, not ended).
	if _, err := os.Stat(filepath.Join(first, results.StatusFile)); err == nil {
		if strings.Contains(out.String(), "FED seed 0 completed") {
			t.Skip("the first run finished between its checkpoint and the signal")
		}
		t.Fatalf("the first run wrote %s, though SIGTERM came in its first rounds", results.StatusFile)
	}
}

// needReproductionData skips a test that runs a reproduction preset (what for: why) in -short mode
// or without Fashion-MNIST installed.
func needReproductionData(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	for _, a := range data.Status(data.Dir()) {
		if a.Name == "fashion-mnist" && !a.Present {
			t.Skip("fashion-mnist not installed")
		}
	}
}
