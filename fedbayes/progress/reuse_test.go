package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// A reused round has all its steps done at once, shows the run it came from instead of a throughput,
// keeps saying so after its Update, and forgets it when the next round trains.
func TestTrackerReused(t *testing.T) {
	now, set := fakeClock()
	k := tracker{now: now}
	k.begin(3, "b")
	set(0.001)
	k.reused(1, 40, 1200, "a-seed1")
	s := k.snap
	if s.InRound != 1 || s.Step != 40 || s.Steps != 40 || s.ExamplesPerSec != 0 || s.ReusedFrom != "a-seed1" {
		t.Errorf("reused round: %+v", s)
	}
	if line := FormatLine(s); !strings.Contains(line, "(round 1: step 40/40, reused from run a-seed1)") {
		t.Errorf("line %q", line)
	}
	set(2)
	k.update(1, nil, Timings{Local: 3 * time.Second, Aggregate: time.Second})
	if k.snap.InRound != 0 || k.snap.ReusedFrom != "a-seed1" {
		t.Errorf("after the reused round's update: %+v", k.snap)
	}
	if h := FormatHTML(k.snap); !strings.Contains(h, "last round: local 3.0s (reused from run a-seed1)") {
		t.Errorf("html %q", h)
	}
	set(3)
	k.step(2, 1, 40, 30)
	if k.snap.ReusedFrom != "" || k.snap.ExamplesPerSec != 30 {
		t.Errorf("round 2 trains: %+v", k.snap)
	}
	k.begin(3, "c")
	if k.snap.ReusedFrom != "" || k.reusedRound != 0 {
		t.Errorf("a new run starts with the reuse of the last: %+v", k.snap)
	}
}

// Every sink shows a reused round: the plain terminal with a line of its own, the live terminal with
// that line above the redrawn bar, the notebook in its block, a sweep through the bar it draws with
// the rounds of the runs done (as a last step to a bar that shows steps only).
func TestReusedSinks(t *testing.T) {
	now, _ := fakeClock()
	for _, live := range []bool{false, true} {
		var buf bytes.Buffer
		term := NewTerminal(&buf, live)
		term.setClock(now)
		term.Start(2, "fed-fedbe seed 1")
		term.Reused(1, 40, 1200, "fed-fedavg-seed1")
		out := buf.String()
		want := "fed-fedbe seed 1: round 1: local training (40 steps, 1200 examples) reused from run fed-fedavg-seed1\n"
		if !strings.Contains(out, want) {
			t.Errorf("live %v: output %q lacks %q", live, out, want)
		}
		if live && !strings.HasSuffix(out, "(round 1: step 40/40, reused from run fed-fedavg-seed1)") {
			t.Errorf("live line after the note: %q", out)
		}
	}

	var html string
	nb := NewNotebook()
	nb.update = func(_, h string) { html = h }
	nb.sync = func() {}
	nb.setClock(now)
	nb.Start(2, "r")
	nb.Reused(1, 40, 1200, "fed-fedavg-seed1")
	if !strings.Contains(html, "round 1: step 40/40, reused from run fed-fedavg-seed1") {
		t.Errorf("notebook block %q", html)
	}

	var buf bytes.Buffer
	term := NewTerminal(&buf, false)
	term.setClock(now)
	sw := NewSweep(term, 4, "all runs")
	sw.Start(2, "a")
	sw.Update(1, nil, Timings{})
	sw.Update(2, nil, Timings{})
	sw.Done("completed")
	sw.Start(2, "b")
	sw.Reused(1, 40, 1200, "a-seed1")
	if s := term.tr.snap; s.InRound != 3 || s.Step != 40 || s.Steps != 40 || s.ReusedFrom != "a-seed1" {
		t.Errorf("sweep: %+v", s)
	}
	rec := &stepsOnly{Reporter: Discard}
	sw = NewSweep(rec, 4, "all runs")
	sw.Start(2, "a")
	sw.Done("completed")
	sw.Reused(1, 40, 1200, "a-seed1")
	if rec.got != [4]int{3, 40, 40, 1200} {
		t.Errorf("sweep over a step reporter: Step%v, want round 3, step 40 of 40, 1200 examples", rec.got)
	}
}

// stepsOnly is a reporter that shows steps but not reused rounds.
type stepsOnly struct {
	Reporter
	got [4]int
}

func (s *stepsOnly) Step(round, step, steps, examples int) {
	s.got = [4]int{round, step, steps, examples}
}

// TestReportReused checks what ReportReused tells each kind of reporter: a step reporter the round's
// last step, and nothing for a round of no steps.
func TestReportReused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps int
		want  [4]int
	}{
		{"40 steps", 40, [4]int{2, 40, 40, 1200}},
		{"no steps", 0, [4]int{}},
	} {
		rec := &stepsOnly{Reporter: Discard}
		ReportReused(rec, 2, tc.steps, 1200, "a-seed1")
		if rec.got != tc.want {
			t.Errorf("%s: Step%v, want %v", tc.name, rec.got, tc.want)
		}
	}
}
