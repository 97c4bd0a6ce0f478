package progress

import "time"

// Planner is implemented by reporters that number the runs of a sweep run one after another and
// estimate when the sweep ends: after Plan(runs), each Start begins the next of runs runs, and each
// line says "run k of runs" and the sweep's ETA. The caller counts only the runs that will start
// (a resumed sweep's finished runs do not).
type Planner interface {
	Plan(runs int)
}

// PlanRuns tells rep that the next runs runs make one sweep, when rep is a Planner.
func PlanRuns(rep Reporter, runs int) {
	if p, ok := rep.(Planner); ok {
		p.Plan(runs)
	}
}

// sweepState is what a tracker knows of a planned sweep: its number of runs, how many have started,
// and the rounds and wall time of those that ended.
type sweepState struct {
	runs, started int
	open          bool          // a run has started and not ended
	rounds        int           // rounds the ended runs ran (in this process)
	busy          time.Duration // wall time of the ended runs, Start to Done
}

// begin numbers the run that starts in s (nothing when no sweep is planned).
func (w *sweepState) begin(s *Snapshot) {
	if w.runs == 0 {
		return
	}
	w.started++
	w.open = true
	s.Run, s.Runs = w.started, max(w.runs, w.started)
}

// end adds the run that ended, after rounds rounds in elapsed.
func (w *sweepState) end(rounds int, elapsed time.Duration) {
	if !w.open {
		return
	}
	w.open = false
	w.rounds += rounds
	w.busy += elapsed
}

// plan starts a sweep of runs runs.
func (k *tracker) plan(runs int) { k.sweep = sweepState{runs: max(0, runs)} }

// roundsRun is the number of rounds the current run has run in this process (a resumed run
// starts after its checkpoint).
func (k *tracker) roundsRun() int {
	if k.updates == 0 {
		return 0
	}
	return k.snap.Round - k.firstRound + 1
}

// sweepETA sets the snapshot's SweepETA in a planned sweep: the run's own ETA plus, for each run
// after it, the current run's number of rounds at the sweep's pace (the wall time per round of the
// runs ended and of this one up to its last round, setup included), or, before any round has ended,
// at per, the current run's own estimate. It is 0 when no sweep is planned or nothing is known yet.
func (k *tracker) sweepETA(per time.Duration) {
	s := &k.snap
	s.SweepETA = 0
	if s.Runs == 0 {
		return
	}
	rounds, busy := k.sweep.rounds, k.sweep.busy
	if k.sweep.open && k.updates > 0 {
		rounds += k.roundsRun()
		busy += k.roundStart.Sub(k.start)
	}
	if rounds > 0 {
		per = busy / time.Duration(rounds)
	}
	later := s.Runs - s.Run
	if later > 0 && (per <= 0 || s.Total <= 0) {
		return
	}
	s.SweepETA = s.ETA + per*time.Duration(later*s.Total)
}
