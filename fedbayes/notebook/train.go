package notebook

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
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
//     cell (exit status 1), and records the interrupt for the cells that Run All queued after it
//     (see Queued): Jupyter's Run All sends every cell at once and GoNB v0.11.4 runs the queued
//     ones even after an error, so those cells end at once, unrun;
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
		if dir := gonbDir(); dir != "" {
			if werr := markInterrupt(dir, err.Error(), time.Now()); werr != nil {
				fmt.Fprintln(stderr, "note: the cells queued after this one may run:", werr)
			}
		}
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

// interruptFile is the record of the last interrupt in GoNB's folder.
const interruptFile = "fedbayes-interrupted.json"

// queueWindow bounds the time between the end of one cell and the moment GoNB writes the next
// cell's main.go for that cell to count as queued by Run All: GoNB parses the cell and runs
// goimports in between (about a second; more on a loaded machine), while a person reads the
// message first.
const queueWindow = 15 * time.Second

// interruptMark is the record of an interrupt: the interrupted cell, the cells skipped since, and
// when the last of them ended.
type interruptMark struct {
	Cell    string    `json:"cell"`
	Skipped []string  `json:"skipped,omitempty"`
	Last    time.Time `json:"last"`
	What    string    `json:"what"`
}

// cellID identifies the cell being run in dir: the SHA-256 of the body of main() in GoNB's main.go
// (the cell's own code, without the declarations earlier cells left), and when GoNB wrote main.go.
func cellID(dir string) (string, time.Time, error) {
	path := filepath.Join(dir, "main.go")
	info, err := os.Stat(path)
	if err != nil {
		return "", time.Time{}, err
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return "", time.Time{}, err
	}
	body := string(src)
	if i := strings.Index(body, "\nfunc main() {"); i >= 0 {
		body = body[i:]
		if j := strings.Index(body, "\n}\n"); j >= 0 {
			body = body[:j]
		}
	}
	return fmt.Sprintf("%x", sha256.Sum256([]byte(body))), info.ModTime(), nil
}

// markInterrupt records that the cell now running in dir was interrupted at now.
func markInterrupt(dir, what string, now time.Time) error {
	id, _, err := cellID(dir)
	if err != nil {
		return err
	}
	return writeMark(dir, interruptMark{Cell: id, Last: now, What: what})
}

func writeMark(dir string, m interruptMark) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, interruptFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, interruptFile))
}

// Queued says whether the cell now running in GoNB's folder dir was queued by Run All after an
// interrupt (Check of a *Stopped error), and if so records it and returns the line to print. The
// rules: the interrupted cell run again runs (it resumes) and clears the record; so does a cell
// skipped once before (a person runs it again) and any cell whose main.go GoNB wrote more than
// queueWindow after the interrupted or the last skipped cell ended (the queue is over). Every
// other cell is skipped. Without a record, or when it cannot be read, nothing is skipped.
func Queued(dir string, now time.Time) (bool, string) {
	path := filepath.Join(dir, interruptFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return false, ""
	}
	var m interruptMark
	if json.Unmarshal(b, &m) != nil {
		os.Remove(path)
		return false, ""
	}
	id, written, err := cellID(dir)
	if err != nil || id == m.Cell || slices.Contains(m.Skipped, id) || written.Sub(m.Last) > queueWindow {
		os.Remove(path)
		return false, ""
	}
	m.Skipped = append(m.Skipped, id)
	m.Last = now
	if writeMark(dir, m) != nil {
		os.Remove(path)
	}
	return true, fmt.Sprintf("not run: Run All was stopped by Kernel > Interrupt in an earlier cell (%s); "+
		"run this cell again to run it", m.What)
}

// trainActive counts the Train calls in progress: an interrupt during one is Train's to end
// cleanly (a *Stopped error that Check reports), not the interrupt watcher's.
var trainActive atomic.Int32

// init ends a cell program that Run All queued after an interrupt before it runs anything (see
// Queued): every notebook's cells use this package, so they all pass here. It then watches for
// Kernel > Interrupt (SIGINT) in any cell, not only a training one: the interrupt is recorded for
// the queued cells, and outside Train the cell ends at once with a clean line (Train stops between
// two steps and returns a *Stopped error instead).
func init() {
	dir := gonbDir()
	if dir == "" {
		return
	}
	if skip, line := Queued(dir, time.Now()); skip {
		fmt.Println(line)
		gonbui.Sync()
		exit(1)
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	go watchInterrupts(dir, ch, os.Stdout, os.Stderr)
}

// watchInterrupts records each interrupt received on sig for the queued cells and, outside Train,
// ends the cell with a clean line (exit status 1).
func watchInterrupts(dir string, sig <-chan os.Signal, stdout, stderr io.Writer) {
	for range sig {
		if err := markInterrupt(dir, "Kernel > Interrupt", time.Now()); err != nil {
			fmt.Fprintln(stderr, "note: the cells queued after this one may run:", err)
		}
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
