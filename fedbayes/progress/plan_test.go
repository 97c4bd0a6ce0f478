package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlannedSweep follows a planned sweep of 3 runs of 4 rounds each with a hand-computed ETA for
// the sweep at each point: the run's own ETA plus the later runs' rounds at the sweep's wall time per
// round so far (setup included).
func TestPlannedSweep(t *testing.T) {
	now, set := fakeClock()
	k := tracker{now: now}
	k.plan(3)
	check := func(when string, run int, eta, sweep time.Duration) {
		t.Helper()
		if s := k.snap; s.Run != run || s.Runs != 3 || s.ETA != eta || s.SweepETA != sweep {
			t.Errorf("%s: run %d of %d, ETA %v, sweep ETA %v; want run %d of 3, ETA %v, sweep ETA %v",
				when, s.Run, s.Runs, s.ETA, s.SweepETA, run, eta, sweep)
		}
	}
	k.begin(4, "a")
	set(2) // 1 s of setup, then a round of 1 s: 2 s per round so far; 3 rounds left, then 2 runs of 4 rounds.
	k.update(1, nil, Timings{Local: time.Second})
	check("run 1, round 1", 1, 3*time.Second, 3*time.Second+8*2*time.Second)
	set(3) // 3 s for 2 rounds: 1.5 s a round; the run's own pace is 1 s a round.
	k.update(2, nil, Timings{Local: time.Second})
	check("run 1, round 2", 1, 2*time.Second, 2*time.Second+8*1500*time.Millisecond)
	set(5)
	k.update(4, nil, Timings{})
	k.done("completed") // 5 s for 4 rounds: 1.25 s a round, 8 rounds left.
	check("run 1 done", 1, 0, 10*time.Second)

	k.begin(4, "b")
	set(6) // 10 of 40 steps in 1 s: 3 s left in round 1 and 3 rounds of 4 s by its steps; then 1 run of 4 rounds at 1.25 s.
	k.step(1, 10, 40, 100)
	check("run 2, in round 1", 2, 15*time.Second, 15*time.Second+4*1250*time.Millisecond)
	for r := 1; r <= 4; r++ {
		set(6 + float64(r))
		k.update(r, nil, Timings{})
	}
	k.done("completed") // 10 s for 8 rounds: 1.25 s a round.
	check("run 2 done", 2, 0, 5*time.Second)

	k.begin(4, "c")
	set(11) // the last run: the sweep ends with it.
	k.update(1, nil, Timings{Local: time.Second})
	check("run 3, round 1", 3, 3*time.Second, 3*time.Second)
	k.done("completed")
	check("run 3 done", 3, 0, 0)

	k.begin(4, "d") // a run beyond the plan counts on
	if s := k.snap; s.Run != 4 || s.Runs != 4 {
		t.Errorf("a fourth run: run %d of %d, want 4 of 4", s.Run, s.Runs)
	}
}

// TestPlanRuns checks that PlanRuns numbers the runs of the reporters that are Planners (the
// terminal's lines, the notebook's block) and leaves the others alone.
func TestPlanRuns(t *testing.T) {
	var buf bytes.Buffer
	term := NewTerminal(&buf, false)
	now, set := fakeClock()
	term.setClock(now)
	PlanRuns(term, 2)
	term.Start(2, "a seed 1")
	set(1)
	term.Update(1, map[string]float64{"accuracy": 0.5}, Timings{Local: time.Second})
	for _, want := range []string{"run 1 of 2, a seed 1: 2 rounds\n", "run 1 of 2, a seed 1 round 1/2", "ETA 1.0s (sweep ETA 3.0s)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("terminal output lacks %q:\n%s", want, buf.String())
		}
	}
	var html string
	nb := NewNotebook()
	nb.update = func(_, h string) { html = h }
	nb.sync = func() {}
	nb.setClock(now)
	PlanRuns(nb, 3)
	nb.Start(2, "b")
	if !strings.Contains(html, "<b>run 1 of 3, b</b>") {
		t.Errorf("notebook block %q", html)
	}
	PlanRuns(Discard, 3) // not a Planner: nothing to do, no panic
}
