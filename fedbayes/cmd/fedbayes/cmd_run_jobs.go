package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// The pure-Go backend keeps about one and a half cores busy with one run (its ops run one at a time;
// each op splits its work over the cores). A sweep of several runs therefore finishes sooner as
// several processes with fewer cores each: `fedbayes run -jobs N` starts N worker processes (`-worker
// k/N`: the runs whose index is k modulo N), each with GOMAXPROCS = cores / N, and waits for them.
// Results are the same bit for bit whatever the number of cores (simplegoplus splits work by shape
// only), so a sweep run with -jobs gives the numbers of one run without it.

// parseWorker reads "-worker k/N".
func parseWorker(s string) (k, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		if k, err = strconv.Atoi(a); err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("%w: -worker %q: want k/N with 0 <= k < N", errUsage, s)
	}
	return k, n, nil
}

// workerRuns are the indices of the runs worker k of n runs: those with index k modulo n.
func workerRuns(total, k, n int) []int {
	var runs []int
	for i := k; i < total; i += n {
		runs = append(runs, i)
	}
	return runs
}

// runJobs runs spec's runs in jobs worker processes and returns when they have all stopped. It
// refuses, before starting anything, run directories that already hold a run unless resume is set.
// Each worker's terminal output goes to DIR/.jobs/worker-K.log; this process prints a line whenever
// a run finishes, with the ETA. childArgs are the arguments of the worker command before -worker.
func runJobs(ctx context.Context, spec *engine.Spec, dir string, resume bool, jobs int, childArgs []string, stdout io.Writer) error {
	refs, err := engine.RunList(spec)
	if err != nil {
		return err
	}
	jobs = min(jobs, len(refs))
	if !resume {
		for _, r := range refs {
			if _, err := os.Stat(filepath.Join(dir, r.Name, results.MetaFile)); err == nil {
				return fmt.Errorf("engine: %s already holds a run; resume it (--resume) or choose another results directory", filepath.Join(dir, r.Name))
			}
		}
	}
	logs := filepath.Join(dir, ".jobs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return fmt.Errorf("run -jobs: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("run -jobs: finding this program: %w", err)
	}
	cores := max(1, runtime.NumCPU()/jobs)
	type worker struct {
		cmd  *exec.Cmd
		log  string
		done chan error
	}
	workers := make([]*worker, jobs)
	for k := range workers {
		args := append(append([]string{"run"}, childArgs...), "-o", dir, "--resume", "-no-figures", "-worker", fmt.Sprintf("%d/%d", k, jobs))
		w := &worker{cmd: exec.Command(self, args...), log: filepath.Join(logs, fmt.Sprintf("worker-%d.log", k)), done: make(chan error, 1)}
		f, err := os.Create(w.log)
		if err != nil {
			return fmt.Errorf("run -jobs: %w", err)
		}
		w.cmd.Stdout, w.cmd.Stderr = f, f
		w.cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", cores))
		if err := w.cmd.Start(); err != nil {
			f.Close()
			return fmt.Errorf("run -jobs: starting worker %d: %w", k, err)
		}
		go func() { w.done <- w.cmd.Wait(); f.Close() }()
		workers[k] = w
	}
	fmt.Fprintf(stdout, "%d runs in %d worker processes of %d core(s) each; their output: %s\n", len(refs), jobs, cores, logs)
	start := time.Now()
	finished := func() int {
		n := 0
		for _, r := range refs {
			if st, err := results.ReadRun(filepath.Join(dir, r.Name)); err == nil && (st.Status.State == results.Completed || st.Status.State == results.Diverged) {
				n++
			}
		}
		return n
	}
	before := finished()
	last, running := before, jobs
	var firstErr error
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for running > 0 {
		select {
		case <-ctx.Done():
			// Each worker stops between two training steps and leaves its run resumable.
			for _, w := range workers {
				_ = w.cmd.Process.Signal(syscall.SIGINT)
			}
		case <-tick.C:
		}
		for k, w := range workers {
			if w == nil {
				continue
			}
			select {
			case err := <-w.done:
				if err != nil && firstErr == nil && ctx.Err() == nil {
					firstErr = fmt.Errorf("run -jobs: worker %d stopped: %v (its output: %s)", k, err, w.log)
				}
				workers[k], running = nil, running-1
			default:
			}
		}
		if n := finished(); n != last {
			last = n
			eta := "-"
			if done := n - before; done > 0 && n < len(refs) {
				eta = (time.Since(start) / time.Duration(done) * time.Duration(len(refs)-n)).Round(time.Second).String()
			}
			fmt.Fprintf(stdout, "runs finished: %d/%d, elapsed %s, ETA %s\n", n, len(refs), time.Since(start).Round(time.Second), eta)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}
