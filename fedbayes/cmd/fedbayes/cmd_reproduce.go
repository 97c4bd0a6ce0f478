package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"fedbayes.dev/fedbayes/reproduce"
)

func init() {
	register(&command{name: "reproduce", summary: "run the papers' presets and write the reproduction report (docs/reproduction.md)", run: runReproduce})
}

// runReproduce implements `fedbayes reproduce [-budget reduced|medium|full] [-papers IDS] [-presets NAMES]
// [-results DIR] [-o FILE] [-report-only] [-no-figures]`.
func runReproduce(args []string, stdout io.Writer) error {
	fs := newFlagSet("reproduce", "", stdout)
	budget := fs.String("budget", "reduced", "reduced (each preset under 30 minutes on 2 cores), medium (the report's budget: hours per preset) or full (the papers' budgets: days)")
	papers := fs.String("papers", "", "comma-separated paper ids (000,001,002,003,004); default all")
	presets := fs.String("presets", "", "comma-separated preset names to run (at the budget); default all of the papers'. The report covers every preset")
	dir := fs.String("results", "results/reproduce", "results directory (one sub-directory per paper); finished runs are kept")
	out := fs.String("o", "docs/reproduction.md", "the report; figures go to the same path without .md")
	reportOnly := fs.Bool("report-only", false, "write the report from the runs already in -results without running anything")
	noFigures := fs.Bool("no-figures", false, "write no SVG figures (no Node.js needed)")
	runOnly := fs.Bool("run-only", false, "run the presets and write no report (what a task of -slurm runs)")
	slurm := fs.Bool("slurm", false, "submit the presets to Slurm instead of running them (engine presets as job arrays, one task per run; the others as one task each); afterwards: -report-only")
	dryRun := fs.Bool("dry-run", false, "with -slurm: write the sbatch scripts and submit nothing")
	resources := resourceFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	b, err := reproduce.ParseBudget(*budget)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	sel, err := reproduce.SelectPapers(splitList(*papers))
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *slurm {
		return submitReproduce(sel, *budget, b, *dir, splitList(*presets), resources(), *dryRun, stdout)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		// The first Ctrl-C (or SIGTERM, as kill, timeout and Slurm send) stops the current run at
		// its next training step, dropping the round in progress (the run resumes from its last
		// checkpoint); the default handling is then restored, so a second signal quits at once.
		select {
		case sig := <-sigs:
			signal.Stop(sigs)
			fmt.Fprintf(os.Stderr, "%v: stopping the current run (it resumes from its last checkpoint); a second signal quits now\n", sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	command := "fedbayes reproduce " + strings.Join(args, " ")
	if !*reportOnly {
		err := reproduce.Run(ctx, sel, reproduce.Options{Dir: *dir, Budget: b, Presets: splitList(*presets), Progress: runProgress(stdout), Log: stdout})
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted; finished runs are kept: run the same command again to continue")
		}
		if err != nil {
			return err
		}
		if *runOnly {
			return nil
		}
	}
	findings, err := reproduce.Write(ctx, sel, reproduce.ReportOptions{Dir: *dir, Budget: b, Output: *out, NoFigures: *noFigures,
		Command: strings.TrimSpace(command)})
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("interrupted while writing the report; %s is unchanged: run the same command again to write it", *out)
	}
	if err != nil {
		return err
	}
	counts := map[reproduce.Verdict]int{}
	for _, f := range findings {
		counts[f.Verdict]++
	}
	fmt.Fprintf(stdout, "wrote %s: %d findings: %d hold, %d hold in part, %d do not hold, %d not run\n", *out, len(findings),
		counts[reproduce.Holds], counts[reproduce.Partly], counts[reproduce.Fails], counts[reproduce.NotRun])
	return nil
}
