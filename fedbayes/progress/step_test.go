package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Steps within the first round give examples/s and an ETA before any round has ended: after 10 of
// 40 steps in 5 s (0.5 s a step, 320 examples), 30 steps are left in this round and 40 in each of
// the 9 rounds after it: 15 s + 9 x 20 s = 195 s.
func TestTrackerSteps(t *testing.T) {
	now, set := fakeClock()
	k := tracker{now: now}
	k.begin(10, "run")
	set(5)
	k.step(1, 10, 40, 320)
	s := k.snap
	if s.InRound != 1 || s.Step != 10 || s.Steps != 40 || s.ExamplesPerSec != 64 || s.ETA != 195*time.Second {
		t.Errorf("after 10 steps: %+v", s)
	}
	if line := FormatLine(s); !strings.Contains(line, "(round 1: step 10/40, 64 examples/s)") || !strings.Contains(line, "ETA 3m15s") {
		t.Errorf("line %q", line)
	}
	// The end of round 1 (at 21 s) resets the step counts; in round 2 the measured time per round
	// is used for the rounds after it: 1 s a step, 20 steps left, 8 rounds of 21 s.
	set(21)
	k.update(1, nil, Timings{Local: 20 * time.Second, Eval: time.Second})
	if k.snap.InRound != 0 || k.snap.Steps != 0 {
		t.Errorf("after the round: %+v", k.snap)
	}
	set(41)
	k.step(2, 20, 40, 640)
	if k.snap.ETA != 20*time.Second+8*21*time.Second || k.snap.ExamplesPerSec != 32 {
		t.Errorf("round 2: ETA %v, %v examples/s", k.snap.ETA, k.snap.ExamplesPerSec)
	}
}

// The notebook bar redraws steps at most every half second, and always the last step.
func TestNotebookStepThrottle(t *testing.T) {
	n := 0
	nb := NewNotebook()
	nb.update = func(string, string) { n++ }
	nb.sync = func() {}
	now, set := fakeClock()
	nb.setClock(now)
	nb.Start(2, "r")
	for i := 1; i <= 100; i++ {
		set(float64(i) * 0.01) // 100 steps in one second
		nb.Step(1, i, 100, i*10)
	}
	if n < 2 || n > 4 { // Start, one or two throttled steps, the last step
		t.Errorf("%d redraws for 100 steps in 1 s", n)
	}
}

// A sweep adds up the rounds of its runs and forwards steps with the offset of the runs done.
func TestSweep(t *testing.T) {
	var buf bytes.Buffer
	term := NewTerminal(&buf, false)
	now, _ := fakeClock()
	term.setClock(now)
	sw := NewSweep(term, 5, "all runs")
	sw.Start(2, "a")
	sw.Update(1, nil, Timings{})
	sw.Update(2, nil, Timings{})
	sw.Done("completed")
	sw.Start(3, "b")
	sw.Step(1, 1, 2, 10)
	if term.tr.snap.InRound != 3 {
		t.Errorf("step of run b, round 1: sweep round %d, want 3", term.tr.snap.InRound)
	}
	sw.Update(1, nil, Timings{})
	sw.Done("interrupted at round 1")
	sw.Finish("")
	out := buf.String()
	for _, want := range []string{"all runs: 5 rounds", "round 2/5", "round 3/5", "2 runs, 1 did not complete"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
