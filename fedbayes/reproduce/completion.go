package reproduce

import (
	"fmt"
	"math"
	"slices"
	"time"

	"fedbayes.dev/fedbayes/internal/words"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
)

// runCount is how far a preset has run: Done finished runs (completed, or diverged, which is a
// result too) of the Want its spec makes at the budget.
type runCount struct{ Done, Want int }

// complete reports whether every run of the preset has finished.
func (c runCount) complete() bool { return c.Want > 0 && c.Done >= c.Want }

// paperRuns are the runs a paper's section is built from.
type paperRuns struct {
	// complete are the completed runs of the presets whose runs have all finished, by preset name
	// at the budget. A preset with runs still to do has none here: its section says "not run yet"
	// and gives no verdict, so that a partly computed budget is never judged on some of its seeds
	// or rows.
	complete map[string][]results.Run
	// count is each preset's progress, by preset name at the budget.
	count map[string]runCount
	// time is the wall time spent on each preset's runs so far (finished or not), by preset name at
	// the budget.
	time map[string]wallTime
	// diverged are the runs that stopped diverged, by preset name at the budget (their status says
	// the round), for the findings that explain a divergence.
	diverged map[string][]results.Run
}

// wantRuns is the number of runs preset p makes at budget b: settings x seeds.
func wantRuns(p Preset, b Budget) (int, error) {
	name := p.Name(b)
	s, err := presets.Preset(name)
	if err != nil {
		return 0, err
	}
	settings, err := s.Expand()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range settings {
		n += len(st.Spec.WithDefaults().Seeds)
	}
	return n, nil
}

