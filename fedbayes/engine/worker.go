package engine

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
