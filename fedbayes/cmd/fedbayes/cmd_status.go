package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/cluster"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
)

func init() {
	register(&command{name: "status", summary: "how many runs of a (Slurm) sweep are done, running, queued, failed, diverged, missing, refused", run: runStatus})
}

// runStatus implements `fedbayes status DIR [SPEC.json|PRESET] [-v]`.
func runStatus(args []string, stdout io.Writer) error {
	fs := newFlagSet("status", "DIR [SPEC.json|PRESET]", stdout)
	verbose := fs.Bool("v", false, "one line per run")
	fast := fs.Bool("fast", false, "the spec's quick look (as fedbayes run --fast), with a SPEC argument")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	positional := fs.Args()
	if len(positional) < 1 || len(positional) > 2 {
		return fmt.Errorf("%w: give the results directory, and the spec unless it was submitted there with fedbayes submit", errUsage)
	}
	dir := positional[0]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var reps []*cluster.Report
	if len(positional) == 2 {
		spec, err := loadSpec(positional[1], *fast)
		if err != nil {
			return err
		}
		rep, err := cluster.Check(dir, spec, nil)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	} else {
		var err error
		if reps, err = cluster.Status(ctx, dir); err != nil {
			return err
		}
	}
	for _, rep := range reps {
		health := runsHealth(dir, rep)
		if *verbose {
			tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "task\trun\tstate\tvariances\tdetail")
			for i, r := range rep.Runs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Run.Index, r.Run.Name, r.State, health[i].Short(), r.Detail)
			}
			_ = tw.Flush()
		}
		fmt.Fprintf(stdout, "%s, sweep %s: %s\n", dir, rep.Sweep, rep.Summary())
		for _, line := range rep.Refusals() {
			fmt.Fprintf(stdout, "refused: %s\n", line)
		}
		names := make([]string, len(rep.Runs))
		for i, r := range rep.Runs {
			names[i] = r.Run.Name
		}
		printHealth(stdout, names, health, *verbose, "-v lists every one")
		if n := len(rep.ToSubmit()); n > 0 {
			fmt.Fprintf(stdout, "%d runs to submit again (missing, failed or interrupted): fedbayes submit SPEC -o %s with the same spec\n", n, dir)
		}
	}
	return nil
}

// runsHealth reads, for every run of rep that has rows, whether its variances learned
// (report.RunHealth); runs without rows, or that cannot be read (their state says why), get the
// zero Health.
func runsHealth(dir string, rep *cluster.Report) []report.Health {
	out := make([]report.Health, len(rep.Runs))
	for i, r := range rep.Runs {
		switch r.State {
		case cluster.Done, cluster.Diverged, cluster.Interrupted:
		default:
			continue
		}
		run, err := results.ReadRun(filepath.Join(dir, r.Run.Name))
		if err != nil || len(run.Rows) == 0 {
			continue
		}
		out[i] = report.RunHealth(run)
	}
	return out
}

// printHealth flags the runs whose variances did not learn (report.Health.Flagged), in words: one
// line each when verbose, else their count and the first one's message; and counts the runs recorded
// before health was measured. names[i] names the run of health[i]; more says where the other flagged
// runs are listed.
func printHealth(w io.Writer, names []string, health []report.Health, verbose bool, more string) {
	var flagged, unmeasured []int
	variational := 0
	for i, h := range health {
		switch {
		case h.Flagged():
			flagged = append(flagged, i)
		case h.State == report.HealthUnmeasured:
			unmeasured = append(unmeasured, i)
		}
		if h.State != "" && h.State != report.HealthNotVariational {
			variational++
		}
	}
	if len(flagged) > 0 {
		fmt.Fprintf(w, "%d of %d variational runs did not learn their variances, or learned them alike on every client: there, rules that combine variances differ in them only by their own arithmetic on a shared variance\n", len(flagged), variational)
		if verbose {
			for _, i := range flagged {
				fmt.Fprintf(w, "  %s: %s: %s\n", names[i], health[i].Short(), health[i].Message)
			}
		} else {
			i := flagged[0]
			fmt.Fprintf(w, "  for example %s: %s (%s)\n", names[i], health[i].Message, more)
		}
	}
	if len(unmeasured) > 0 {
		fmt.Fprintf(w, "%d of %d variational runs were recorded before posterior health was measured: whether their variances learned is unknown\n", len(unmeasured), variational)
	}
}
