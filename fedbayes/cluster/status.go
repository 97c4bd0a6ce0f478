package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// State is where one run of a submitted sweep stands.
type State string

// The states of Check, in the order Report.Counts prints them.
const (
	// Done: the run completed.
	Done State = "done"
	// Running: a live process holds the run's claim.
	Running State = "running"
	// Queued: Slurm still holds a pending task for it.
	Queued State = "queued"
	// Failed: the run recorded an error, or its directory cannot be read.
	Failed State = "failed"
	// Interrupted: the run started and stopped without a status (a killed or cancelled task); it
	// resumes from its last checkpoint.
	Interrupted State = "interrupted"
	// Diverged: the run stopped on a non-finite loss or parameters (a result, not resubmitted).
	Diverged State = "diverged"
	// Missing: the run has not started.
	Missing State = "missing"
	// Refused: the directory holds a finished run that fails the check every reader of runs applies
	// (results.CheckOptions: another spec's run under the same name, or rows that do not match the
	// status or the spec's rounds). It is not done, and not resubmitted either: the task would refuse
	// it again (`fedbayes run --resume` does); Detail says why, and removing it makes it missing.
	Refused State = "refused"
)

// States lists every state in report order.
var States = []State{Done, Running, Queued, Failed, Interrupted, Diverged, Missing, Refused}

// Resubmit says whether a run in state s is submitted again.
func (s State) Resubmit() bool { return s == Missing || s == Failed || s == Interrupted }

// RunStatus is one run's state.
type RunStatus struct {
	// Run is the run (its index is its array task).
	Run engine.RunRef
	// State is where it stands; Detail says more (the error, the divergence, the owner).
	State  State
	Detail string
}

// Report is the state of every run of a sweep in a results directory.
type Report struct {
	// Dir is the results directory; Sweep the spec's name.
	Dir, Sweep string
	// Runs are the spec's runs in order.
	Runs []RunStatus
}

// Count returns how many runs are in state s.
func (r *Report) Count(s State) int {
	n := 0
	for _, rs := range r.Runs {
		if rs.State == s {
			n++
		}
	}
	return n
}

// ToSubmit lists the runs to submit again: missing, failed and interrupted.
func (r *Report) ToSubmit() []int {
	var out []int
	for _, rs := range r.Runs {
		if rs.State.Resubmit() {
			out = append(out, rs.Run.Index)
		}
	}
	return out
}

// Refusals lists each Refused run's detail (the run folder, why it is not trusted, and to remove
// it), one line each, in run order: a reader cannot resubmit them, so it says so.
func (r *Report) Refusals() []string {
	var out []string
	for _, rs := range r.Runs {
		if rs.State == Refused {
			out = append(out, rs.Detail)
		}
	}
	return out
}

// Summary is one line of counts, e.g. "4 runs: 2 done, 1 running, 0 queued, ...".
func (r *Report) Summary() string {
	parts := make([]string, len(States))
	for i, s := range States {
		parts[i] = fmt.Sprintf("%d %s", r.Count(s), s)
	}
	return fmt.Sprintf("%d runs: %s", len(r.Runs), strings.Join(parts, ", "))
}

// Check reads the state of each run of spec (engine.RunList) in dir. A finished run counts as done
// or diverged only when it passes the check `fedbayes run --resume` applies (results.CheckOptions
// with the spec, engine.SpecCheck, and its rounds, engine.ExpectedRounds); otherwise it is Refused,
// with the reason. queued maps array tasks Slurm still holds to their Slurm state (nil: none).
func Check(dir string, spec *engine.Spec, queued map[int]string) (*Report, error) {
	refs, chk, err := engine.RunChecks(spec)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("cluster: results directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("cluster: %s is not a directory", dir)
	}
	rep := &Report{Dir: dir, Sweep: spec.WithDefaults().Name}
	for _, ref := range refs {
		rs := RunStatus{Run: ref}
		rs.State, rs.Detail = runState(filepath.Join(dir, ref.Name), chk)
		if q, ok := queued[ref.Index]; ok && (rs.State == Missing || rs.State == Interrupted || rs.State == Failed) {
			// Slurm holds a task for it that has not claimed the run yet.
			rs.State, rs.Detail = Queued, "Slurm task "+strings.ToLower(q)
		}
		rep.Runs = append(rep.Runs, rs)
	}
	return rep, nil
}

// runState reads one run directory; chk judges a finished run.
func runState(rd string, chk results.CheckOptions) (State, string) {
	claim, err := results.ReadClaimState(rd)
	if err != nil {
		return Failed, err.Error()
	}
	if claim.Live {
		return Running, "by " + claim.Owner.String()
	}
	if _, err := os.Stat(filepath.Join(rd, results.MetaFile)); errors.Is(err, os.ErrNotExist) {
		return Missing, ""
	}
	run, err := results.ReadRun(rd)
	if err != nil {
		return Failed, err.Error()
	}
	if st := run.Status.State; st == results.Completed || st == results.Diverged {
		if err := chk.CheckRun(run); err != nil {
			return Refused, err.Error() + "; remove it to run it again"
		}
	}
	switch run.Status.State {
	case results.Completed:
		return Done, run.Status.String()
	case results.Diverged:
		return Diverged, run.Status.String()
	case results.Failed:
		return Failed, run.Status.String()
	}
	detail := fmt.Sprintf("%d rows", len(run.Rows))
	if n := len(run.Rows); n > 0 {
		detail = fmt.Sprintf("stopped after round %d", run.Rows[n-1].Round)
	}
	if claim.Held {
		detail += "; its claim is stale (" + claim.Stale + ")"
	}
	return Interrupted, detail
}

// Status reads each sweep submitted into dir (its spec in DIR/.slurm/spec-NAME.json) and asks
// Slurm which of its tasks are still queued.
func Status(ctx context.Context, dir string) ([]*Report, error) {
	specs, err := ReadSubmittedSpecs(dir)
	if err != nil {
		return nil, err
	}
	var reps []*Report
	for _, spec := range specs {
		name := spec.WithDefaults().Name
		jobs, err := readJobs(dir, name)
		if err != nil {
			return nil, err
		}
		queued, err := queuedTasks(ctx, jobs)
		if err != nil {
			return nil, err
		}
		rep, err := Check(dir, spec, queued)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}
