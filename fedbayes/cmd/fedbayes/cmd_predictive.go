package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

func init() {
	register(&command{name: "predictive", summary: "Hasan (2023)'s one-round comparison from a predictive spec or preset, run by the engine (an alias of fedbayes run)", run: runPredictive})
}

// runPredictive runs a one-round predictive-space spec (a JSON file in the format of predictive.Spec,
// or a preset) and prints the thesis's table. It is a thin alias of `fedbayes run`: the spec becomes
// an engine spec (engine.FromPredictive: one variant per method, a sweep over h) and engine.Run runs
// it, resuming, so complete runs are kept on a rerun. It stays for its flags (-h, -methods, -seeds on
// the thesis's terms) and its table; `fedbayes run NAME` runs the same presets.
func runPredictive(args []string, stdout io.Writer) error {
	fs := newFlagSet("predictive", "[SPEC.json]", stdout)
	sf := newSetupFlags(fs, predictive.PresetNames(), predictive.ClassificationMethods,
		"results/predictive", "results directory (one run per method, h and seed; complete runs are kept on a rerun)")
	hs := fs.String("h", "", "comma-separated heterogeneity values, replacing the spec's")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	spec, err := presetOrFile(*sf.preset, fs.Args(), predictive.Preset, predictive.LoadSpec, predictive.PresetNames())
	if err != nil {
		return err
	}
	if err := sf.apply(&spec.Setup); err != nil {
		return err
	}
	if *hs != "" {
		spec.H = nil
		for _, s := range splitList(*hs) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("%w: -h: %q is not a number", errUsage, s)
			}
			spec.H = append(spec.H, v)
		}
	}
	// FromPredictive validates the spec (an invalid field is a usage error); the table reads its
	// methods and h values with their defaults.
	spec = spec.WithDefaults()
	es, err := engine.FromPredictive(spec)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *sf.print {
		return writeJSON(stdout, es)
	}
	sum, err := runAlias(es, engine.Options{Dir: *sf.out, Resume: true, Progress: runProgress()})
	if err != nil {
		return err
	}
	return printPredictiveTable(stdout, spec, *sf.out, sum)
}

// runAlias runs spec with opts as the alias commands (fedbayes predictive, fedbayes fedbe) do:
// stopped, resumable, by an interrupt or a SIGTERM, which it reports as a rerun of the same command.
func runAlias(spec *engine.Spec, opts engine.Options) (*engine.Summary, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := engine.Run(ctx, spec, opts)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("interrupted; run the same command again to continue")
	}
	return sum, err
}

// presetOrFile returns the spec named by a -preset flag or read from the one positional argument,
// whichever was given (a usage error if both or neither were).
func presetOrFile[T any](preset string, args []string, fromPreset, fromFile func(string) (T, error), names []string) (T, error) {
	var zero T
	switch {
	case preset != "" && len(args) > 0:
		return zero, fmt.Errorf("%w: give a spec file or -preset, not both", errUsage)
	case preset != "":
		s, err := fromPreset(preset)
		if err != nil {
			return zero, fmt.Errorf("%w: %v", errUsage, err)
		}
		return s, nil
	case len(args) == 1:
		return fromFile(args[0])
	}
	return zero, fmt.Errorf("%w: give one spec file or -preset NAME (presets: %s)", errUsage, strings.Join(names, ", "))
}

// summaryTable tabulates the runs of one engine.Run (sum.Runs, read from their directories, so that
// other runs in the results folder, such as the former runners' NAME-hH-METHOD runs, stay out) with
// rows and cols as results.TableSpec and metrics as results.ParseColumns reads them.
func summaryTable(sum *engine.Summary, rows, cols []string, metrics string) (*results.Table, error) {
	var runs []results.Run
	for _, r := range sum.Runs {
		run, err := results.ReadRun(r.Dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	columns, err := results.ParseColumns(metrics)
	if err != nil {
		return nil, err
	}
	return results.NewTable(runs, results.TableSpec{Rows: rows, Cols: cols, Metrics: columns})
}

// parseSeeds reads a -seeds flag: comma-separated integers.
func parseSeeds(list string) ([]int64, error) {
	var out []int64
	for _, s := range splitList(list) {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: -seeds: %q is not an integer", errUsage, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// printPredictiveTable prints the spec's runs as the thesis's table (rows: methods, the engine's
// variants; columns: h) and the fitted betas of this invocation's runs.
func printPredictiveTable(w io.Writer, spec predictive.Spec, dir string, sum *engine.Summary) error {
	metrics := "accuracy,nll,ece"
	if spec.IsRegression() {
		metrics = "mse,nll"
	}
	tab, err := summaryTable(sum, []string{"variant"}, []string{"h"}, metrics)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, tab.Markdown()); err != nil {
		return err
	}
	betas := map[string][]float64{}
	for _, r := range sum.Runs {
		if b, ok := r.Metrics[strategy.MetricBeta]; ok && r.Labels["variant"] == predictive.MethodBeta {
			betas[r.Labels["h"]] = append(betas[r.Labels["h"]], b)
		}
	}
	hs := make([]string, 0, len(betas))
	for h := range betas {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		s, err := results.Summarize(betas[h])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "fitted beta at h=%s: %.3f ± %.3f over %d seeds\n", h, s.Mean, s.SE, s.N)
	}
	fmt.Fprintf(w, "runs in %s; reprint with: fedbayes table -rows variant -cols h -metrics %s %s\n", dir, metrics, dir)
	return nil
}

// setupFlags are the flags of `fedbayes predictive` and `fedbayes fedbe` that set a predictive.Setup:
// the preset, the results directory, the seeds, the methods, and -print.
type setupFlags struct {
	preset, out, seeds, methods *string
	print                       *bool
}

// newSetupFlags defines the shared flags on fs; presets and methods are listed in their help.
func newSetupFlags(fs *flag.FlagSet, presets, methods []string, out, outHelp string) setupFlags {
	return setupFlags{
		preset:  fs.String("preset", "", "run a named preset instead of a spec file: "+strings.Join(presets, ", ")),
		out:     fs.String("o", out, outHelp),
		seeds:   fs.String("seeds", "", "comma-separated seeds, replacing the spec's"),
		methods: fs.String("methods", "", "comma-separated methods, replacing the spec's: "+strings.Join(methods, ", ")),
		print:   fs.Bool("print", false, "print the spec with its defaults as JSON and exit"),
	}
}

// apply replaces the spec's seeds and methods by the flags' where given; an empty -o is an error.
func (f setupFlags) apply(s *predictive.Setup) error {
	if err := needDir("o", *f.out); err != nil {
		return err
	}
	if *f.seeds != "" {
		seeds, err := parseSeeds(*f.seeds)
		if err != nil {
			return err
		}
		s.Seeds = seeds
	}
	if *f.methods != "" {
		s.Methods = splitList(*f.methods)
	}
	return nil
}
