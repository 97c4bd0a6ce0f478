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

	"fedbayes.dev/fedbayes/reproduce"
)

func init() {
	register(&command{name: "reproduce", summary: "run the papers' presets and write the reproduction report (docs/reproduction.md)", run: runReproduce})
}

// runReproduce implements `fedbayes reproduce [-budget reduced|medium|full] [-papers IDS] [-presets NAMES]
// [-results DIR] [-records DIR] [-drop-record NAMES] [-o FILE] [-report-only] [-no-figures]`.
func runReproduce(args []string, stdout io.Writer) error {
	fs := newFlagSet("reproduce", "", stdout)
	budget := fs.String("budget", "reduced", "reduced (each preset under 30 minutes on 2 cores), medium (the report's budget: hours per preset) or full (the papers' budgets: days)")
	papers := fs.String("papers", "", "comma-separated paper ids (000,001,002,003,004); default all")
	presets := fs.String("presets", "", "comma-separated preset names to run (at the budget); default all of the papers'. The report covers every preset")
	dir := fs.String("results", "results/reproduce", "results directory (one sub-directory per paper); finished runs are kept")
	out := fs.String("o", "docs/reproduction.md", "the report; figures go to the same path without .md")
	records := fs.String("records", "", "keep the finished runs' records (run.json, rounds.jsonl, status.json; no checkpoints) in DIR/BUDGET/PAPER.tar.gz: "+
		"read into -results before anything runs (those runs are not run again), written back after, so the report can be computed over sittings on different machines")
	dropRecords := fs.String("drop-record", "", "remove the records of these runs (comma-separated run folder names, as the report names them) from the -records archives of the selected papers at -budget, "+
		"each archive rewritten atomically, and stop: the way out when a record is not one readers trust. Nothing runs and no report is written")
	reportOnly := fs.Bool("report-only", false, "write the report from the runs already in -results without running anything")
	noFigures := fs.Bool("no-figures", false, "write no SVG figures (no Node.js needed)")
	runOnly := fs.Bool("run-only", false, "run the presets and write no report (what a task of -slurm runs)")
	slurm := fs.Bool("slurm", false, "submit the presets to Slurm instead of running them (engine presets as job arrays, one task per run; the others as one task each); afterwards: -report-only")
	dryRun := fs.Bool("dry-run", false, "with -slurm: write the sbatch scripts and submit nothing")
	jobs := fs.Int("jobs", 1, "run the presets' runs in this many worker processes, each with a share of the cores (same numbers as one process)")
	worker := fs.String("worker", "", "run only the runs k, k+N, k+2N, ... of each preset (k/N; how -jobs starts its workers)")
	resources := resourceFlags(fs)
	if err := parseArgs(fs, args, nil); err != nil {
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
	if *dropRecords != "" {
		if *records == "" {
			return fmt.Errorf("%w: -drop-record needs -records DIR, the records it removes from", errUsage)
		}
		for _, run := range splitList(*dropRecords) {
			files, left, err := reproduce.DropRecord(sel, *records, b, run)
			if err != nil {
				return err
			}
			for i, f := range files {
				fmt.Fprintf(stdout, "records: dropped %s from %s (%d records left)\n", run, f, left[i])
			}
		}
		return nil
	}
	if *slurm {
		return submitReproduce(sel, *budget, b, *dir, splitList(*presets), resources(), *dryRun, stdout)
	}
	runOpts := reproduce.Options{Dir: *dir, Budget: b, Presets: splitList(*presets), Progress: runProgress(), Log: notes}
	if *worker != "" {
		if runOpts.Worker, runOpts.Workers, err = parseWorker(*worker); err != nil {
			return err
		}
	}
	if *jobs < 1 {
		return fmt.Errorf("%w: -jobs %d: want at least 1", errUsage, *jobs)
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
			fmt.Fprintf(notes, "%v: stopping the current run (it resumes from its last checkpoint); a second signal quits now\n", sig)
			cancel()
		case <-ctx.Done():
		}
	}()
	command := "fedbayes reproduce " + strings.Join(args, " ")
	useRecords := *records != "" && *worker == ""
	if useRecords {
		added, kept, err := reproduce.LoadRecords(sel, *dir, *records, b)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "records: %d finished runs read from %s into %s (%d already there)\n", added, *records, *dir, kept)
	}
	if !*reportOnly {
		if *jobs > 1 && *worker == "" {
			err = reproduceJobs(ctx, sel, runOpts, *jobs, *papers, *budget)
		} else {
			err = reproduce.Run(ctx, sel, runOpts)
		}
		if errors.Is(err, context.Canceled) {
			err = fmt.Errorf("interrupted; finished runs are kept: run the same command again to continue")
		}
	}
	if useRecords {
		// After the runs, also after an interruption (the runs that finished before it are records
		// already), and with -report-only (runs made elsewhere, by Slurm or fedbayes run, join the
		// records). A second signal quits at once; the archives are written atomically, so they are
		// then as the last save left them.
		err = errors.Join(err, saveRecords(sel, *dir, *records, b, stdout))
	}
	if err != nil {
		return err
	}
	if *runOnly && !*reportOnly {
		return nil
	}
	findings, err := reproduce.Write(ctx, sel, reproduce.ReportOptions{Dir: *dir, Budget: b, Output: *out, NoFigures: *noFigures,
		Command: strings.TrimSpace(command), Records: *records})
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
	fmt.Fprintf(stdout, "wrote %s: %d findings: %d hold, %d hold in part, %d do not hold, %d inconclusive, %d not testable here, %d not run\n",
		*out, len(findings), counts[reproduce.Holds], counts[reproduce.Partly], counts[reproduce.Fails],
		counts[reproduce.Inconclusive], counts[reproduce.NotTestable], counts[reproduce.NotRun])
	return nil
}

// reproduceJobs runs the selected presets in jobs worker processes (`fedbayes reproduce -run-only
// -worker k/N` with the same selection), each with a share of the cores, and waits for them; see
// runWorkers.
func reproduceJobs(ctx context.Context, sel []*reproduce.Paper, opt reproduce.Options, jobs int, papers, budget string) error {
	runDirs, err := reproduce.RunDirs(sel, opt)
	if err != nil {
		return err
	}
	if len(runDirs) == 0 {
		return nil
	}
	worker := func(k, n int) []string {
		args := []string{"reproduce", "-run-only", "-budget", budget, "-results", opt.Dir, "-worker", fmt.Sprintf("%d/%d", k, n)}
		if papers != "" {
			args = append(args, "-papers", papers)
		}
		if len(opt.Presets) > 0 {
			args = append(args, "-presets", strings.Join(opt.Presets, ","))
		}
		return args
	}
	return runWorkers(ctx, min(jobs, len(runDirs)), filepath.Join(opt.Dir, ".jobs"), worker, runDirs)
}

// saveRecords writes the records archives of the selected papers and says how many runs each keeps.
func saveRecords(sel []*reproduce.Paper, dir, records string, b reproduce.Budget, stdout io.Writer) error {
	kept, err := reproduce.SaveRecords(sel, dir, records, b)
	for _, p := range sel {
		if n, ok := kept[p.ID]; ok {
			fmt.Fprintf(stdout, "records: %s keeps %d finished runs\n", reproduce.RecordsFile(records, p, b), n)
		}
	}
	return err
}
