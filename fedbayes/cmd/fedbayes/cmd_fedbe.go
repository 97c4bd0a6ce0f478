package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"fedbayes.dev/fedbayes/predictive"
)

func init() {
	register(&command{name: "fedbe", summary: "multi-round FedBE against FedAvg on the same clients (Chen & Chao, Alg. 1)", run: runFedBE})
}

// runFedBE runs a multi-round spec (a JSON file or a preset) and prints the last round's table.
func runFedBE(args []string, stdout io.Writer) error {
	fs := newFlagSet("fedbe", "[SPEC.json]", stdout)
	sf := newSetupFlags(fs, predictive.RoundsPresetNames(), predictive.RoundsMethods,
		"results/fedbe", "results directory (one run per method and seed; complete runs are kept on a rerun)")
	rounds := fs.Int("rounds", 0, "communication rounds, replacing the spec's (0: the spec's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	spec, err := presetOrFile(*sf.preset, fs.Args(), predictive.RoundsPreset, predictive.LoadRoundsSpec, predictive.RoundsPresetNames())
	if err != nil {
		return err
	}
	if err := sf.apply(&spec.Setup); err != nil {
		return err
	}
	if *rounds != 0 {
		spec.Rounds = *rounds
	}
	out, printSpec := sf.out, sf.print
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
