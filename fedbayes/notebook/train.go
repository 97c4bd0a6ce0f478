package notebook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/progress"
	"github.com/janpfeifer/gonb/gonbui"
)

// Outcome is what Train ran.
type Outcome struct {
	// Dir is the results folder.
	Dir string
	// Runs counts the runs (settings x seeds); Finished those already finished before this call,
	// Diverged those that diverged.
	Runs, Finished, Diverged int
	// Elapsed is the wall time of the call.
	Elapsed time.Duration
}

// String is one line for the cell's output.
func (o *Outcome) String() string {
	s := fmt.Sprintf("%d runs (%d diverged) in %s; results in %s", o.Runs, o.Diverged, o.Elapsed.Round(time.Second), o.Dir)
	if o.Finished > 0 {
		s += fmt.Sprintf(" (%d had finished before: delete the folder to start afresh)", o.Finished)
	}
	return s
}

// Stopped is Train's error when the kernel was interrupted (Kernel > Interrupt, SIGINT): the run in
// progress stopped between two training steps and keeps its rounds up to Round, and running the
// cell again resumes it.
type Stopped struct {
	// Run is the run directory's name; Round the last round it completed.
	Run   string
	Round int
}

func (s *Stopped) Error() string {
	return fmt.Sprintf("stopped after round %d of %s; run the cell again to resume", s.Round, s.Run)
}

// Train runs the specs one after another into dir, resuming interrupted runs and skipping finished
// ones, with one progress bar over all their rounds (steps within a round included) and, in a
// notebook, the learning curves drawn while they train (LiveCurves, redrawn in place every few
// seconds). SIGINT
// (Kernel > Interrupt) stops it between two training steps with a *Stopped error; GoNB kills a cell
// 5 s after the interrupt, and a step takes far less.
func Train(dir string, specs ...*engine.Spec) (*Outcome, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	trainActive.Add(1)
	defer trainActive.Add(-1)
	var curves *LiveCurves
	if gonbui.IsNotebook {
		curves = NewLiveCurves()
		curves.swept = sweptName(specs)
	}
	return trainLive(ctx, dir, nil, curves, specs...)
}

// sweptName is the name of the one field every spec sweeps (its last part: "h" for partition.h),
// for the live chart of one-round methods; "" when they sweep none, or several.
func sweptName(specs []*engine.Spec) string {
	name := ""
	for _, s := range specs {
		if len(s.Sweep) != 1 {
			return ""
		}
		for path := range s.Sweep {
			last := path[strings.LastIndex(path, ".")+1:]
			if name != "" && last != name {
				return ""
			}
			name = last
		}
	}
	return name
}

func train(ctx context.Context, dir string, bar progress.Reporter, specs ...*engine.Spec) (*Outcome, error) {
	return trainLive(ctx, dir, bar, nil, specs...)
}

// trainLive is Train with its progress bar and, when curves is not nil, the live learning curves.
func trainLive(ctx context.Context, dir string, bar progress.Reporter, curves *LiveCurves, specs ...*engine.Spec) (*Outcome, error) {
	start := time.Now()
	total := 0
	for _, s := range specs {
		settings, err := s.Expand()
		if err != nil {
			return nil, err
		}
		for _, st := range settings {
			total += st.Spec.Training.Rounds * len(st.Spec.Seeds)
		}
	}
	rep := progress.NewSweep(bar, total, "all runs")
	var to progress.Reporter = rep
	if curves != nil {
		to = tee{bar: rep, curves: curves}
	}
	out := &Outcome{Dir: dir}
	for _, s := range specs {
		sum, err := engine.Run(ctx, s, engine.Options{Dir: dir, Resume: true, Progress: to})
		if sum != nil {
			out.Runs += len(sum.Runs)
			out.Diverged += sum.Diverged()
			for _, r := range sum.Runs {
				if r.AlreadyDone {
					out.Finished++
				}
			}
		}
		if errors.Is(err, context.Canceled) && sum != nil && len(sum.Runs) > 0 {
			last := sum.Runs[len(sum.Runs)-1]
			rep.Finish("stopped")
			out.Elapsed = time.Since(start)
			return out, &Stopped{Run: filepath.Base(last.Dir), Round: last.Round}
		}
		if err != nil {
			rep.Finish("failed")
			out.Elapsed = time.Since(start)
			return out, err
		}
	}
	rep.Finish("")
	out.Elapsed = time.Since(start)
	return out, nil
}

// exit ends the cell's program (a variable for tests).
var exit = os.Exit

// Check ends the cell when err is not nil, without a panic or a goroutine trace:
//
//   - a *Stopped error (Kernel > Interrupt) prints its message on standard output and fails the
//     cell (exit status 1); the kernel fedbayes builds (kernels/gonb-overlay) then aborts the cells
//     Run All queued after it without compiling them, each with a "not run" line;
//   - an *Incomplete error (the runs a cell reads are not all finished) prints its message and ends
//     the cell normally;
//   - any other error prints "error: ..." on standard error and fails the cell (exit status 1, so
//     that a headless run fails).
func Check(err error) { check(err, os.Stdout, os.Stderr) }

func check(err error, stdout, stderr io.Writer) {
	if err == nil {
		return
	}
	var stopped *Stopped
	var incomplete *Incomplete
	code := 0
	switch {
	case errors.As(err, &stopped):
		fmt.Fprintln(stdout, err)
		code = 1
	case errors.As(err, &incomplete):
		fmt.Fprintln(stdout, err)
	default:
		fmt.Fprintln(stderr, "error:", err)
		code = 1
	}
	if gonbui.IsNotebook {
		gonbui.Sync()
	}
	exit(code)
}

// gonbDir is GoNB's folder of the running kernel ($GONB_TMP_DIR, where it writes each cell's
// main.go), or "" outside a GoNB notebook.
func gonbDir() string {
	if !gonbui.IsNotebook {
		return ""
	}
	return os.Getenv("GONB_TMP_DIR")
}

// trainActive counts the Train calls in progress: an interrupt during one is Train's to end
// cleanly (a *Stopped error that Check reports), not the interrupt watcher's.
var trainActive atomic.Int32

// init watches, in a cell program of a GoNB notebook, for Kernel > Interrupt (SIGINT) in any cell,
// not only a training one: outside Train the cell ends at once with a clean line (Train stops
// between two steps and returns a *Stopped error instead). Every notebook's cells use this package,
// so they all pass here.
func init() {
	if gonbDir() == "" {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	go watchInterrupts(ch, os.Stdout)
}

// watchInterrupts ends the cell with a clean line (exit status 1) at each interrupt received on sig
// outside Train.
func watchInterrupts(sig <-chan os.Signal, stdout io.Writer) {
	for range sig {
		if trainActive.Load() > 0 {
			continue
		}
		fmt.Fprintln(stdout, "interrupted (Kernel > Interrupt); the cells queued after this one will not run")
		if gonbui.IsNotebook {
			gonbui.Sync()
		}
		exit(1)
	}
}
