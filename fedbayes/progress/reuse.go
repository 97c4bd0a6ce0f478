package progress

import (
	"fmt"

	"github.com/janpfeifer/gonb/gonbui"
)

// ReuseReporter is implemented by reporters that show a round whose local training was not run but
// taken, whole, from another run: the engine shares round 1 among the runs of one Run that differ
// only in the server strategy. For such a round the engine calls Reused once instead of Step, so the
// round's steps are all done at once and the reporter can say why.
type ReuseReporter interface {
	// Reused reports that round (1-based, the round in progress) took its steps local training steps
	// over examples training examples (all clients together) from the run named from.
	Reused(round, steps, examples int, from string)
}

// ReportReused tells rep that round took its steps local training steps over examples training
// examples from the run named from: through Reused when rep is a ReuseReporter, else, when it shows
// steps (StepReporter), as the round's last step so its counts reach the round's total; a round of
// no steps is no step. A reporter that shows neither is told nothing.
func ReportReused(rep Reporter, round, steps, examples int, from string) {
	switch rep := rep.(type) {
	case ReuseReporter:
		rep.Reused(round, steps, examples, from)
	case StepReporter:
		if steps > 0 {
			rep.Step(round, steps, steps, examples)
		}
	}
}

// reused records that round took its local training from run from: its steps are all done, and no
// examples were trained here, so no throughput is shown.
func (k *tracker) reused(round, steps, examples int, from string) {
	if k.now == nil {
		k.begin(0, "")
	}
	s := &k.snap
	s.InRound, s.Step, s.Steps, s.Elapsed = round, steps, steps, k.now().Sub(k.start)
	s.ExamplesPerSec, s.ReusedFrom = 0, from
	k.reusedRound = round
}

// inRound describes the pace of the round in progress: its throughput, or the run it took its local
// training from.
func inRound(s Snapshot) string {
	if s.ReusedFrom != "" {
		return "reused from run " + s.ReusedFrom
	}
	return fmt.Sprintf("%.0f examples/s", s.ExamplesPerSec)
}

// reusedLine is the line a Terminal writes for a reused round, after head (lineHead).
func reusedLine(head string, round, steps, examples int, from string) string {
	line := fmt.Sprintf("round %d: local training (%d steps, %d examples) reused from run %s", round, steps, examples, from)
	if head != "" {
		line = head + ": " + line
	}
	return line
}

// Reused implements ReuseReporter: a line of its own says which run the round's local training
// came from (above the live line on a terminal), and the live line shows the round's steps done.
func (t *Terminal) Reused(round, steps, examples int, from string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tr.reused(round, steps, examples, from)
	line := reusedLine(lineHead(t.tr.snap), round, steps, examples, from)
	if !t.live {
		fmt.Fprintln(t.w, line)
		return
	}
	t.redraw(line)
	fmt.Fprintln(t.w)
	t.lastLen = 0
	t.shown = t.tr.now()
	t.redraw(FormatLine(t.tr.snap))
}

// Reused implements ReuseReporter: the bar shows the round's steps done and the run they came from.
func (n *Notebook) Reused(round, steps, examples int, from string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.id == "" {
		n.id = "fedbayes-progress-" + gonbui.UniqueId()
	}
	n.tr.reused(round, steps, examples, from)
	n.shown = n.tr.now()
	n.update(n.id, FormatHTML(n.tr.snap))
}

// Reused implements ReuseReporter: it forwards the round with the offset of the runs done
// (ReportReused: to a reporter that shows steps only, the round's last step).
func (p *Sweep) Reused(round, steps, examples int, from string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ReportReused(p.bar, p.done+round, steps, examples, from)
}
