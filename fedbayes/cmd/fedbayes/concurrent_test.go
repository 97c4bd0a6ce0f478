package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
)

// TestMain lets the tests start this test binary as the fedbayes command (real second processes).
func TestMain(m *testing.M) {
	if os.Getenv("FEDBAYES_TEST_AS_COMMAND") == "1" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// commandProcess starts this test binary as `fedbayes ARGS...`, its output going to a buffer.
func commandProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "FEDBAYES_TEST_AS_COMMAND=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// concurrentSpec writes a spec of seeds runs that each take a few seconds.
func concurrentSpec(t *testing.T, dir string, rounds int, seeds string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	spec := filepath.Join(dir, "spec.json")
	writeFile(t, spec, fmt.Sprintf(`{"name": "conc", "dataset": {"name": "digits", "subsample": 300, "test_subsample": 100},
		"partition": {"clients": 3}, "model": {"hidden": [8]}, "training": {"rounds": %d, "batch_size": 32, "lr": 0.1},
		"evaluation": {"samples": 2, "every": 2}, "seeds": [%s]}`, rounds, seeds))
	return spec
}

// checkRowsOnce checks that every run under root is completed with each evaluated round written once.
func checkRowsOnce(t *testing.T, root string, runs, rounds int) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "conc-seed*"))
	if len(dirs) != runs {
		t.Fatalf("%d run directories, want %d", len(dirs), runs)
	}
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, results.RowsFile))
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				Round int `json:"round"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", d, err)
			}
			got = append(got, r.Round)
		}
		f.Close()
		if len(got) != rounds/2 {
			t.Errorf("%s: %d rows (rounds %v), want %d, each once", filepath.Base(d), len(got), got, rounds/2)
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Errorf("%s: round %d written after round %d", filepath.Base(d), got[i], got[i-1])
			}
		}
		if _, err := os.Stat(filepath.Join(d, results.ClaimFile)); err == nil {
			t.Errorf("%s: claim left behind", filepath.Base(d))
		}
	}
	var out, errOut bytes.Buffer
	if st := runMain([]string{"table", root}, &out, &errOut); st != 0 || strings.Contains(errOut.String(), "skip") {
		t.Errorf("table: status %d\n%s\n%s", st, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("over %d seed", runs)) {
		t.Errorf("table does not read every run:\n%s", out.String())
	}
}

// The first case: `run spec -o D`, and 3 s later `run spec -o D --resume`.
func TestSecondWriterThreeSecondsLater(t *testing.T) {
	if testing.Short() {
		t.Skip("two processes for seconds")
	}
	dir := t.TempDir()
	// Rounds enough that the first process is still writing 3 s after it claimed its first run
	// (a round of this net takes about a millisecond with OpenBLAS, tens without).
	const rounds = 1500
	spec := concurrentSpec(t, dir, rounds, "1, 2")
	out := filepath.Join(dir, "D")
	first, firstOut := commandProcess(t, "run", spec, "-o", out, "-no-figures")
	// 3 s after the first process claimed a run, whatever it spent compiling before that.
	claim := filepath.Join(out, "conc-seed1", results.ClaimFile)
	waitForGlob(claim, 2*time.Minute)
	time.Sleep(3 * time.Second)
	second, secondOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-no-figures")
	st1, st2 := exitCode(t, first), exitCode(t, second)
	t.Logf("first exited %d, second %d", st1, st2)
	// A run was being written when the second process came (seed 1, or seed 2 if the first process
	// had already finished seed 1): it must name that run and its owner, and fail.
	if st2 == 0 || !strings.Contains(secondOut.String(), "skipping run conc-seed") || !strings.Contains(secondOut.String(), "being written by pid") {
		t.Errorf("second writer: status %d, want non-zero with a message naming the run and its owner:\n%s", st2, lastLines(secondOut.String(), 8))
	}
	if st1 != 0 && !strings.Contains(firstOut.String(), "being written by pid") && !strings.Contains(firstOut.String(), "already holds a run") {
		t.Errorf("first writer: status %d:\n%s", st1, lastLines(firstOut.String(), 8))
	}
	// Whatever either skipped, one more resume completes; nothing is written twice.
	var o, e bytes.Buffer
	if st := runMain([]string{"run", spec, "-o", out, "--resume", "-no-figures"}, &o, &e); st != 0 {
		t.Fatalf("final resume: %d\n%s", st, e.String())
	}
	checkRowsOnce(t, out, 2, rounds)
}

// The second case: two `--resume` started at once on an interrupted directory.
func TestTwoResumesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("two processes for seconds")
	}
	dir := t.TempDir()
	spec := concurrentSpec(t, dir, 60, "1, 2, 3, 4")
	out := filepath.Join(dir, "D")
	first, _ := commandProcess(t, "run", spec, "-o", out, "-no-figures")
	// Interrupt it in its first run, once that has a checkpoint.
	waitForGlob(filepath.Join(out, "conc-seed1", results.CheckpointsDir, "*"), time.Minute)
	_ = first.Process.Signal(syscall.SIGTERM)
	if st := exitCode(t, first); st == 0 {
		t.Log("the first process finished before it was interrupted")
	}
	a, aOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-no-figures")
	b, bOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-no-figures")
	sa, sb := exitCode(t, a), exitCode(t, b)
	t.Logf("resumes exited %d and %d", sa, sb)
	for _, p := range []struct {
		st  int
		out string
	}{{sa, aOut.String()}, {sb, bOut.String()}} {
		if p.st != 0 && !strings.Contains(p.out, "being written by pid") {
			t.Errorf("a resume failed for another reason than a run being written:\n%s", lastLines(p.out, 8))
		}
	}
	checkRowsOnce(t, out, 4, 60)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// A writer killed with SIGKILL leaves its claim; the next --resume takes it over (the owner is dead
// on this host), says so, and completes the run with each row once.
func TestResumeTakesOverAKilledWritersClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("two processes for seconds")
	}
	dir := t.TempDir()
	spec := concurrentSpec(t, dir, 60, "1")
	out := filepath.Join(dir, "D")
	first, _ := commandProcess(t, "run", spec, "-o", out, "-no-figures")
	waitForGlob(filepath.Join(out, "conc-seed1", results.CheckpointsDir, "*"), time.Minute)
	_ = first.Process.Kill()
	_ = first.Wait()
	if _, err := os.Stat(filepath.Join(out, "conc-seed1", results.ClaimFile)); err != nil {
		t.Skipf("the run finished before it was killed (%v)", err)
	}
	second, secondOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-no-figures")
	if st := exitCode(t, second); st != 0 {
		t.Fatalf("resume after kill -9: status %d\n%s", st, lastLines(secondOut.String(), 8))
	}
	if !strings.Contains(secondOut.String(), "took over the stale claim") || !strings.Contains(secondOut.String(), "is dead") {
		t.Errorf("no takeover message:\n%s", lastLines(secondOut.String(), 8))
	}
	checkRowsOnce(t, out, 1, 60)
}

// waitForGlob polls until a file matches pattern (a filepath.Glob pattern, or a plain path), or
// until timeout; the caller's later checks say what went wrong if nothing appeared.
func waitForGlob(pattern string, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
	}
}

// Two `run -jobs 2` on one folder: each parent's workers write logs of their own (four files, none
// shared or truncated), a parent whose worker stops on a run the other holds says why (the log's
// last line), and one more resume completes every run with each row once.
func TestTwoJobsParentsOnOneFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("four processes for seconds")
	}
	dir := t.TempDir()
	spec := concurrentSpec(t, dir, 200, "1, 2, 3, 4")
	out := filepath.Join(dir, "D")
	a, aOut := commandProcess(t, "run", spec, "-o", out, "-jobs", "2", "-no-figures")
	waitForGlob(filepath.Join(out, "conc-seed*", results.ClaimFile), 2*time.Minute)
	b, bOut := commandProcess(t, "run", spec, "-o", out, "--resume", "-jobs", "2", "-no-figures")
	sa, sb := exitCode(t, a), exitCode(t, b)
	t.Logf("parents exited %d and %d:\n%s\n%s", sa, sb, lastLines(aOut.String(), 3), lastLines(bOut.String(), 3))
	logs, _ := filepath.Glob(filepath.Join(out, ".jobs", "worker-*-pid*.log"))
	pids := map[int]bool{a.Process.Pid: true, b.Process.Pid: true}
	if len(logs) != 4 {
		t.Errorf("worker logs %v, want 4 (two per parent)", logs)
	}
	for _, l := range logs {
		var k, pid int
		if _, err := fmt.Sscanf(filepath.Base(l), "worker-%d-pid%d.log", &k, &pid); err != nil || !pids[pid] {
			t.Errorf("log %s is not named by a parent's pid (%v)", l, pids)
		}
	}
	for _, p := range []struct {
		st  int
		out string
	}{{sa, aOut.String()}, {sb, bOut.String()}} {
		if p.st != 0 && !strings.Contains(p.out, "being written by pid") {
			t.Errorf("a parent failed without saying why:\n%s", lastLines(p.out, 8))
		}
	}
	var o, e bytes.Buffer
	if st := runMain([]string{"run", spec, "-o", out, "--resume", "-no-figures"}, &o, &e); st != 0 {
		t.Fatalf("final resume: %d\n%s", st, e.String())
	}
	checkRowsOnce(t, out, 4, 200)
}
