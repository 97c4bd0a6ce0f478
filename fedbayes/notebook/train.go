package notebook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
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
// ones, with one progress bar over all their rounds (steps within a round included). SIGINT
// (Kernel > Interrupt) stops it between two training steps with a *Stopped error; GoNB kills a cell
// 5 s after the interrupt, and a step takes far less.
func Train(dir string, specs ...*engine.Spec) (*Outcome, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return train(ctx, dir, nil, specs...)
}

func train(ctx context.Context, dir string, bar progress.Reporter, specs ...*engine.Spec) (*Outcome, error) {
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
	out := &Outcome{Dir: dir}
	for _, s := range specs {
		sum, err := engine.Run(ctx, s, engine.Options{Dir: dir, Resume: true, Progress: rep})
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

// Check ends the cell when err is not nil, without a panic or a goroutine trace: a *Stopped or
// *Incomplete error prints its message and ends the cell normally (the cells after it then stop
// the same way), any other error prints "error: ..." on standard error and fails the cell (exit
// status 1, so that a headless run fails).
func Check(err error) { check(err, os.Stdout, os.Stderr) }

func check(err error, stdout, stderr io.Writer) {
	if err == nil {
		return
	}
	var stopped *Stopped
	var incomplete *Incomplete
	code := 0
	if errors.As(err, &stopped) || errors.As(err, &incomplete) {
		fmt.Fprintln(stdout, err)
	} else {
		fmt.Fprintln(stderr, "error:", err)
		code = 1
	}
	if gonbui.IsNotebook {
		gonbui.Sync()
	}
	exit(code)
}
