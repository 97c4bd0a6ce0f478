package results

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Expect returns the rounds at which a completed run of meta's spec evaluated, in increasing order;
// ok is false when the spec does not say (the run's rows are then checked against its status only).
// The engine provides one for its specs (engine.ExpectedRounds); the results package does not know
// any spec format.
type Expect func(m Meta) (rounds []int, ok bool)

// checkValue reports why v is not a possible value of metric, or nil.
func checkValue(metric string, v float64) error {
	rg := MetricOf(metric).Range
	switch {
	case rg == nil:
		return nil
	case math.IsNaN(v):
		return fmt.Errorf("%s is NaN", metric)
	case math.IsInf(v, 1) && rg.PosInf:
		return nil
	case math.IsInf(v, 0):
		return fmt.Errorf("%s is %v", metric, v)
	case v < rg.Lo || v > rg.Hi:
		return fmt.Errorf("%s %v is outside [%v, %v]", metric, v, rg.Lo, rg.Hi)
	}
	return nil
}

// CheckValues reports the first metric of the row whose value is impossible (accuracy outside
// [0, 1], a NaN, ... see the ranges in Metrics), a per-client accuracy outside [0, 1], and a row
// that records some posterior-health metrics (HealthMetrics) but not all, or without Spread. A
// row that passes may still be wrong, but one that fails is certainly corrupt.
func (r Row) CheckValues() error {
	for _, name := range r.MetricNames() {
		if err := checkValue(name, r.Metrics[name]); err != nil {
			return fmt.Errorf("results: row of round %d: %w", r.Round, err)
		}
	}
	if err := r.checkHealth(); err != nil {
		return err
	}
	for i, a := range r.ClientAccuracy {
		if err := checkValue(Accuracy, a); err != nil {
			return fmt.Errorf("results: row of round %d: client %d: %w", r.Round, i, err)
		}
	}
	return nil
}

// Check reports why a finished run's rows cannot be trusted, or nil. It compares the rows with
// the status (a completed run's last row is the status round; no row lies beyond it; no torn last
// line), with the rounds expect derives from the spec (when expect is not nil and knows the spec),
// and checks every value (Row.CheckValues). An incomplete run (no status) is not checked: Resume
// repairs it.
func (r Run) Check(expect Expect) error {
	st := r.Status
	if st.State == "" {
		return nil
	}
	if r.TornBytes > 0 {
		return fmt.Errorf("%s ends in a torn line (%d bytes that are not a complete row), but the run is %s: rows are missing", RowsFile, r.TornBytes, st)
	}
	for i, row := range r.Rows {
		if row.Round > st.Round {
			return fmt.Errorf("%s line %d holds round %d, after the run's last round %d (%s)", RowsFile, i+1, row.Round, st.Round, st)
		}
		if err := row.CheckValues(); err != nil {
			return fmt.Errorf("%s line %d: %w", RowsFile, i+1, err)
		}
	}
	if st.State == Completed {
		if len(r.Rows) == 0 {
			return fmt.Errorf("completed at round %d without any rows", st.Round)
		}
		if last := r.Rows[len(r.Rows)-1].Round; last != st.Round {
			return fmt.Errorf("%s ends at round %d, but the run %s: rows are missing", RowsFile, last, st)
		}
	}
	if expect == nil {
		return nil
	}
	want, ok := expect(r.Meta)
	if !ok {
		return nil
	}
	if st.State == Completed && (len(want) == 0 || want[len(want)-1] != st.Round) {
		last := -1
		if len(want) > 0 {
			last = want[len(want)-1]
		}
		return fmt.Errorf("%s, but its spec ends at round %d", st, last)
	}
	n := len(want)
	if st.State != Completed && len(r.Rows) < n {
		n = len(r.Rows) // a run stopped early holds a prefix of the spec's rounds
	}
	want = want[:n]
	for i := 0; i < len(want) || i < len(r.Rows); i++ {
		switch {
		case i >= len(r.Rows):
			return fmt.Errorf("%s has %d rows; the spec evaluates round %d as row %d", RowsFile, len(r.Rows), want[i], i+1)
		case i >= len(want):
			return fmt.Errorf("%s line %d holds round %d, which the spec does not evaluate", RowsFile, i+1, r.Rows[i].Round)
		case r.Rows[i].Round != want[i]:
			return fmt.Errorf("%s line %d holds round %d; the spec evaluates round %d there", RowsFile, i+1, r.Rows[i].Round, want[i])
		}
	}
	return nil
}

