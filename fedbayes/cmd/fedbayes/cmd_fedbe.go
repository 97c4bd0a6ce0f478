package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"fedbayes.dev/fedbayes/predictive"
)

func init() {
	register(&command{name: "fedbe", summary: "multi-round FedBE against FedAvg on the same clients (Chen & Chao, Alg. 1)", run: runFedBE})
}

// runFedBE runs a multi-round spec (a JSON file or a preset) and prints the last round's table.
func runFedBE(args []string, stdout io.Writer) error {
	fs := newFlagSet("fedbe", "[SPEC.json]", stdout)
	preset := fs.String("preset", "", "run a named preset instead of a spec file: "+strings.Join(predictive.RoundsPresetNames(), ", "))
	out := fs.String("o", "results/fedbe", "results directory (one run per method and seed; complete runs are kept on a rerun)")
	seeds := fs.String("seeds", "", "comma-separated seeds, replacing the spec's")
	rounds := fs.Int("rounds", 0, "communication rounds, replacing the spec's (0: the spec's)")
	methods := fs.String("methods", "", "comma-separated methods, replacing the spec's: "+strings.Join(predictive.RoundsMethods, ", "))
	printSpec := fs.Bool("print", false, "print the spec with its defaults as JSON and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec, err := presetOrFile(*preset, fs.Args(), predictive.RoundsPreset, predictive.LoadRoundsSpec, predictive.RoundsPresetNames())
	if err != nil {
		return err
	}
	if *seeds != "" {
		if spec.Seeds, err = parseSeeds(*seeds); err != nil {
			return err
		}
	}
	if *rounds != 0 {
		spec.Rounds = *rounds
	}
	if *methods != "" {
		spec.Methods = splitList(*methods)
	}
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *printSpec {
		return writeJSON(stdout, spec)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := predictive.RunRounds(ctx, spec, *out, predictiveLog); err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted; completed runs are kept: run the same command again to continue")
		}
		return err
	}
	tab, err := specTable(*out, spec.Name+"-", spec.Dataset, "accuracy,nll,ece", nil)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "after round %d, mean ± SE over seeds:\n%sruns in %s (one row per round); reprint with: fedbayes table -rows method %s\n", spec.Rounds, tab.Markdown(), *out, *out)
	return err
}
