package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Terminal reports progress as text. Live (on a terminal) it redraws one line with a carriage
// return and ends it with a newline at Done; otherwise it writes one plain line per call, which
// reads well in CI logs and files.
type Terminal struct {
	mu      sync.Mutex
	w       io.Writer
	live    bool
	tr      tracker
	lastLen int
	shown   time.Time
	legend  bool // Legend has been written
}

// Step implements StepReporter: a live line shows the step within the round, examples/s and the
// ETA, redrawn at most every half second; plain output skips steps (one line per round).
func (t *Terminal) Step(round, step, steps, examples int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.step(round, step, steps, examples)
	if !t.live {
		return
	}
	if now := t.tr.now(); now.Sub(t.shown) >= stepEvery {
		t.shown = now
		t.redraw(FormatLine(t.tr.snap))
	}
}

// NewTerminal returns a Terminal writing to w; live selects the updating line (see IsTerminal).
func NewTerminal(w io.Writer, live bool) *Terminal { return &Terminal{w: w, live: live} }

// setClock replaces the clock (tests).
func (t *Terminal) setClock(now func() time.Time) { t.tr.now = now }

// Plan implements Planner: the next runs runs make one sweep.
func (t *Terminal) Plan(runs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.plan(runs)
}

// Start implements Reporter. The first run's start writes the Legend above its lines; a plain
// output writes a line with the run's rounds.
func (t *Terminal) Start(total int, label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.begin(total, label)
	t.lastLen = 0
	if !t.legend {
		fmt.Fprintln(t.w, Legend)
		t.legend = true
	}
	if !t.live {
		line := rounds(total)
		if head := lineHead(t.tr.snap); head != "" {
			line = head + ": " + line
		}
		fmt.Fprintln(t.w, line)
	}
}

// Update implements Reporter.
func (t *Terminal) Update(round int, metrics map[string]float64, tm Timings) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.update(round, metrics, tm)
	if t.live {
		t.redraw(FormatLine(t.tr.snap))
		return
	}
	fmt.Fprintln(t.w, FormatLine(t.tr.snap))
}

// Done implements Reporter.
func (t *Terminal) Done(status string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.done(status)
	line := FormatLine(t.tr.snap)
	if t.live {
		t.redraw(line)
		fmt.Fprintln(t.w)
		t.lastLen = 0
		return
	}
	fmt.Fprintln(t.w, line)
}

// redraw replaces the current line, blanking what is left of a longer previous one.
func (t *Terminal) redraw(line string) {
	n := len([]rune(line))
	pad := ""
	if t.lastLen > n {
		pad = strings.Repeat(" ", t.lastLen-n)
	}
	fmt.Fprint(t.w, "\r"+line+pad)
	t.lastLen = n
}
