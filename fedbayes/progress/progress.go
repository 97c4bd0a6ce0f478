// Package progress reports the progress of long federated runs: rounds done out of the total,
// time per round, estimated time left and the latest metrics. Terminal writes one line that
// updates in place on a terminal and plain lines elsewhere (CI logs); Notebook shows an HTML
// progress bar updated in place in a GoNB notebook. New picks the right one (text on standard
// error, so that a command's results on standard output can go to a file).
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
	"golang.org/x/term"
)

// Timings splits the wall time of one round.
type Timings struct {
	// Local is the local training of the round's clients.
	Local time.Duration
	// Aggregate is the server's weighting and aggregation.
	Aggregate time.Duration
	// Eval is the evaluation of the global model.
	Eval time.Duration
}

// Total returns the sum of the three parts.
func (t Timings) Total() time.Duration { return t.Local + t.Aggregate + t.Eval }

// Reporter receives the progress of one run. The engine calls Start once, Update after each round
// (or each evaluated round) and Done at the end. Implementations are safe for concurrent use.
type Reporter interface {
	// Start begins a run of total rounds; label names it (e.g. the setting and seed).
	Start(total int, label string)
	// Update reports that round (1-based) is done, with the latest metrics (may be nil) and the
	// round's timings.
	Update(round int, metrics map[string]float64, t Timings)
	// Done ends the run; status says how, e.g. "completed" or "diverged at round 7: NaN loss".
	Done(status string)
}

// StepReporter is implemented by reporters that also show progress within a round: the engine calls
// Step after each local training step of a round when its Reporter implements it.
type StepReporter interface {
	// Step reports that step of steps local training steps of round (1-based, the round in
	// progress) are done, after examples training examples in this round (all clients together).
	Step(round, step, steps, examples int)
}

// New returns the reporter for this process: a Notebook under GoNB, else a Terminal on
// standard error (updating in place when it is a terminal), so that a command's results on
// standard output can be redirected to a file while its progress stays on the screen.
func New() Reporter {
	if gonbui.IsNotebook {
		return NewNotebook()
	}
	return NewTerminal(os.Stderr, IsTerminal(os.Stderr))
}

// Discard is a Reporter that reports nothing.
var Discard Reporter = discard{}

type discard struct{}

func (discard) Start(int, string)                       {}
func (discard) Update(int, map[string]float64, Timings) {}
func (discard) Done(string)                             {}

// IsTerminal reports whether w is a terminal, where a line can be redrawn with a carriage
// return (false for pipes, files, /dev/null and anything that is not an *os.File).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Snapshot is the state of a run as shown by the reporters.
type Snapshot struct {
	// Label names the run.
	Label string
	// Round is the last round reported; Total the number of rounds (0 if unknown).
	Round, Total int
	// Elapsed is the wall time since Start.
	Elapsed time.Duration
	// PerRound is the estimated wall time per round (0 until known).
	PerRound time.Duration
	// ETA is the estimated time to the last round (0 when unknown or done).
	ETA time.Duration
	// Metrics are the latest metrics.
	Metrics map[string]float64
	// Last holds the timings of the last reported round.
	Last Timings
	// InRound is the round in progress (Round+1) while steps are reported, else 0; Step and Steps
	// count its local training steps, ExamplesPerSec its training throughput.
	InRound, Step, Steps int
	ExamplesPerSec       float64
	// ReusedFrom names the run whose local training the round in progress (or, after its Update,
	// the last round) took instead of training (ReuseReporter); "" when the round trained its own.
	ReusedFrom string
	// Run and Runs place the run in a sweep planned with Plan (run Run of Runs, 1-based); both are
	// 0 when no sweep was planned.
	Run, Runs int
	// SweepETA is the estimated time to the end of the planned sweep's last run (0 when unknown or
	// when no sweep was planned).
	SweepETA time.Duration
	// Status is set by Done.
	Status string
	// Finished is true after Done.
	Finished bool
}

