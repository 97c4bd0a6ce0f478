package main

import (
	"fmt"
	"io"

	"fedbayes.dev/fedbayes/presets"
)

func init() {
	register(&command{name: "fedbe", summary: "multi-round FedBE against FedAvg on the same clients (Chen & Chao, Alg. 1): fedbayes run PRESET with flags for rounds, seeds and methods, and the last round's table", run: runFedBE})
}

// runFedBE is `fedbayes fedbe PRESET|SPEC.json`: flag sugar over `fedbayes run` for Chen & Chao's
// multi-round presets (presets.ChenPresetNames; any engine spec file works too). -rounds, -seeds and
// -methods set fields of the engine spec (training.rounds, seeds, the variants kept), which then runs
// as `fedbayes run SPEC -o DIR --resume -no-figures` runs it, keeping finished runs and resuming
// interrupted ones; it prints the last round's table.
func runFedBE(args []string, stdout io.Writer) error {
	fs := newFlagSet("fedbe", "PRESET|SPEC.json", stdout)
	af := newAliasFlags(fs, presets.ChenPresetNames(), "results/fedbe",
		"results directory (one run per method and seed; finished runs are kept, interrupted ones resume)")
	rounds := fs.Int("rounds", 0, "communication rounds, replacing the spec's training.rounds (0: the spec's)")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	spec, arg, err := af.spec(fs.Args(), presets.ChenPresetNames())
	if err != nil {
		return err
	}
	if *rounds != 0 {
		spec.Training.Rounds = *rounds
	}
	sum, err := af.run(spec, arg, stdout, true)
	if err != nil || sum == nil {
		return err
	}
	tab, err := summaryTable(sum, []string{"variant"}, nil, "accuracy,nll,ece")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "after round %d, mean ± SE over seeds:\n%sruns in %s (one row per round); reprint with: fedbayes table -rows variant %s\n",
		spec.WithDefaults().Training.Rounds, tab.Markdown(), *af.out, *af.out)
	return err
}
