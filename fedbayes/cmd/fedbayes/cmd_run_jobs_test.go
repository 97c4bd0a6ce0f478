package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// TestWorkerRuns checks how -jobs deals the runs out: every run once, to worker index modulo N.
func TestWorkerRuns(t *testing.T) {
	var all []int
	for k := 0; k < 3; k++ {
		all = append(all, engine.WorkerRuns(7, k, 3)...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("workers cover %v", all)
	}
	for _, bad := range []string{"3/3", "-1/2", "1", "a/b", "0/0"} {
		if _, _, err := parseWorker(bad); err == nil {
			t.Errorf("-worker %q accepted", bad)
		}
	}
}

// TestRunJobsSameNumbers runs a sweep of four runs in two worker processes and in one, and checks
// that every run's rows are the same, byte for byte apart from timing, and that the parent wrote the
// summary and figures.
func TestRunJobsSameNumbers(t *testing.T) {
	dir := t.TempDir()
	spec := concurrentSpec(t, dir, 2, "1, 2, 3, 4")
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, c := range []struct{ out, jobs string }{{one, "1"}, {two, "2"}} {
		cmd, out := commandProcess(t, "run", spec, "-o", c.out, "-jobs", c.jobs)
		if code := exitCode(t, cmd); code != 0 {
			t.Fatalf("run -jobs %s: exit %d\n%s", c.jobs, code, out)
		}
		if c.jobs == "2" && !strings.Contains(out.String(), "4 runs in 2 worker processes") {
			t.Errorf("run -jobs 2 printed:\n%s", out)
		}
	}
	for seed := 1; seed <= 4; seed++ {
		name := "conc-seed" + string(rune('0'+seed))
		a := metricLines(t, filepath.Join(one, name, results.RowsFile))
		b := metricLines(t, filepath.Join(two, name, results.RowsFile))
		if !slices.Equal(a, b) {
			t.Errorf("%s: rows differ between -jobs 1 and -jobs 2:\n%v\n%v", name, a, b)
		}
	}
	if _, err := os.Stat(filepath.Join(two, "figures.json")); err != nil {
		t.Errorf("no figures after -jobs 2: %v", err)
	}
	cmd, out := commandProcess(t, "run", spec, "-o", two, "-jobs", "2")
	if code := exitCode(t, cmd); code != 0 || !strings.Contains(out.String(), "already holds the 4 finished run(s)") || strings.Contains(out.String(), "worker processes") {
		t.Errorf("a second -jobs run into the same folder without --resume: exit %d, want 0, the runs shown and no workers\n%s", code, out)
	}
}

// metricLines returns the "metrics" part of each row of a rows file (timings differ between runs).
func metricLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		s := string(line)
		i, j := strings.Index(s, `"metrics"`), strings.Index(s, `"time"`)
		if i < 0 || j < i {
			t.Fatalf("row without metrics or time: %s", s)
		}
		out = append(out, s[i:j])
	}
	return out
}

// TestCreateWorkerLog checks that a worker's log is a new file named by the worker and this
// process's id, so that two `run -jobs` parents on one folder write apart: a log already at that
// name (an earlier process of the same id) is kept as it was and the new one gets a suffix.
func TestCreateWorkerLog(t *testing.T) {
	logs := t.TempDir()
	first, err := createWorkerLog(logs, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(logs, fmt.Sprintf("worker-1-pid%d.log", os.Getpid())); first.Name() != want {
		t.Errorf("log %s, want %s", first.Name(), want)
	}
	if _, err := first.WriteString("first parent's output\n"); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second, err := createWorkerLog(logs, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if want := filepath.Join(logs, fmt.Sprintf("worker-1-pid%d-2.log", os.Getpid())); second.Name() != want {
		t.Errorf("second log %s, want %s", second.Name(), want)
	}
	if b, _ := os.ReadFile(first.Name()); string(b) != "first parent's output\n" {
		t.Errorf("the first log was changed: %q", b)
	}
	other, err := createWorkerLog(logs, 0)
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	if !strings.Contains(filepath.Base(other.Name()), "worker-0-pid") {
		t.Errorf("worker 0's log %s", other.Name())
	}
}

// TestLogTail checks the reason quoted from a stopped worker's log: its last non-empty line.
func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ content, want string }{
		{"starting\nfedbayes: run x is being written by pid 7\n\n", ": fedbayes: run x is being written by pid 7"},
		{"", ""},
		{strings.Repeat("a", 10000) + "\nlast", ": last"},
	} {
		p := filepath.Join(dir, "log")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := logTail(p); got != tc.want {
			t.Errorf("logTail of %.20q = %q, want %q", tc.content, got, tc.want)
		}
	}
	if got := logTail(filepath.Join(dir, "none")); got != "" {
		t.Errorf("a missing log: %q", got)
	}
}
