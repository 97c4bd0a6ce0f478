package progress

import (
	"fmt"
	"html"
	"strings"
	"sync"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
)

// Notebook shows progress in a GoNB notebook as an HTML progress bar with the same information
// as Terminal, updated in place in one output block. Outside a notebook it shows nothing.
type Notebook struct {
	mu     sync.Mutex
	id     string
	tr     tracker
	update func(id, html string) // gonbui.UpdateHTML; replaced in tests
	sync   func()                // gonbui.Sync
	shown  time.Time             // when a step was last drawn
}

// stepEvery is the least time between two redraws for steps within a round.
const stepEvery = 500 * time.Millisecond

// Step implements StepReporter: the bar shows the step within the round, examples/s and the ETA,
// redrawn at most every half second.
func (n *Notebook) Step(round, step, steps, examples int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.id == "" {
		n.id = "fedbayes-progress-" + gonbui.UniqueId()
	}
	n.tr.step(round, step, steps, examples)
	if now := n.tr.now(); step == steps || now.Sub(n.shown) >= stepEvery {
		n.shown = now
		n.update(n.id, FormatHTML(n.tr.snap))
	}
}

// NewNotebook returns a Notebook reporter.
func NewNotebook() *Notebook {
	return &Notebook{update: gonbui.UpdateHTML, sync: gonbui.Sync}
}

// Plan implements Planner: the next runs runs make one sweep.
func (n *Notebook) Plan(runs int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.tr.plan(runs)
}

// Start implements Reporter: it creates a new output block.
func (n *Notebook) Start(total int, label string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.id = "fedbayes-progress-" + gonbui.UniqueId()
	n.tr.begin(total, label)
	n.update(n.id, FormatHTML(n.tr.snap))
}

// Update implements Reporter.
func (n *Notebook) Update(round int, metrics map[string]float64, t Timings) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.id == "" {
		n.id = "fedbayes-progress-" + gonbui.UniqueId()
	}
	n.tr.update(round, metrics, t)
	n.update(n.id, FormatHTML(n.tr.snap))
}

// Done implements Reporter: it draws the final state and waits until GoNB has displayed it, so
// that it is not lost when the program exits right after.
func (n *Notebook) Done(status string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.id == "" {
		n.id = "fedbayes-progress-" + gonbui.UniqueId()
	}
	n.tr.done(status)
	n.update(n.id, FormatHTML(n.tr.snap))
	n.sync()
}

// setClock replaces the clock (tests).
func (n *Notebook) setClock(now func() time.Time) { n.tr.now = now }

// FormatHTML renders a snapshot as a small HTML block: the run's place in a planned sweep and its
// label, a <progress> bar, the round counts, time per round, the ETAs of the run and of the sweep,
// and a line of the latest metrics (train-loss with the Legend as its tooltip). All text is escaped.
func FormatHTML(s Snapshot) string {
	var b strings.Builder
	b.WriteString(`<div class="fedbayes-progress" style="font-family:monospace;font-size:12px;line-height:1.5">`)
	if head := lineHead(s); head != "" {
		b.WriteString("<b>" + html.EscapeString(head) + "</b> ")
	}
	if s.Finished {
		color := "#2e7d32"
		if !strings.HasPrefix(s.Status, "completed") {
			color = "#c62828"
		}
		fmt.Fprintf(&b, `<span style="color:%s">%s</span>: %s in %s`, color, html.EscapeString(s.Status),
			rounds(s.Round), FormatDuration(s.Elapsed))
	} else {
		if s.Total > 0 {
			fmt.Fprintf(&b, `<progress value="%d" max="%d" style="width:16em;vertical-align:middle"></progress> `, min(s.Round, s.Total), s.Total)
			fmt.Fprintf(&b, "round %d/%d (%.0f%%)", s.Round, s.Total, 100*s.Fraction())
		} else {
			fmt.Fprintf(&b, "round %d", s.Round)
		}
		if s.InRound > 0 && s.Steps > 0 {
			fmt.Fprintf(&b, " · round %d: step %d/%d, %s", s.InRound, s.Step, s.Steps, html.EscapeString(inRound(s)))
		}
		if s.PerRound > 0 {
			fmt.Fprintf(&b, " · %s/round", FormatDuration(s.PerRound))
		}
		if s.ETA > 0 {
			fmt.Fprintf(&b, " · ETA %s", FormatDuration(s.ETA))
		}
	}
	if s.SweepETA > 0 {
		fmt.Fprintf(&b, " · sweep ETA %s", FormatDuration(s.SweepETA))
	}
	if names := lineMetrics(s.Metrics); len(names) > 0 {
		b.WriteString("<br>")
		for i, name := range names {
			if i > 0 {
				b.WriteString(" · ")
			}
			label := html.EscapeString(metricLabel(name))
			if metricLabel(name) != name {
				label = `<span title="` + html.EscapeString(Legend) + `">` + label + `</span>`
			}
			b.WriteString(label + " <b>" + formatValue(s.Metrics[name]) + "</b>")
		}
	}
	if t := s.Last; t.Total() > 0 && !s.Finished {
		reused := ""
		if s.ReusedFrom != "" && s.InRound == 0 {
			reused = " (reused from run " + html.EscapeString(s.ReusedFrom) + ")"
		}
		fmt.Fprintf(&b, `<br><span style="color:#666">last round: local %s%s · aggregation %s · evaluation %s</span>`,
			FormatDuration(t.Local), reused, FormatDuration(t.Aggregate), FormatDuration(t.Eval))
	}
	b.WriteString("</div>")
	return b.String()
}
