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
)

// States lists every state in report order.
var States = []State{Done, Running, Queued, Failed, Interrupted, Diverged, Missing}

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

// Summary is one line of counts, e.g. "4 runs: 2 done, 1 running, 0 queued, ...".
func (r *Report) Summary() string {
	parts := make([]string, len(States))
	for i, s := range States {
		parts[i] = fmt.Sprintf("%d %s", r.Count(s), s)
	}
	return fmt.Sprintf("%d runs: %s", len(r.Runs), strings.Join(parts, ", "))
}

// Check reads the state of each run of refs in dir. queued maps array tasks Slurm still holds to
// their Slurm state (nil: none).
func Check(dir string, refs []engine.RunRef, queued map[int]string) (*Report, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("cluster: results directory: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("cluster: %s is not a directory", dir)
	}
	rep := &Report{Dir: dir}
	for _, ref := range refs {
		rs := RunStatus{Run: ref}
		rs.State, rs.Detail = runState(filepath.Join(dir, ref.Name))
		if q, ok := queued[ref.Index]; ok && (rs.State == Missing || rs.State == Interrupted || rs.State == Failed) {
			// Slurm holds a task for it that has not claimed the run yet.
			rs.State, rs.Detail = Queued, "Slurm task "+strings.ToLower(q)
		}
		rep.Runs = append(rep.Runs, rs)
	}
	return rep, nil
}

// runState reads one run directory.
func runState(rd string) (State, string) {
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
		refs, err := engine.RunList(spec)
		if err != nil {
			return nil, err
		}
		name := spec.WithDefaults().Name
		jobs, err := readJobs(dir, name)
		if err != nil {
			return nil, err
		}
		queued, err := queuedTasks(ctx, jobs)
		if err != nil {
			return nil, err
		}
		rep, err := Check(dir, refs, queued)
		if err != nil {
			return nil, err
		}
		rep.Sweep = name
		reps = append(reps, rep)
	}
	return reps, nil
}
