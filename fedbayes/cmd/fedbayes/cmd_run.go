package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
)

func init() {
	register(&command{name: "run", summary: "run federated experiments from a spec (JSON file or preset), with resume", run: runRun})
}

// runProgress is the progress reporter of `fedbayes run` and the commands that run the engine: on
// notes (standard error), redrawn in place on a terminal (a variable so tests can silence it).
var runProgress = func() progress.Reporter {
	if notes == io.Writer(os.Stderr) {
		return progress.New()
	}
	return progress.NewTerminal(notes, false)
}

// runRun implements `fedbayes run SPEC.json|PRESET [-o DIR] [--resume] [--fast]`.
func runRun(args []string, stdout io.Writer) error {
	fs := newFlagSet("run", "SPEC.json|PRESET", stdout)
	out := fs.String("o", "results", "results directory (one sub-directory per setting and seed)")
	resume := fs.Bool("resume", false, "continue interrupted runs from their last checkpoint; finished runs are kept")
	fast := fs.Bool("fast", false, "a quick look: at most 3 rounds of 1 epoch, 3,000 training and 1,000 test examples, the first seed")
	list := fs.Bool("list", false, "list the presets to start with and each paper's number of presets, and exit")
	listAll := fs.Bool("all", false, "with -list: list every preset, grouped by paper")
	show := fs.Bool("print", false, "print the spec (defaults applied, sweep expanded) as JSON and exit without running")
	noFigures := fs.Bool("no-figures", false, "do not write figures.json")
	// -task-index is how a Slurm array task (fedbayes submit) runs the N-th run of the spec.
	taskIndex := fs.Int("task-index", -1, "run only the run with this index (settings, then seeds, from 0), as a Slurm array task does")
	jobs := fs.Int("jobs", 1, "run the sweep's runs in this many worker processes, each with a share of the cores (same numbers as one process)")
	worker := fs.String("worker", "", "run only the runs k, k+N, k+2N, ... of the spec (k/N; how -jobs starts its workers)")
	// Flags may follow the spec argument.
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	positional := fs.Args()
	if *list {
		return listPresets(stdout, data.Dir(), *listAll)
	}
	if *listAll {
		return fmt.Errorf("%w: -all goes with -list (fedbayes run -list -all lists every preset)", errUsage)
	}
	if err := needDir("o", *out); err != nil {
		return err
	}
	if len(positional) != 1 {
		return fmt.Errorf("%w: give one spec file (.json) or preset name (fedbayes run -list); got %d arguments", errUsage, len(positional))
	}
	spec, err := loadSpec(positional[0], *fast)
	if err != nil {
		return err
	}
	settings, err := spec.Expand()
	if err != nil {
		return err
	}
	if *show {
		var specs []*engine.Spec
		for _, s := range settings {
			specs = append(specs, s.Spec)
		}
		return writeJSON(stdout, specs)
	}
	// Refuse before anything is written: a run folder for data that is not there would only hold a
	// stub run.
	if err := checkData(settings); err != nil {
		return err
	}
	// SIGTERM too: Slurm sends it to a cancelled or timed-out task, which then stops resumable and
	// releases its claim.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := engine.Options{Dir: *out, Resume: *resume, NoFigures: *noFigures}
	if *taskIndex >= 0 {
		opts.Runs = []int{*taskIndex}
	}
	if *worker != "" {
		k, n, err := parseWorker(*worker)
		if err != nil {
			return err
		}
		if opts.Runs, err = engine.WorkerShare(spec, k, n); err != nil || len(opts.Runs) == 0 {
			return err
		}
	}
	if *jobs < 1 {
		return fmt.Errorf("%w: -jobs %d: want at least 1", errUsage, *jobs)
	}
	again := false // every run is in -o already, finished
	if opts.Runs == nil {
		// Running the same command again: finished runs are shown, not refused; a held run of another
		// spec is refused here, before anything is printed or written.
		if again, err = alreadyRun(spec, *out, positional[0], *resume); err != nil {
			return err
		}
		opts.Resume = opts.Resume || again
	}
	if *jobs > 1 && *taskIndex < 0 && *worker == "" && !again {
		// What only the data shows to be wrong is refused before the workers' logs are written.
		if err := engine.CheckData(spec, *out); err != nil {
			return err
		}
		childArgs := []string{positional[0]}
		if *fast {
			childArgs = append(childArgs, "-fast")
		}
		if err := runJobs(ctx, spec, *out, opts.Resume, *jobs, childArgs); err != nil {
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("interrupted; continue with: fedbayes run %s -o %s --resume -jobs %d", positional[0], *out, *jobs)
			}
			return err
		}
		// Every run is finished now (or one failed and runs again here): this pass writes the summary
		// and the figures.
		opts.Resume = true
	}
	opts.Progress = plannedProgress(spec, *out, opts.Runs)
	sum, err := engine.Run(ctx, spec, opts)
	if sum != nil {
		printRunSummary(stdout, sum)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted; continue with: fedbayes run %s -o %s --resume", positional[0], *out)
	}
	return err
}

