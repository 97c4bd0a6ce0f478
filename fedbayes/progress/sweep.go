package progress

import (
	"fmt"
	"sync"
)

// Sweep shows the runs of a sweep (several settings and seeds, run one after another) in one
// reporter: their rounds add up to the total given to NewSweep, so one bar and one ETA cover them
// all. It forwards steps within a round when the underlying reporter shows them.
type Sweep struct {
	mu             sync.Mutex
	bar            Reporter
	label          string
	total, done    int // rounds of all runs; rounds of the runs already ended
	runTotal, runs int // rounds of the current run; runs ended
	stopped        int // runs that ended other than "completed"
	started        bool
}

// NewSweep returns a Sweep over runs whose rounds add up to total, drawn by bar (New() when nil)
// under label.
func NewSweep(bar Reporter, total int, label string) *Sweep {
	if bar == nil {
		bar = New()
	}
	return &Sweep{bar: bar, total: total, label: label}
}

// Start implements Reporter: the first run starts the bar.
func (p *Sweep) Start(total int, label string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		p.bar.Start(p.total, p.label)
		p.started = true
	}
	p.runTotal = total
}

// Update implements Reporter: round of the current run is round done+round of the sweep.
func (p *Sweep) Update(round int, m map[string]float64, t Timings) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Update(p.done+round, m, t)
}

// Step implements StepReporter.
func (p *Sweep) Step(round, step, steps, examples int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.bar.(StepReporter); ok {
		s.Step(p.done+round, step, steps, examples)
	}
}

// Done implements Reporter: it counts the run's rounds as done (a run resumed or already
// finished counts in full).
func (p *Sweep) Done(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += p.runTotal
	p.runs++
	if status != "completed" {
		p.stopped++
	}
}

// Finish ends the bar with status, or with the number of runs when status is "".
func (p *Sweep) Finish(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		return
	}
	if status == "" {
		status = fmt.Sprintf("completed: %d runs", p.runs)
		if p.stopped > 0 {
			status = fmt.Sprintf("%d runs, %d did not complete", p.runs, p.stopped)
		}
	}
	p.bar.Done(status)
	p.started = false
}
