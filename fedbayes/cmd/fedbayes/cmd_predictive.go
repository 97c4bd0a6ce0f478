package main

import (
	"context"
	"encoding/json"
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

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
	"fedbayes.dev/fedbayes/strategy"
)

func init() {
	register(&command{name: "predictive", summary: "Hasan (2023)'s one-round comparison: fedbayes run PRESET with flags for heterogeneity, seeds and methods, and the thesis's table", run: runPredictive})
}

// runPredictive is `fedbayes predictive PRESET|SPEC.json`: flag sugar over `fedbayes run` for Hasan
// (2023)'s one-round presets (presets.HasanPresetNames; any engine spec file works too). -het, -seeds
// and -methods set fields of the engine spec (the partition.h sweep, seeds, the variants kept), which
// then runs as `fedbayes run SPEC -o DIR --resume` runs it, keeping complete runs on a rerun; the
// thesis's table (rows: the variants, columns: h) and the fitted betas follow.
func runPredictive(args []string, stdout io.Writer) error {
	fs := newFlagSet("predictive", "PRESET|SPEC.json", stdout)
	af := newAliasFlags(fs, presets.HasanPresetNames(), "results/predictive",
		"results directory (one run per method, h and seed; complete runs are kept on a rerun)")
	hs := fs.String("het", "", "comma-separated heterogeneity values h, replacing the spec's (its partition.h sweep)")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	spec, arg, err := af.spec(fs.Args(), presets.HasanPresetNames())
	if err != nil {
		return err
	}
	if *hs != "" {
		var values []json.RawMessage
		for _, s := range splitList(*hs) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("%w: -het: %q is not a number", errUsage, s)
			}
			values = append(values, json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64)))
		}
		if spec.Sweep == nil {
			spec.Sweep = map[string][]json.RawMessage{}
		}
		spec.Sweep["partition.h"] = values
	}
	sum, err := af.run(spec, arg, stdout, false)
	if err != nil || sum == nil {
		return err
	}
	return printPredictiveTable(stdout, data.RegressionSet(spec.Dataset.Name), *af.out, sum)
}

// aliasFlags are the flags of `fedbayes predictive` and `fedbayes fedbe`, flag sugar over `fedbayes
// run`: the preset (or a positional PRESET or SPEC.json), the results directory, and the seeds and
// methods that replace the spec's; -print prints the spec as `fedbayes run -print` does.
type aliasFlags struct {
	name                        string
	preset, out, seeds, methods *string
	print                       *bool
}

// newAliasFlags defines the shared flags of command name on fs; presets are listed in the help.
func newAliasFlags(fs *flag.FlagSet, presets []string, out, outHelp string) aliasFlags {
	return aliasFlags{
		name:   fs.Name(),
		preset: fs.String("preset", "", "the preset to run (or give it, or a spec file, as the argument): "+strings.Join(presets, ", ")),
		out:    fs.String("o", out, outHelp),
		seeds:  fs.String("seeds", "", "comma-separated seeds, replacing the spec's"),
		methods: fs.String("methods", "", "comma-separated methods to keep of the spec's variants, by their strategy's name "+
			"(fedavg, bcm, oneshotfl, fedbe-gaussian, ...; the former names oneshot and fedbe are read as oneshotfl and fedbe-gaussian)"),
		print: fs.Bool("print", false, "print the spec (defaults applied, sweep expanded) as JSON and exit, as fedbayes run -print does"),
	}
}

// spec returns the engine spec that the flags and the positional arguments name (a preset, or a spec
// file), with -seeds and -methods applied, and the argument that names it for `fedbayes run`. names
// are the presets the command is for, listed when none is given.
func (f aliasFlags) spec(args []string, names []string) (*engine.Spec, string, error) {
	if err := needDir("o", *f.out); err != nil {
		return nil, "", err
	}
	arg := *f.preset
	switch {
	case *f.preset != "" && len(args) > 0:
		return nil, "", fmt.Errorf("%w: give a spec file or preset, or -preset NAME, not both", errUsage)
	case len(args) == 1:
		arg = args[0]
	case len(args) > 1 || arg == "":
		return nil, "", fmt.Errorf("%w: give one preset or spec file, as fedbayes run takes it (presets: %s)", errUsage, strings.Join(names, ", "))
	}
	spec, err := readSpecArg(arg)
	if err != nil {
		return nil, "", formerSpec(arg, err)
	}
	if *f.seeds != "" {
		if spec.Seeds, err = parseSeeds(*f.seeds); err != nil {
			return nil, "", err
		}
	}
	if *f.methods != "" {
		methods, err := engine.ParseMethods(*f.methods)
		if err != nil {
			return nil, "", fmt.Errorf("%w: -methods: %v", errUsage, err)
		}
		if err := engine.SelectMethods(spec, methods); err != nil {
			return nil, "", fmt.Errorf("%w: -methods: %v", errUsage, err)
		}
	}
	return spec, arg, nil
}