// CheckOptions say how strictly a reader judges the runs it reads: every reader of runs (run
// --resume, table, the reproduction report, the Slurm status and submit, the notebooks, the records
// reader) checks them with CheckRun and CheckRuns, choosing what it asks for. The zero value checks
// each run's rows against its status and values (Run.Check) and that no (setting, labels, seed) is
// held twice.
type CheckOptions struct {
	// Expect gives the rounds a run's spec evaluates, to check its rows against (see Run.Check);
	// nil checks the rows against the status only. The engine provides engine.ExpectedRounds.
	Expect Expect
	// Spec, when not nil, reports why a run's recorded Meta is not a run the reader expects (another
	// spec, setting or seed under the same name), or nil. The results package knows no spec format:
	// the engine provides one from a spec (engine.SpecCheck).
	Spec func(Meta) error
	// Clean refuses a run whose binary was built from a modified tree (Meta.Info.GitDirty): its
	// recorded commit does not reproduce it.
	Clean bool
}

// LoadOptions configure LoadWith: the checks a loaded run must pass (CheckOptions).
type LoadOptions = CheckOptions

// RefusedError is why a reader does not trust a run: Dir names the run folder, Reason says why.
type RefusedError struct {
	Dir, Reason string
}

func (e *RefusedError) Error() string { return e.Dir + ": " + e.Reason }

// CheckRun reports, as a *RefusedError naming r.Dir, why a reader with options o must not trust
// the run r, or nil. It checks, in order: clean-tree provenance (when o.Clean), the recorded spec
// (when o.Spec is not nil), then the rows against the status and the spec's rounds (Run.Check with
// o.Expect). It does not look at the run's state: an incomplete run passes the rows check (Resume
// repairs it); whether a failed or diverged run counts is the reader's choice.
func (o CheckOptions) CheckRun(r Run) error {
	refuse := func(format string, a ...any) error {
		return &RefusedError{Dir: r.Dir, Reason: fmt.Sprintf(format, a...)}
	}
	if o.Clean && r.Meta.Info.GitDirty {
		return refuse("holds a run computed by a binary built from a modified tree (git_dirty in %s, commit %s): its commit does not reproduce it; run it again from a clean tree", MetaFile, r.Meta.Info.GitCommit)
	}
	if o.Spec != nil {
		if err := o.Spec(r.Meta); err != nil {
			return refuse("holds a run of another experiment (%v)", err)
		}
	}
	if err := r.Check(o.Expect); err != nil {
		return refuse("%v; its rows cannot be trusted", err)
	}
	return nil
}

// runIdentity is what makes two runs the same run: setting, labels and seed.
func runIdentity(m Meta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q\x00%d", m.Setting, m.Seed)
	for _, k := range m.LabelNames() {
		fmt.Fprintf(&b, "\x00%q=%q", k, m.Labels[k])
	}
	return b.String()
}

// CheckRuns checks a set of runs as a reader with options o trusts them: each run with CheckRun
// (those refused are returned in refused, with the reason, and left out of ok), and each (setting,
// labels, seed) at most once among all the runs given, refused or not: a copied folder (cp -r RUN
// RUN.bak) or a records entry under another name would count one seed twice. That is an error
// naming both folders, not a skip, since the reader cannot tell which copy to keep. ok keeps the
// order of runs.
func CheckRuns(runs []Run, o CheckOptions) (ok []Run, refused []Skipped, err error) {
	if err := CheckUnique(runs); err != nil {
		return nil, nil, err
	}
	for _, r := range runs {
		if err := o.CheckRun(r); err != nil {
			refused = append(refused, Skipped{Dir: r.Dir, Reason: refusedReason(err)})
			continue
		}
		ok = append(ok, r)
	}
	return ok, refused, nil
}

// CheckUnique returns an error naming both folders if two runs are the same run (setting, labels
// and seed), or nil.
func CheckUnique(runs []Run) error {
	seen := make(map[string]string, len(runs))
	for _, r := range runs {
		id := runIdentity(r.Meta)
		if first, dup := seen[id]; dup {
			return fmt.Errorf("results: %s and %s both hold setting %s seed %d (a copied run folder or a record under another name would count one seed twice); remove one of them",
				first, r.Dir, r.Meta.Setting, r.Meta.Seed)
		}
		seen[id] = r.Dir
	}
	return nil
}

// refusedReason is a CheckRun error's reason without the folder (Skipped names it).
func refusedReason(err error) string {
	if re := (*RefusedError)(nil); errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}

// checkHealth reports a row that records some posterior-health metrics but not all, or records them
// without Spread.
func (r Row) checkHealth() error {
	n := 0
	for _, m := range HealthMetrics {
		if _, ok := r.Metrics[m]; ok {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	for _, m := range HealthMetrics {
		if _, ok := r.Metrics[m]; !ok {
			return fmt.Errorf("results: row of round %d records %d of the %d posterior-health metrics but not %q", r.Round, n, len(HealthMetrics), m)
		}
	}
	if _, ok := r.Metrics[Spread]; !ok {
		return fmt.Errorf("results: row of round %d records posterior-health metrics without %q", r.Round, Spread)
	}
	return nil
}