// countRuns sorts a paper's runs into paperRuns: finished runs are the completed ones plus the
// skipped run directories of the preset whose status is diverged.
func countRuns(p *Paper, b Budget, runs map[string][]results.Run, skipped []results.Skipped) (paperRuns, error) {
	out := paperRuns{complete: map[string][]results.Run{}, count: map[string]runCount{}, time: map[string]wallTime{}, diverged: map[string][]results.Run{}}
	diverged := map[string]int{}
	for _, s := range skipped {
		if r, err := results.ReadRun(s.Dir); err == nil && r.Status.State == results.Diverged {
			if name := presetOf(p, b, r.Meta.Setting); name != "" {
				diverged[name]++
				out.diverged[name] = append(out.diverged[name], r)
			}
		}
	}
	for _, pr := range p.PresetsAt(b) {
		name := pr.Name(b)
		want, err := wantRuns(pr, b)
		if err != nil {
			return paperRuns{}, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		c := runCount{Done: len(runs[name]) + diverged[name], Want: want}
		out.count[name] = c
		if c.complete() {
			out.complete[name] = runs[name]
		}
	}
	return out, nil
}

// wallTime is the wall time of the runs a report reads, from their rows.
type wallTime struct {
	// Runs is the number of run directories read (complete or not).
	Runs int
	// Recorded is the sum over the runs' rows of their timed parts (local training, aggregation,
	// evaluation), in seconds; TimedRounds is the number of those rows.
	Recorded    float64
	TimedRounds int
	// Estimated is the training and aggregation of the rounds an engine run did not evaluate
	// (and so did not time), at the mean of the same run's timed rounds, in seconds; Untimed is the
	// number of those rounds.
	Estimated float64
	Untimed   int
	// spans place the finished runs in time, for the elapsed time; Unplaced is the time of the
	// runs without a finishing time (unfinished ones), in seconds.
	spans    []span
	Unplaced float64
}

// span is the stretch of time one finished run took: it ended when its status was written and
// lasted its recorded plus estimated time, but began no earlier than its run.json was written (when
// its command began, at the latest when it first started). A run resumed after a break is placed
// as if it had run without one, just before it finished.
type span struct{ start, end time.Time }

// add counts one run: its rows, and the rounds before its last row (or its final round, when
// completed) that have no row.
func (w *wallTime) add(r results.Run) {
	w.Runs++
	if len(r.Rows) == 0 {
		return
	}
	var recorded, train, estimated float64
	for _, row := range r.Rows {
		recorded += row.Time.Total()
		train += row.Time.LocalSeconds + row.Time.AggregateSeconds
	}
	w.TimedRounds += len(r.Rows)
	last := r.Rows[len(r.Rows)-1].Round
	if r.Status.State == results.Completed && r.Status.Round > last {
		last = r.Status.Round
	}
	if untimed := last - len(r.Rows); untimed > 0 && r.Rows[0].Round >= 1 {
		w.Untimed += untimed
		estimated = float64(untimed) * train / float64(len(r.Rows))
	}
	w.Recorded += recorded
	w.Estimated += estimated
	w.place(r, recorded+estimated)
}

// place records that run r took seconds.
func (w *wallTime) place(r results.Run, seconds float64) {
	end, err := time.Parse(time.RFC3339, r.Status.Time)
	if r.Status.State == "" || err != nil {
		w.Unplaced += seconds
		return
	}
	start := end.Add(-time.Duration(seconds * float64(time.Second)))
	if first, err := time.Parse(time.RFC3339, r.Meta.Info.Time); err == nil && first.After(start) && !first.After(end) {
		start = first
	}
	w.spans = append(w.spans, span{start: start, end: end})
}

// total is the recorded plus the estimated time, in seconds: the sum over the runs.
func (w wallTime) total() float64 { return w.Recorded + w.Estimated }

// elapsed is the time during which at least one run went, in seconds: the union of the finished
// runs' spans plus the unplaced time. It is below total when runs went at the same time (for
// example two queues of runs, one per core).
func (w wallTime) elapsed() float64 {
	spans := slices.Clone(w.spans)
	slices.SortFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	sum := w.Unplaced
	var covered time.Time // the end of the union so far
	for _, sp := range spans {
		start := sp.start
		if start.Before(covered) {
			start = covered
		}
		if sp.end.After(start) {
			sum += sp.end.Sub(start).Seconds()
			covered = sp.end
		}
	}
	return sum
}

// String states the wall time for the report's header.
func (w wallTime) String() string {
	if w.Runs == 0 {
		return "no runs yet"
	}
	s := fmt.Sprintf("%s over %d %s: %s recorded in their %d timed %s (training, aggregation and evaluation)",
		hours(w.total()), w.Runs, words.Plural(w.Runs, "run"), hours(w.Recorded), w.TimedRounds, words.Plural(w.TimedRounds, "round"))
	if w.Untimed > 0 {
		s += fmt.Sprintf(", plus %s estimated for the %d %s that were not evaluated and so not timed "+
			"(their training and aggregation at the mean of the same run's timed rounds)", hours(w.Estimated), w.Untimed, words.Plural(w.Untimed, "round"))
	}
	if e := w.elapsed(); w.total()-e >= 60 {
		s += fmt.Sprintf("; runs went at the same time, so %s elapsed (each run placed just before it finished and not before "+
			"it started, time shared by runs counted once)", hours(e))
	}
	return s
}

// hours prints seconds as "1.25 h" (or "42 min" under an hour).
func hours(sec float64) string {
	if sec < 3600 {
		return fmt.Sprintf("%.0f min", math.Round(sec/60))
	}
	return fmt.Sprintf("%.2f h", sec/3600)
}

// addWallTime adds up the wall time of every run of the paper's presets at budget b, per preset
// (into pr.time) and in all (into w): the complete runs and the skipped run directories of those
// presets (unfinished or diverged runs took time too).
func addWallTime(p *Paper, b Budget, runs map[string][]results.Run, skipped []results.Skipped, pr paperRuns, w *wallTime) {
	add := func(name string, r results.Run) {
		t := pr.time[name]
		t.add(r)
		pr.time[name] = t
		w.add(r)
	}
	for name, rs := range runs {
		for _, r := range rs {
			add(name, r)
		}
	}
	for _, s := range skipped {
		if r, err := results.ReadRun(s.Dir); err == nil {
			if name := presetOf(p, b, r.Meta.Setting); name != "" {
				add(name, r)
			}
		}
	}
}