// formerSpec adds to the error of reading the spec file path the reason when it is a spec of the
// former predictive or FedBE runner (a JSON object with their top-level "methods", "h", "sampler" or
// "fedbe"), which the engine does not read: `fedbayes run -print PRESET` prints a preset as the engine
// spec to start from.
func formerSpec(path string, err error) error {
	b, rerr := os.ReadFile(path)
	var fields map[string]json.RawMessage
	if rerr != nil || json.Unmarshal(b, &fields) != nil {
		return err
	}
	for _, k := range []string{"methods", "h", "sampler", "fedbe"} {
		if _, ok := fields[k]; ok {
			return fmt.Errorf("%w; with its field %q it is a spec of the former predictive or FedBE runner, which the engine does not read: "+
				"write it as an engine spec (fedbayes run -print PRESET prints a preset as one)", err, k)
		}
	}
	return err
}

// run prints the spec's settings with -print, or runs them into -o as `fedbayes run ARG -o DIR
// --resume` does (the held runs checked against the spec first, the data checked before anything is
// written); noFigures skips figures.json. An interrupt or SIGTERM stops it resumable; the error then
// says to run the same command again. A nil Summary with a nil error means -print printed the spec.
func (f aliasFlags) run(spec *engine.Spec, arg string, stdout io.Writer, noFigures bool) (*engine.Summary, error) {
	settings, err := spec.Expand()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if *f.print {
		var specs []*engine.Spec
		for _, s := range settings {
			specs = append(specs, s.Spec)
		}
		return nil, writeJSON(stdout, specs)
	}
	if err := checkData(settings); err != nil {
		return nil, err
	}
	if _, err := alreadyRun(spec, *f.out, arg, true); err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := engine.Run(ctx, spec, engine.Options{Dir: *f.out, Resume: true, Progress: plannedProgress(spec, *f.out, nil), NoFigures: noFigures})
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("interrupted; run the same command again to continue")
	}
	return sum, err
}

// summaryTable tabulates the runs of one engine.Run (sum.Runs, read from their directories, so that
// other runs in the results folder stay out) with rows and cols as report.TableSpec and metrics as
// report.ParseColumns reads them.
func summaryTable(sum *engine.Summary, rows, cols []string, metrics string) (*report.Table, error) {
	var runs []results.Run
	for _, r := range sum.Runs {
		run, err := results.ReadRun(r.Dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	columns, err := report.ParseColumns(metrics)
	if err != nil {
		return nil, err
	}
	return report.NewTable(runs, report.TableSpec{Rows: rows, Cols: cols, Metrics: columns})
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

// printPredictiveTable prints the runs of sum as the thesis's table (rows: the variants, columns: h;
// mse and nll for regression, else accuracy, nll and ece) and the fitted betas of the beta-PredBayes
// runs.
func printPredictiveTable(w io.Writer, regression bool, dir string, sum *engine.Summary) error {
	metrics := "accuracy,nll,ece"
	if regression {
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
		if b, ok := r.Metrics[strategy.MetricBeta]; ok && engine.Method(r.Labels["variant"]) == strategy.BetaPredBayes {
			betas[r.Labels["h"]] = append(betas[r.Labels["h"]], b)
		}
	}
	hs := make([]string, 0, len(betas))
	for h := range betas {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		s, err := stats.Summarize(betas[h])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "fitted beta at h=%s: %.3f ± %.3f over %d seeds\n", h, s.Mean, s.SE, s.N)
	}
	fmt.Fprintf(w, "runs in %s; reprint with: fedbayes table -rows variant -cols h -metrics %s %s\n", dir, metrics, dir)
	return nil
}
