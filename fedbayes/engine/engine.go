// Package engine runs federated learning experiments: a Spec (JSON or Go) names the data, partition,
// model, aggregation, local training, evaluation and seeds, with optional sweeps; Run executes every
// setting and seed round by round (Ozer et al. (2022), Alg. 1; Fischer et al. (2024), Alg. 1) and
// records each run through package results (spec, provenance, one row per evaluated round, a
// checkpoint per round, resume), plus a figures.json of learning curves for `fedbayes figures`.
//
// The clients active in a round train together in one compiled computation (models with a client axis
// K), each with its own number of steps per epoch; Spec.Training.Mode "sequential" trains one client at
// a time instead, the reference that gives the same global model. See docs/engine.md.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// Options configure Run.
type Options struct {
	// Dir is the results directory; each run gets the sub-directory results.RunName(setting, seed).
	// Required.
	Dir string
	// Resume continues interrupted runs from their last checkpoint and skips finished ones; without
	// it, a run directory that already holds a run is an error (reported before any run starts).
	Resume bool
	// Progress reports each run's rounds; nil means progress.New() (terminal, or HTML in a notebook).
	// Use progress.Discard for silence.
	Progress progress.Reporter
	// NoFigures skips writing figures.json.
	NoFigures bool
}

// Summary is the outcome of Run.
type Summary struct {
	// Dir is the results directory.
	Dir string
	// Runs lists every run in order (settings, then seeds).
	Runs []RunSummary
	// Figures is the path of the figures.json written ("" if none).
	Figures string
	// Budget is what the settings ran (Budget.String, computed from the spec run, never the spec's
	// stated label), or a note that the settings' budgets differ.
	Budget string
}

// Diverged counts the runs that diverged.
func (s *Summary) Diverged() int {
	n := 0
	for _, r := range s.Runs {
		if r.State == results.Diverged {
			n++
		}
	}
	return n
}

// Run runs every setting of spec (its sweep) with every seed, in order, writing each run to
// Options.Dir. The spec is fully validated first: an invalid field is a *SpecError and nothing runs.
// A run that diverges (non-finite loss or parameters) is recorded as diverged with the round and
// reason, and the next run starts; any other error is recorded as a failed run and returned. A
// cancelled ctx stops between training steps and leaves the run resumable.
func Run(ctx context.Context, spec *Spec, opts Options) (*Summary, error) {
	if spec == nil {
		return nil, fmt.Errorf("engine: nil spec")
	}
	if opts.Dir == "" {
		return nil, fmt.Errorf("engine: Options.Dir (the results directory) is required")
	}
	settings, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	if opts.Progress == nil {
		opts.Progress = progress.New()
	}
	// The budget recorded and printed is what each setting runs, not the spec's stated label.
	cache := &datasetCache{}
	budgets := map[string]bool{}
	var budget Budget
	for i := range settings {
		budget = describeBudget(settings[i].Spec, cache)
		settings[i].Spec.Budget = budget.String()
		budgets[settings[i].Spec.Budget] = true
	}
	type job struct {
		st   Setting
		seed int64
		dir  string
	}
	var jobs []job
	for _, st := range settings {
		for _, seed := range st.Spec.Seeds {
			jobs = append(jobs, job{st, seed, filepath.Join(opts.Dir, results.RunName(st.Name, seed))})
		}
	}
	if !opts.Resume {
		for _, j := range jobs {
			if _, err := os.Stat(filepath.Join(j.dir, results.MetaFile)); err == nil {
				return nil, fmt.Errorf("engine: %s already holds a run; resume it (--resume / Options.Resume) or choose another results directory", j.dir)
			}
		}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	info := runinfo.Collect(backendConfig())
	sum := &Summary{Dir: opts.Dir, Budget: budget.String()}
	title := spec.WithDefaults().Name + " (" + budget.Short() + ")"
	if len(budgets) > 1 {
		sum.Budget = "one budget per setting (see each run.json)"
		title = spec.WithDefaults().Name
	}
	var runErr error
	for _, j := range jobs {
		rs, err := runOne(ctx, j.st, j.seed, j.dir, opts, cache, info)
		sum.Runs = append(sum.Runs, rs)
		if err != nil {
			runErr = fmt.Errorf("engine: run %s: %w", filepath.Base(j.dir), err)
			break
		}
	}
	if !opts.NoFigures {
		path, err := writeFigures(opts.Dir, title)
		if err != nil {
			runErr = errors.Join(runErr, err)
		}
		sum.Figures = path
	}
	return sum, runErr
}
