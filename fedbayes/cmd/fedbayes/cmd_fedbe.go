package main

import (
	"fmt"
	"io"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/predictive"
)

func init() {
	register(&command{name: "fedbe", summary: "multi-round FedBE against FedAvg on the same clients (Chen & Chao, Alg. 1): an alias of `fedbayes run` for a rounds spec", run: runFedBE})
}

// chenRoundsPreset returns a multi-round FedBE preset as its rounds spec.
func chenRoundsPreset(name string) (predictive.RoundsSpec, error) {
	rs, ok := engine.ChenRounds(name)
	if !ok {
		return rs, fmt.Errorf("unknown rounds preset %q; presets: %s", name, strings.Join(engine.ChenPresetNames(), ", "))
	}
	return rs, nil
}

// runFedBE runs a multi-round spec (a rounds spec JSON file, or a preset) through the engine: the
// spec is translated by engine.FromRounds (one variant per method) and run as `fedbayes run` runs
// it, keeping finished runs and resuming interrupted ones; it prints the last round's table.
func runFedBE(args []string, stdout io.Writer) error {
	fs := newFlagSet("fedbe", "[SPEC.json]", stdout)
	sf := newSetupFlags(fs, engine.ChenPresetNames(), predictive.RoundsMethods,
		"results/fedbe", "results directory (one run per method and seed; finished runs are kept, interrupted ones resume)")
	rounds := fs.Int("rounds", 0, "communication rounds, replacing the spec's (0: the spec's)")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	rs, err := presetOrFile(*sf.preset, fs.Args(), chenRoundsPreset, predictive.LoadRoundsSpec, engine.ChenPresetNames())
	if err != nil {
		return err
	}
	if err := sf.apply(&rs.Setup); err != nil {
		return err
	}
	if *rounds != 0 {
		rs.Rounds = *rounds
	}
	spec, err := engine.FromRounds(rs)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	settings, err := spec.Expand()
	if err != nil {
		return err
	}
	if *sf.print {
		var specs []*engine.Spec
		for _, s := range settings {
			specs = append(specs, s.Spec)
		}
		return writeJSON(stdout, specs)
	}
	if err := checkData(settings); err != nil {
		return err
	}
	sum, err := runAlias(spec, engine.Options{Dir: *sf.out, Resume: true, Progress: runProgress(), NoFigures: true})
	if err != nil {
		return err
	}
	tab, err := summaryTable(sum, []string{"variant"}, nil, "accuracy,nll,ece")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "after round %d, mean ± SE over seeds:\n%sruns in %s (one row per round); reprint with: fedbayes table -rows variant %s\n",
		settings[0].Spec.Training.Rounds, tab.Markdown(), *sf.out, *sf.out)
	return err
}