// Fraction returns Round/Total in [0, 1] (0 when Total is unknown).
func (s Snapshot) Fraction() float64 {
	if s.Total <= 0 {
		return 0
	}
	return math.Min(1, math.Max(0, float64(s.Round)/float64(s.Total)))
}

// tracker turns Start/Update/Done calls into Snapshots.
type tracker struct {
	now                 func() time.Time
	snap                Snapshot
	start               time.Time
	firstRound, updates int
	firstAt             time.Time
	roundStart          time.Time // end of the last reported round (or Start)
	reusedRound         int       // the round ReusedFrom is about (0: none)
	sweep               sweepState
}

func (k *tracker) begin(total int, label string) {
	if k.now == nil {
		k.now = time.Now
	}
	k.snap = Snapshot{Label: label, Total: total}
	k.sweep.begin(&k.snap)
	k.start = k.now()
	k.roundStart = k.start
	k.updates, k.reusedRound = 0, 0
}

func (k *tracker) update(round int, metrics map[string]float64, t Timings) {
	if k.now == nil {
		k.begin(0, "")
	}
	now := k.now()
	if k.updates == 0 {
		k.firstRound, k.firstAt = round, now
	}
	k.updates++
	k.roundStart = now
	s := &k.snap
	s.Round, s.Last, s.Elapsed = round, t, now.Sub(k.start)
	s.InRound, s.Step, s.Steps, s.ExamplesPerSec = 0, 0, 0, 0
	if round != k.reusedRound {
		s.ReusedFrom = ""
	}
	if metrics != nil {
		s.Metrics = make(map[string]float64, len(metrics))
		for name, v := range metrics {
			s.Metrics[name] = v
		}
	}
	// Per round: wall clock between the first and the latest update when they span rounds (right
	// also for a resumed run and for evaluation every n rounds); before that, the round's timings.
	switch {
	case round > k.firstRound:
		s.PerRound = now.Sub(k.firstAt) / time.Duration(round-k.firstRound)
	case t.Total() > 0:
		s.PerRound = t.Total()
	case round > 0:
		s.PerRound = s.Elapsed / time.Duration(round)
	}
	s.ETA = 0
	if s.Total > round {
		s.ETA = s.PerRound * time.Duration(s.Total-round)
	}
	k.sweepETA(s.PerRound)
}

// step records progress within round: before the first round ends, the ETA is estimated from the
// time per step (local training only, so it is a lower bound).
func (k *tracker) step(round, step, steps, examples int) {
	if k.now == nil {
		k.begin(0, "")
	}
	now := k.now()
	s := &k.snap
	s.InRound, s.Step, s.Steps, s.Elapsed = round, step, steps, now.Sub(k.start)
	if round != k.reusedRound {
		s.ReusedFrom = ""
	}
	in := now.Sub(k.roundStart)
	if in > 0 {
		s.ExamplesPerSec = float64(examples) / in.Seconds()
	}
	if step <= 0 || steps <= 0 || in <= 0 {
		return
	}
	perStep := in / time.Duration(step)
	left := perStep * time.Duration(max(0, steps-step))
	per := s.PerRound
	if per == 0 {
		per = perStep * time.Duration(steps)
	}
	if s.Total > round {
		left += per * time.Duration(s.Total-round)
	}
	s.ETA = left
	k.sweepETA(per)
}

func (k *tracker) done(status string) {
	if k.now == nil {
		k.begin(0, "")
	}
	k.snap.Elapsed = k.now().Sub(k.start)
	k.snap.Status, k.snap.Finished, k.snap.ETA = status, true, 0
	k.sweep.end(k.roundsRun(), k.snap.Elapsed)
	k.sweepETA(k.snap.PerRound)
}

// FormatDuration formats a duration compactly: 120µs, 850ms, 3.2s, 4m05s, 2h03m. Rounding never
// produces "60": 59.96s reads 1m00s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + FormatDuration(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d.Round(100*time.Millisecond) < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d.Round(time.Second) < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
