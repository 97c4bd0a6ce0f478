// Package engine runs federated learning experiments: a Spec (JSON or Go) names the data, partition,
// model, aggregation, local training, evaluation and seeds, with optional sweeps; Run executes every
// setting and seed round by round (Ozer et al. (2022), Alg. 1; Fischer et al. (2024), Alg. 1) and
// records each run through package results (spec, provenance, one row per evaluated round, a
// checkpoint per round, resume), plus a figures.json of learning curves for `fedbayes figures`.
//
// The clients active in a round train together in one compiled computation (models with a client axis
// K), each with its own number of steps per epoch; Spec.Training.Mode "sequential" trains one client at
// a time instead, the reference that gives the same global model. See docs/engine.md.
//
// The engine holds the round loop, the spec and its validation. The named experiments (every paper's
// setting and its reduced and medium cuts) are specs in package presets, which imports engine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"fedbayes.dev/fedbayes/backend"

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
	// Runs, if not nil, selects runs by their index in RunList (settings, then seeds, from 0); the
	// others are left alone. A Slurm array task runs one (fedbayes run -task-index).
	Runs []int
	// AfterRound, when set, is called after each round of each run, once the round's row and
	// checkpoint are written: the last observer of the round loop (a notebook's own, a test's).
	AfterRound func(setting string, seed int64, round int)
}

// RunRef is one run of a spec: a setting with a seed, and its directory name.
type RunRef struct {
	// Index is the run's position in RunList.
	Index int
	// Setting is the setting's name, Seed the seed, Name the run directory's name
	// (results.RunName).
	Setting string
	Seed    int64
	Name    string
}

// RunList lists the runs of spec in the order Run runs them: each setting of the sweep with each
// of its seeds. The spec is validated.
func RunList(spec *Spec) ([]RunRef, error) {
	if spec == nil {
		return nil, fmt.Errorf("engine: nil spec")
	}
	settings, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	runs := runsOf(settings)
	refs := make([]RunRef, len(runs))
	for i, r := range runs {
		refs[i] = RunRef{Index: i, Setting: r.st.Name, Seed: r.seed, Name: r.name()}
	}
	return refs, nil
}

// RunChecks returns the runs of spec (RunList) and the check every reader applies to a finished run
// of it, as `fedbayes run --resume` does: the recorded spec (SpecCheck) and the rows against the
// spec's rounds (ExpectedRounds).
func RunChecks(spec *Spec) ([]RunRef, results.CheckOptions, error) {
	refs, err := RunList(spec)
	if err != nil {
		return nil, results.CheckOptions{}, err
	}
	same, err := SpecCheck(spec)
	if err != nil {
		return nil, results.CheckOptions{}, err
	}
	return refs, results.CheckOptions{Expect: ExpectedRounds, Spec: same}, nil
}

// SpecCheck returns the check of a run's recorded Meta against spec, for results.CheckOptions.Spec:
// the run must be one of spec's runs (its setting and one of its seeds) and record the same setting
// labels and spec as Run would now (results.Meta.Differs: provenance, the budget sentence and the
// sweep's seed list are not compared). The callback's error says what differs. The spec is
// validated once, here.
func SpecCheck(spec *Spec) (func(results.Meta) error, error) {
	if spec == nil {
		return nil, fmt.Errorf("engine: nil spec")
	}
	settings, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Setting, len(settings))
	for _, st := range settings {
		byName[st.Name] = st
	}
	name := spec.WithDefaults().Name
	return func(m results.Meta) error {
		st, ok := byName[m.Setting]
		if !ok {
			return fmt.Errorf("setting %q is not a setting of spec %q", m.Setting, name)
		}
		seeded := false
		for _, seed := range st.Spec.Seeds {
			seeded = seeded || seed == m.Seed
		}
		if !seeded {
			return fmt.Errorf("seed %d is not a seed of setting %q (seeds %v)", m.Seed, m.Setting, st.Spec.Seeds)
		}
		want, err := results.NewMeta(st.Name, st.Labels, m.Seed, st.Spec, m.Info)
		if err != nil {
			return err
		}
		if why := m.Differs(want); why != "" {
			return errors.New(why)
		}
		return nil
	}, nil
}

