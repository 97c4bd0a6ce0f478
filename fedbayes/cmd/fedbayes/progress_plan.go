package main

import (
	"slices"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// plannedProgress returns the progress reporter (runProgress) for engine.Run of spec into dir,
// told how many runs will start (progress.PlanRuns), so that each line says "run k of n" and the
// sweep's ETA: spec's runs (only those with the indices in only, when it is not nil) that dir does
// not hold finished, since the engine keeps those without running them.
func plannedProgress(spec *engine.Spec, dir string, only []int) progress.Reporter {
	rep := runProgress()
	dirs, err := engine.RunDirs(spec, dir)
	if err != nil {
		return rep // engine.Run reports the spec's error
	}
	n := 0
	for i, d := range dirs {
		if only != nil && !slices.Contains(only, i) {
			continue
		}
		if run, err := results.ReadRun(d); err == nil && (run.Status.State == results.Completed || run.Status.State == results.Diverged) {
			continue
		}
		n++
	}
	progress.PlanRuns(rep, n)
	return rep
}
