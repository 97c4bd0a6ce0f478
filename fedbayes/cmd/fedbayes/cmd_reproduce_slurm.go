package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"fedbayes.dev/fedbayes/cluster"
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/reproduce"
)

// submitReproduce implements `fedbayes reproduce -slurm`: every selected preset at the budget goes
// to Slurm, into the same results directories as a local reproduce (RESULTS/ID), as a job array of one
// task per run (every paper's presets are engine presets). Every preset's spec is checked, and sbatch
// looked for, before the first submission.
func submitReproduce(papers []*reproduce.Paper, budgetName string, b reproduce.Budget, dir string, only []string,
	res cluster.Resources, dry bool, stdout io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("results directory %q: %w", dir, err)
	}
	want := map[string]bool{}
	for _, n := range only {
		want[n] = true
	}
	type job struct {
		paper  *reproduce.Paper
		preset reproduce.Preset
		spec   *engine.Spec
	}
	var jobs []job
	for _, p := range papers {
		for _, pr := range p.PresetsAt(b) {
			name := pr.Name(b)
			if len(want) > 0 && !want[name] {
				continue
			}
			j := job{paper: p, preset: pr}
			if j.spec, err = presets.Preset(name); err != nil {
				return err
			}
			if _, err := engine.RunList(j.spec); err != nil {
				return fmt.Errorf("preset %s: %w", name, err)
			}
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		return fmt.Errorf("%w: no preset selected", errUsage)
	}
	if err := res.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, j := range jobs {
		pdir := filepath.Join(abs, paperDir(j.paper))
		name := j.preset.Name(b)
		sub, err := cluster.Submit(ctx, cluster.Options{Spec: j.spec, SpecName: name, Dir: pdir, Resources: res, DryRun: dry, NoFigures: true})
		if err != nil {
			return fmt.Errorf("reproduce %s: %s: %w", j.paper.ID, name, err)
		}
		fmt.Fprintf(stdout, "reproduce %s: %s: ", j.paper.ID, name)
		printSubmissionLine(stdout, sub, dry)
	}
	fmt.Fprintf(stdout, "follow with: fedbayes status %s/ID; when every run is done: fedbayes reproduce -report-only -budget %s -results %s\n", abs, budgetName, dir)
	return nil
}

// paperDir is a paper's results sub-directory (as reproduce.Run uses it).
func paperDir(p *reproduce.Paper) string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.ID
}

// printSubmissionLine says in one line what one submission did.
func printSubmissionLine(w io.Writer, sub *cluster.Submission, dry bool) {
	switch {
	case len(sub.Tasks) == 0:
		fmt.Fprintln(w, "nothing to submit (every run done, running or queued)")
	case dry:
		fmt.Fprintf(w, "dry run: wrote %s (tasks %s)\n", sub.Script, cluster.ArrayRange(sub.Tasks))
	default:
		fmt.Fprintf(w, "submitted job %s, tasks %s\n", sub.JobID, cluster.ArrayRange(sub.Tasks))
	}
}
