package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"fedbayes.dev/fedbayes/cluster"
)

func init() {
	register(&command{name: "submit", summary: "run a spec's sweep on Slurm: one array task per run; again: only the missing and failed runs", run: runSubmit})
}

// lines is a repeatable string flag.
type lines []string

func (l *lines) String() string     { return strings.Join(*l, "; ") }
func (l *lines) Set(v string) error { *l = append(*l, v); return nil }

// resourceFlags adds the sbatch options to fs.
func resourceFlags(fs *flag.FlagSet) func() cluster.Resources {
	partition := fs.String("partition", "", "Slurm partition (default: the cluster's)")
	timeLimit := fs.String("time", "", "time limit per task, e.g. 30, 2:00:00, 1-00:00:00 (default: the partition's)")
	cpus := fs.Int("cpus", 1, "CPUs per task (--cpus-per-task); the task's GOMAXPROCS")
	mem := fs.String("mem", "", "memory per task, e.g. 4G (default: the cluster's)")
	max := fs.Int("max", 0, "at most this many tasks at once (the %N of --array; 0: no limit)")
	var extra, setup lines
	fs.Var(&extra, "sbatch", "an extra sbatch option, e.g. --gres=gpu:1 or --account=lab (repeatable)")
	fs.Var(&setup, "setup", "a shell line each task runs before fedbayes, e.g. 'module load cuda' (repeatable)")
	return func() cluster.Resources {
		return cluster.Resources{Partition: *partition, Time: *timeLimit, CPUs: *cpus, Mem: *mem, MaxConcurrent: *max, Extra: extra, Setup: setup}
	}
}

// runSubmit implements `fedbayes submit SPEC.json|PRESET -o DIR [sbatch options] [-dry-run]`.
func runSubmit(args []string, stdout io.Writer) error {
	fs := newFlagSet("submit", "SPEC.json|PRESET", stdout)
	out := fs.String("o", "results", "results directory, on a file system every node shares")
	fast := fs.Bool("fast", false, "submit the spec's quick look (as fedbayes run --fast)")
	dry := fs.Bool("dry-run", false, "write the sbatch script and submit nothing")
	jobName := fs.String("job-name", "", "Slurm job name (default fedbayes-SPECNAME)")
	bin := fs.String("binary", "", "the fedbayes executable the tasks run, reachable from every node (default: this one)")
	resources := resourceFlags(fs)
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	positional := fs.Args()
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sub, err := cluster.Submit(ctx, cluster.Options{Spec: spec, SpecName: positional[0], Dir: *out, Resources: resources(),
		JobName: *jobName, Binary: *bin, DryRun: *dry})
	if err != nil {
		return err
	}
	printSubmission(stdout, sub, *out, *dry)
	return nil
}

// printSubmission says what was submitted and where the results go.
func printSubmission(w io.Writer, sub *cluster.Submission, dir string, dry bool) {
	fmt.Fprintf(w, "before: %s\n", sub.Before.Summary())
	for _, line := range sub.Before.Refusals() {
		fmt.Fprintf(w, "refused (not submitted): %s\n", line)
	}
	switch {
	case len(sub.Tasks) == 0:
		fmt.Fprintf(w, "nothing to submit: no run of %s is missing, failed or interrupted\n", dir)
		return
	case dry:
		fmt.Fprintf(w, "dry run: wrote %s (%d tasks: %s); submit it with: sbatch %s\n", sub.Script, len(sub.Tasks), cluster.ArrayRange(sub.Tasks), sub.Script)
		return
	}
	fmt.Fprintf(w, "submitted job %s: %d array tasks (%s), script %s\n", sub.JobID, len(sub.Tasks), cluster.ArrayRange(sub.Tasks), sub.Script)
	fmt.Fprintf(w, "results in %s; task logs in %s\n", dir, sub.Logs)
	fmt.Fprintf(w, "follow with: fedbayes status %s   (submit again to run only what is missing or failed)\n", dir)
}