// alreadyRun says what a results directory holds of spec's runs. First it checks every run of spec
// that dir holds and can be read as every reader does (results.CheckOptions with
// engine.ExpectedRounds and engine.SpecCheck): a run of another experiment under the same name (the
// spec changed since it ran, or a former runner wrote it), or one whose rows do not match its
// status, is an error naming its folder and what differs, whatever resume says. Then, with resume, it returns false. Without it:
// when dir holds none of the runs, it returns false; when it holds every one and all of them
// finished (completed or diverged), it says so on notes (where, and how to see them) and returns
// true, so that they are kept and shown as with --resume; when it holds some runs and not all
// finished, the error says how to continue them.
func alreadyRun(spec *engine.Spec, dir, arg string, resume bool) (bool, error) {
	refs, check, err := engine.RunChecks(spec)
	if err != nil {
		return false, err
	}
	held, finished := 0, 0
	for _, ref := range refs {
		runDir := filepath.Join(dir, ref.Name)
		if !results.HasRun(runDir) {
			continue
		}
		held++
		run, err := results.ReadRun(runDir)
		if err != nil {
			continue // not finished: --resume repairs it, or says why it cannot
		}
		if err := check.CheckRun(run); err != nil {
			return false, fmt.Errorf("%v; remove it to run it again, or choose another results directory with -o", err)
		}
		if run.Status.State == results.Completed || run.Status.State == results.Diverged {
			finished++
		}
	}
	switch {
	case resume || held == 0:
		return false, nil
	case finished == len(refs):
		fmt.Fprintf(notes, "fedbayes run: %s already holds the %d finished run(s) of %s; they are kept and shown below (fedbayes table %s tabulates them; -o DIR runs them again elsewhere)\n",
			dir, finished, arg, dir)
		return true, nil
	}
	return false, fmt.Errorf("%s already holds %d of the %d runs of %s, %d of them finished: continue them with fedbayes run %s -o %s --resume, or choose another results directory with -o",
		dir, held, len(refs), arg, finished, arg, dir)
}

// loadSpec reads a spec file (a path, or a name ending in .json) or returns a preset; with fast, its
// quick look (presets.Fast, the -fast flag of run, submit and status).
func loadSpec(arg string, fast bool) (*engine.Spec, error) {
	s, err := readSpecArg(arg)
	if err != nil || !fast {
		return s, err
	}
	return presets.Fast(s), nil
}

// readSpecArg reads a spec file (a path, or a name ending in .json) or returns a preset.
func readSpecArg(arg string) (*engine.Spec, error) {
	if strings.HasSuffix(arg, ".json") || strings.ContainsRune(arg, os.PathSeparator) {
		return engine.ReadSpec(arg)
	}
	if _, err := os.Stat(arg); err == nil {
		return engine.ReadSpec(arg)
	}
	s, err := presets.Preset(arg)
	if err != nil {
		if near := closest(arg, presets.PresetNames()); near != "" {
			return nil, fmt.Errorf("%w: %q is neither a spec file nor a preset; did you mean %q? (fedbayes run -list)", errUsage, arg, near)
		}
		return nil, fmt.Errorf("%w: %q is neither a spec file nor a preset (fedbayes run -list lists the presets)", errUsage, arg)
	}
	return s, nil
}

// printRunSummary prints one line per run: setting, seed, state, last round and final metrics.
func printRunSummary(w io.Writer, sum *engine.Summary) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	regression := false
	for _, r := range sum.Runs {
		if _, ok := r.Metrics[results.MSE]; ok {
			regression = true
		}
	}
	first := results.Accuracy // the first metric column: mse for regression, else accuracy
	if regression {
		first = results.MSE
	}
	health := make([]report.Health, len(sum.Runs))
	names := make([]string, len(sum.Runs))
	for i, r := range sum.Runs {
		names[i] = results.RunName(r.Setting, r.Seed)
		if run, err := results.ReadRun(r.Dir); err == nil {
			health[i] = report.RunHealth(run)
		}
	}
	fmt.Fprintf(tw, "setting\tseed\tstate\tround\t%s\tnll\tece\tvariances\tnote\n", first)
	for i, r := range sum.Runs {
		state := string(r.State)
		if state == "" {
			state = "incomplete"
		}
		note := r.Reason
		if r.Busy != "" {
			state, note = "skipped", r.Busy
		} else if r.AlreadyDone {
			note = strings.TrimSpace("finished before " + note)
		} else if r.Resumed {
			note = strings.TrimSpace("resumed " + note)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Setting, r.Seed, state, r.Round,
			metricText(r.Metrics, first), metricText(r.Metrics, results.NLL), metricText(r.Metrics, results.ECE), health[i].Short(), note)
	}
	_ = tw.Flush()
	printHealth(w, names, health, false, "fedbayes status DIR SPEC -v lists every one")
	if sum.Budget != "" {
		fmt.Fprintf(w, "budget: %s\n", sum.Budget)
	}
	fmt.Fprintf(w, "results in %s", sum.Dir)
	if sum.Figures != "" {
		fmt.Fprintf(w, "; figures: fedbayes figures %s", sum.Dir)
	}
	fmt.Fprintln(w)
	for _, s := range sum.FiguresSkipped {
		fmt.Fprintf(w, "figures leave out %s\n", s)
	}
}

func metricText(m map[string]float64, name string) string {
	v, ok := m[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}
