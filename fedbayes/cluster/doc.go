// Package cluster hands a fedbayes sweep to Slurm: one job array with one task per run (a setting
// with a seed), all writing into one results directory on a shared file system.
//
// Submit writes an sbatch script (one array task per run; each task runs `fedbayes run SPEC -o DIR
// --resume -task-index $SLURM_ARRAY_TASK_ID`, so an interrupted task continues from its last
// checkpoint when it runs again), checks the spec, the results directory and the cluster's
// MaxArraySize, and submits the script with sbatch. The runs guard themselves with the per-run
// claim of package results, so two tasks given the same run never both write it.
//
// Check reads the state of every run of a submitted sweep (done, running, queued, failed,
// interrupted, diverged, missing); submitting again submits only the runs that are missing, failed
// or interrupted. The submission's files live in DIR/.slurm: the spec every task reads
// (spec.json), the scripts, the job ids and the tasks' logs. See docs/cluster.md.
package cluster
