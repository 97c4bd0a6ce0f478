package engine

import "path/filepath"

// WorkerRuns are the indices (in RunList) of the runs that worker k of n runs when a spec's runs are
// dealt out to n processes side by side (fedbayes run -jobs, fedbayes reproduce -jobs): those with
// index k modulo n. Every run goes to exactly one worker.
func WorkerRuns(total, k, n int) []int {
	var runs []int
	for i := k; i < total; i += n {
		runs = append(runs, i)
	}
	return runs
}

// WorkerShare is worker k of n's share of spec's runs (WorkerRuns over RunList). It is empty, not
// nil, when the worker has no run: Options.Runs = nil would mean every run.
func WorkerShare(spec *Spec, k, n int) ([]int, error) {
	refs, err := RunList(spec)
	if err != nil {
		return nil, err
	}
	share := WorkerRuns(len(refs), k, n)
	if share == nil {
		share = []int{}
	}
	return share, nil
}

// RunDirs are the directories of spec's runs in the results directory dir, in RunList's order.
func RunDirs(spec *Spec, dir string) ([]string, error) {
	refs, err := RunList(spec)
	if err != nil {
		return nil, err
	}
	dirs := make([]string, len(refs))
	for i, r := range refs {
		dirs[i] = filepath.Join(dir, r.Name)
	}
	return dirs, nil
}
