package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/results"
)

// `fedbayes reproduce -jobs 2` deals a preset's runs out to two worker processes (run 0 to worker 0,
// run 1 to worker 1), which both start; a SIGTERM to the parent reaches them, each leaves its run
// resumable (no status; a run that finished before the signal is completed after its last round),
// and the parent says how to continue and exits non-zero. (That a run gives
// the same numbers in a worker is TestRunJobsSameNumbers's: both commands select runs with
// engine.WorkerRuns.)
func TestReproduceJobsSharesAndStops(t *testing.T) {
	needReproductionData(t, "two reproduction workers for seconds")
	res := t.TempDir()
	cmd, out := commandProcess(t, "reproduce", "-run-only", "-jobs", "2", "-budget", "reduced", "-papers", "000",
		"-presets", "ozer2022-fmnist-c10-iid-reduced", "-results", res)
	runs := []string{filepath.Join(res, "000", "ozer2022-fmnist-c10-iid-reduced-FED-seed0"),
		filepath.Join(res, "000", "ozer2022-fmnist-c10-iid-reduced-FED-seed1")}
	for _, r := range runs {
		waitForGlob(filepath.Join(r, results.CheckpointsDir, "*"), 3*time.Minute)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd); code == 0 {
		t.Fatalf("reproduce -jobs 2 exited 0 after SIGTERM:\n%s", lastLines(out.String(), 12))
	}
	for _, want := range []string{"runs in 2 worker processes", "interrupted; finished runs are kept"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, lastLines(out.String(), 12))
		}
	}
	for k, r := range runs {
		if m, _ := filepath.Glob(filepath.Join(r, results.CheckpointsDir, "*")); len(m) == 0 {
			t.Errorf("worker %d did not start run %s", k, filepath.Base(r))
		}
		// A run may finish its 5 rounds while the other worker is still starting (a loaded machine):
		// then it is completed after its last round, and the worker was stopped in its next run. Any
		// other status (failed, or completed early) is the signal mishandled.
		if run, err := results.ReadRun(r); err == nil && run.Status.State != "" &&
			(run.Status.State != results.Completed || run.Status.Round != 5 || len(run.Rows) == 0 || run.Rows[len(run.Rows)-1].Round != 5) {
			t.Errorf("%s ended %s at round %d, though SIGTERM came before its last round", filepath.Base(r), run.Status.State, run.Status.Round)
		}
		logs, _ := filepath.Glob(filepath.Join(res, ".jobs", fmt.Sprintf("worker-%d-pid*.log", k)))
		if len(logs) != 1 {
			t.Fatalf("worker %d's logs: %v, want one", k, logs)
		}
		log, err := os.ReadFile(logs[0])
		if err != nil || !strings.Contains(string(log), "stopping the current run") {
			t.Errorf("worker %d's log (%v) does not show the interrupt:\n%s", k, err, lastLines(string(log), 8))
		}
	}
}
