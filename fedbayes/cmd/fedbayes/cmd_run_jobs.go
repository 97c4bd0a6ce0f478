package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
// several processes with fewer cores each: `fedbayes run -jobs N` and `fedbayes reproduce -jobs N`
// start N worker processes (`-worker k/N`: the runs whose index is k modulo N, of the spec or of each
// preset), each with GOMAXPROCS = cores / N, and wait for them.
// Results are the same bit for bit whatever the number of cores (simplegoplus splits work by shape
// only), so a sweep run with -jobs gives the numbers of one run without it.

// createWorkerLog creates worker k's log in logs, named by k and this process's id
// (worker-K-pidPID.log), so that two parents on one results directory (two `run -jobs 2`) never
// share or truncate each other's logs. The file is created new (O_EXCL): a name left by an earlier
// process of the same id gets a suffix (worker-K-pidPID-2.log, ...), and the earlier log is kept.
func createWorkerLog(logs string, k int) (*os.File, error) {
	base := fmt.Sprintf("worker-%d-pid%d", k, os.Getpid())
	for n := 1; ; n++ {
		name := base + ".log"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.log", base, n)
		}
		f, err := os.OpenFile(filepath.Join(logs, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) || n >= 1000 {
			return f, err
		}
	}
}

// logTail returns ": " and the last non-empty line of the log at path (of its last 4 KiB), the
// reason a worker gives as it stops, or "" where there is none.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 4<<10)
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(buf)) {
		_, _ = f.Seek(fi.Size()-int64(len(buf)), 0)
	}
	n, _ := io.ReadFull(f, buf)
	lines := strings.Split(strings.TrimSpace(string(buf[:n])), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		return ": " + last
	}
	return ""
}

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

// runJobs runs spec's runs in jobs worker processes and returns when they have all stopped. It
// refuses, before starting anything, run directories that already hold a run unless resume is set.
// childArgs are the arguments of the worker command before -worker.
func runJobs(ctx context.Context, spec *engine.Spec, dir string, resume bool, jobs int, childArgs []string) error {
	runDirs, err := engine.RunDirs(spec, dir)
	if err != nil {
		return err
	}
	for _, d := range runDirs {
		if results.HasRun(d) && !resume {
			return fmt.Errorf("engine: %s already holds a run; resume it (--resume) or choose another results directory", d)
		}
	}
	worker := func(k, n int) []string {
		return append(append([]string{"run"}, childArgs...), "-o", dir, "--resume", "-no-figures", "-worker", fmt.Sprintf("%d/%d", k, n))
	}
	return runWorkers(ctx, min(jobs, len(runDirs)), filepath.Join(dir, ".jobs"), worker, runDirs)
}

// runWorkers starts jobs processes of this program, worker k with the arguments worker(k, jobs) and
// GOMAXPROCS = cores / jobs, and returns when they have all stopped. Each worker's terminal output
// goes to its own new file logs/worker-K-pidPID.log (createWorkerLog); this process prints a line whenever one of runDirs finishes, with the
// ETA. An interrupt (ctx done) is passed to the workers, which stop between two training steps and
// leave their runs resumable. jobs is at least 1.
func runWorkers(ctx context.Context, jobs int, logs string, worker func(k, n int) []string, runDirs []string) error {
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return fmt.Errorf("-jobs: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("-jobs: finding this program: %w", err)
	}
	cores := max(1, runtime.NumCPU()/jobs)
	type process struct {
		cmd  *exec.Cmd
		log  string
		done chan error
	}
	workers := make([]*process, jobs)
	for k := range workers {
		f, err := createWorkerLog(logs, k)
		if err != nil {
			return fmt.Errorf("-jobs: %w", err)
		}
		w := &process{cmd: exec.Command(self, worker(k, jobs)...), log: f.Name(), done: make(chan error, 1)}
		w.cmd.Stdout, w.cmd.Stderr = f, f
		w.cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", cores))
		// A process group of its own: a Ctrl-C in the terminal reaches this process only, which
		// passes it on once (a second signal would make the worker quit at once). Should this
		// process die without passing it on (SIGKILL, a closed terminal), the worker gets SIGTERM
		// (Linux) and stops resumable instead of running on unwatched.
		w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
		if err := w.cmd.Start(); err != nil {
			f.Close()
			return fmt.Errorf("-jobs: starting worker %d: %w", k, err)
		}
		go func() { w.done <- w.cmd.Wait(); f.Close() }()
		workers[k] = w
	}
	fmt.Fprintf(notes, "%d runs in %d worker processes of %d core(s) each; their output: %s\n", len(runDirs), jobs, cores, logs)
	start := time.Now()
	finished := func() int {
		n := 0
		for _, d := range runDirs {
			if st, err := results.ReadRun(d); err == nil && (st.Status.State == results.Completed || st.Status.State == results.Diverged) {
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
	interrupt := ctx.Done()
	for running > 0 {
		select {
		case <-interrupt:
			// Each worker stops between two training steps and leaves its run resumable. One signal
			// only: a second one makes a worker quit at once.
			interrupt = nil
			for _, w := range workers {
				if w != nil {
					_ = w.cmd.Process.Signal(syscall.SIGINT)
				}
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
					firstErr = fmt.Errorf("-jobs: worker %d stopped: %v%s (its output: %s)", k, err, logTail(w.log), w.log)
				}
				workers[k], running = nil, running-1
			default:
			}
		}
		if n := finished(); n != last {
			last = n
			eta := "-"
			if done := n - before; done > 0 && n < len(runDirs) {
				eta = (time.Since(start) / time.Duration(done) * time.Duration(len(runDirs)-n)).Round(time.Second).String()
			}
			fmt.Fprintf(notes, "runs finished: %d/%d, elapsed %s, ETA %s\n", n, len(runDirs), time.Since(start).Round(time.Second), eta)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}
