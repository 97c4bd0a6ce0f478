package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Script is one sbatch job array: its resources, its tasks (array indices) and the command each
// task runs.
type Script struct {
	// JobName is the job's name (--job-name).
	JobName string
	// Tasks are the array indices, each a run's index in the spec's run list.
	Tasks []int
	// Output is the path pattern of each task's log (--output), e.g. DIR/.slurm/logs/%A_%a.out.
	Output string
	// Resources are the sbatch options.
	Resources Resources
	// Command is the command each task runs, one argument per element; with TaskArg the task's
	// index ($SLURM_ARRAY_TASK_ID) is appended as the last argument.
	Command []string
	TaskArg bool
	// Comment lines are written at the top (what was submitted, when, by whom).
	Comment []string
}

// ArrayRange writes indices as a Slurm array specification: sorted, with runs of consecutive
// indices as ranges, e.g. [0 1 2 3 5 7 8] -> "0-3,5,7-8". Duplicates are dropped.
func ArrayRange(indices []int) string {
	s := append([]int(nil), indices...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] <= s[j]+1 {
			j++
		}
		if s[i] == s[j] {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Render returns the sbatch script. The resources must have been validated.
func (s Script) Render() (string, error) {
	if len(s.Tasks) == 0 {
		return "", fmt.Errorf("cluster: a job array needs at least one task")
	}
	if len(s.Command) == 0 {
		return "", fmt.Errorf("cluster: no command for the tasks")
	}
	if err := s.Resources.Validate(); err != nil {
		return "", err
	}
	if !jobNameRe.MatchString(s.JobName) {
		return "", fmt.Errorf("cluster: job name %q: use letters, digits, '_', '-', '.', '+'", s.JobName)
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	line := func(format string, a ...any) { fmt.Fprintf(&b, "#SBATCH "+format+"\n", a...) }
	line("--job-name=%s", s.JobName)
	array := ArrayRange(s.Tasks)
	if s.Resources.MaxConcurrent > 0 {
		array += "%" + strconv.Itoa(s.Resources.MaxConcurrent)
	}
	line("--array=%s", array)
	line("--output=%s", s.Output)
	r := s.Resources
	if r.Partition != "" {
		line("--partition=%s", r.Partition)
	}
	if r.Time != "" {
		line("--time=%s", r.Time)
	}
	if r.CPUs > 0 {
		line("--cpus-per-task=%d", r.CPUs)
	}
	if r.Mem != "" {
		line("--mem=%s", r.Mem)
	}
	for _, e := range r.Extra {
		opt, _ := extraOption(e)
		line("%s", opt)
	}
	for _, c := range s.Comment {
		b.WriteString("# " + strings.ReplaceAll(c, "\n", " ") + "\n")
	}
	b.WriteString("set -euo pipefail\n")
	b.WriteString("# One run per task, on the CPUs Slurm gave it; no download of an XLA plugin.\n")
	b.WriteString("export GOMAXPROCS=\"${SLURM_CPUS_PER_TASK:-1}\"\n")
	b.WriteString("export GOMLX_NO_AUTO_INSTALL=\"${GOMLX_NO_AUTO_INSTALL:-1}\"\n")
	for _, l := range r.Setup {
		b.WriteString(l + "\n")
	}
	var args []string
	for _, a := range s.Command {
		args = append(args, ShellQuote(a))
	}
	if s.TaskArg {
		args = append(args, `"$SLURM_ARRAY_TASK_ID"`)
	}
	fmt.Fprintf(&b, "exec %s\n", strings.Join(args, " "))
	return b.String(), nil
}

// ShellQuote quotes s for bash: unchanged when it holds only safe characters, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