// evalOverflowError is an evaluation whose predictions are not finite although the global model's
// parameters are (a predictive variance exp(log sigma^2) beyond float32 at a high learning rate, issue
// 36): the run diverged rather than failed, and the round loop records it so (runState.diverge),
// leaving the sweep to go on.
type evalOverflowError struct {
	// what names the prediction and its first non-finite value, e.g. "predictive variance [0] on
	// the test set is +Inf".
	what string
}

func (e *evalOverflowError) Error() string { return "evaluation: " + e.what }

// checkPredictions returns an *evalOverflowError naming the first NaN or infinite value of each
// named prediction (name, values, name, values, ...), or nil. Nil slices are skipped.
func checkPredictions(set string, named ...any) error {
	for i := 0; i+1 < len(named); i += 2 {
		name, _ := named[i].(string)
		xs, _ := named[i+1].([]float32)
		for j, x := range xs {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				return &evalOverflowError{what: fmt.Sprintf("%s [%d] on %s is %v", name, j, set, x)}
			}
		}
	}
	return nil
}

// notesOut receives the notes Run prints while it works (a run taken over, a resume's repairs): the
// process's standard error (a variable so tests can read it).
var notesOut io.Writer = os.Stderr

// noteRepairs prints, one line each, what resuming the run in dir repaired (results.ResumePoint
// .Repairs): a damaged checkpoint skipped, a torn line cut, a restart from round 1 are never silent.
func noteRepairs(dir string, rp results.ResumePoint) {
	for _, r := range rp.Repairs() {
		fmt.Fprintf(notesOut, "fedbayes: resuming %s: %s\n", dir, r)
	}
}

