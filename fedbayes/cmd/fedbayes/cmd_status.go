package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/cluster"
	"fedbayes.dev/fedbayes/engine"
)

func init() {
	register(&command{name: "status", summary: "how many runs of a (Slurm) sweep are done, running, queued, failed, diverged, missing", run: runStatus})
}

// runStatus implements `fedbayes status DIR [SPEC.json|PRESET] [-v]`.
func runStatus(args []string, stdout io.Writer) error {
	fs := newFlagSet("status", "DIR [SPEC.json|PRESET]", stdout)
	verbose := fs.Bool("v", false, "one line per run")
	fast := fs.Bool("fast", false, "the spec's quick look (as fedbayes run --fast), with a SPEC argument")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
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
		refs, err := engine.RunList(spec)
		if err != nil {
			return err
		}
		rep, err := cluster.Check(dir, refs, nil)
		if err != nil {
			return err
		}
		rep.Sweep = spec.WithDefaults().Name
		reps = append(reps, rep)
	} else if reps, err = cluster.Status(ctx, dir); err != nil {
		return err
	}
	for _, rep := range reps {
		if *verbose {
			tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
			fmt.Fprintln(tw, "task\trun\tstate\tdetail")
			for _, r := range rep.Runs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", r.Run.Index, r.Run.Name, r.State, r.Detail)
			}
			_ = tw.Flush()
		}
		fmt.Fprintf(stdout, "%s, sweep %s: %s\n", dir, rep.Sweep, rep.Summary())
		if n := len(rep.ToSubmit()); n > 0 {
			fmt.Fprintf(stdout, "%d runs to submit again (missing, failed or interrupted): fedbayes submit SPEC -o %s with the same spec\n", n, dir)
		}
	}
	return nil
}