// Summary is the outcome of Run.
type Summary struct {
	// Dir is the results directory.
	Dir string
	// Runs lists every run in order (settings, then seeds).
	Runs []RunSummary
	// Figures is the path of the figures.json written ("" if none).
	Figures string
	// FiguresSkipped lists the runs in Dir that the figures leave out, with the reason, other than
	// this call's runs that did not complete (Runs says what became of those).
	FiguresSkipped []results.Skipped
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
// Options.Dir. The spec is fully validated first: an invalid field is a *SpecError and nothing runs;
// so is a field that only the data shows to be wrong (a partition.sort_feature the dataset lacks, a
// partition that leaves a client without examples, a model.arch too large for the examples), which
// is refused before any run directory is written.
// A run that diverges (non-finite loss or parameters, a server step that fails on a non-finite model
// of its own (posterior.NonFiniteError), or non-finite predictions of finite parameters at
// evaluation, such as an overflowing predictive variance) is recorded as diverged with the round
// and reason, and the next run starts; any other error is recorded as a failed run and returned. A
// cancelled ctx stops between training steps and leaves the run resumable.
func Run(ctx context.Context, spec *Spec, opts Options) (*Summary, error) {
	return run(ctx, spec, opts, &localCache{})
}

// run is Run with the cache of first-round local outcomes its runs share (a test reads it).
func run(ctx context.Context, spec *Spec, opts Options, outcomes *localCache) (*Summary, error) {
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
	jobs, shared, err := planRuns(settings, opts, cache)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	info := runinfo.Collect(backendConfig())
	info.Kernels = backend.Kernels(info.Backend)
	if w := backend.SlowKernels(info.Backend); w != "" {
		fmt.Fprintln(notesOut, "fedbayes: "+w)
	}
	sum := &Summary{Dir: opts.Dir, Budget: budget.String()}
	title := spec.WithDefaults().Name + " (" + budget.Short() + ")"
	if len(budgets) > 1 {
		sum.Budget = "one budget per setting (see each run.json)"
		title = spec.WithDefaults().Name
	}
	call := &runCall{opts: opts, cache: cache, info: info, outcomes: outcomes, kept: map[string]results.Run{}}
	runErr := call.runAll(ctx, jobs, shared, sum)
	if !opts.NoFigures {
		runErr = errors.Join(runErr, call.figures(title, sum))
	}
	return sum, runErr
}

// planRuns returns the runs of settings that Run runs (Options.Runs selects them) and, for each,
// whether it may share its first round with another of them. Before any run directory is written
// it refuses a run whose directory already holds one (without Options.Resume) and what only the
// data can show to be wrong.
func planRuns(settings []Setting, opts Options, cache *datasetCache) ([]runRef, []bool, error) {
	jobs := runsOf(settings)
	if opts.Runs != nil {
		var sel []runRef
		for _, i := range opts.Runs {
			if i < 0 || i >= len(jobs) {
				return nil, nil, fmt.Errorf("engine: run index %d is out of range: the spec has %d runs (0 to %d)", i, len(jobs), len(jobs)-1)
			}
			sel = append(sel, jobs[i])
		}
		jobs = sel
	}
	if !opts.Resume {
		for _, j := range jobs {
			if dir := j.dir(opts.Dir); results.HasRun(dir) {
				return nil, nil, fmt.Errorf("engine: %s already holds a run; continue it with --resume (fedbayes run) or choose another results directory (-o)", dir)
			}
		}
	}
	// What only the data can show to be wrong is refused before any run directory is written; a run
	// that already has one (Resume) was checked when it started.
	if err := checkData(freshRuns(jobs, opts.Dir), cache); err != nil {
		return nil, nil, err
	}
	// Only the runs that may share a first round with another run of this call get the cache.
	shared, err := sharedFirstRounds(jobs)
	if err != nil {
		return nil, nil, fmt.Errorf("engine: %w", err)
	}
	return jobs, shared, nil
}

// runAll runs jobs in order into sum.Runs (shared[i]: job i shares the call's local outcomes). It
// stops at the first run that fails; a run another process is writing is skipped, and the runs
// skipped so are named in the error returned after the others ran.
func (c *runCall) runAll(ctx context.Context, jobs []runRef, shared []bool, sum *Summary) error {
	var runErr error
	var busy []string
	for i, j := range jobs {
		var oc *localCache
		if shared[i] {
			oc = c.outcomes
		}
		rs, err := c.runOne(ctx, j.st, j.seed, j.dir(c.opts.Dir), oc)
		sum.Runs = append(sum.Runs, rs)
		if rs.TookOver != "" {
			fmt.Fprintln(os.Stderr, "fedbayes: "+rs.TookOver)
		}
		if rs.Busy != "" {
			// Another process writes this run: skip it, say so, and go on with the others.
			fmt.Fprintf(os.Stderr, "fedbayes: skipping run %s: %s\n", j.name(), rs.Busy)
			busy = append(busy, j.name()+" ("+rs.Busy+")")
			continue
		}
		if err != nil {
			runErr = fmt.Errorf("engine: run %s: %w", j.name(), err)
			break
		}
	}
	if len(busy) > 0 {
		runErr = errors.Join(runErr, fmt.Errorf("engine: %d run(s) skipped because another process is writing them: %s",
			len(busy), strings.Join(busy, "; ")))
	}
	return runErr
}

// figures writes the results directory's figures.json (writeFigures, with the runs the call kept)
// into sum: its path and the runs it leaves out, other than this call's runs that did not complete.
func (c *runCall) figures(title string, sum *Summary) error {
	path, skipped, err := writeFigures(c.opts.Dir, title, c.kept)
	sum.Figures = path
	unfinished := map[string]bool{}
	for _, r := range sum.Runs {
		if r.State != results.Completed {
			unfinished[r.Dir] = true
		}
	}
	for _, s := range skipped {
		if !unfinished[s.Dir] {
			sum.FiguresSkipped = append(sum.FiguresSkipped, s)
		}
	}
	return err
}
