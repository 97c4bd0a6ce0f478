package cluster

import (
	"bytes"
	"context"

	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// lookSlurm finds a Slurm client command on PATH, with an error that says what is missing.
func lookSlurm(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("cluster: %s is not on PATH: run fedbayes submit on a Slurm login node (or use -dry-run to write the script only)", name)
	}
	return p, nil
}

// runTool runs a Slurm command and returns its standard output; the error carries its stderr.
func runTool(ctx context.Context, name string, args ...string) (string, error) {
	path, err := lookSlurm(name)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		return stdout.String(), fmt.Errorf("cluster: %s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.String(), nil
}

var maxArrayRe = regexp.MustCompile(`(?m)^\s*MaxArraySize\s*=\s*(\d+)\s*$`)

// parseMaxArraySize reads MaxArraySize from the output of `scontrol show config`.
func parseMaxArraySize(config string) (int, error) {
	m := maxArrayRe.FindStringSubmatch(config)
	if m == nil {
		return 0, fmt.Errorf("cluster: scontrol show config does not state MaxArraySize")
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, fmt.Errorf("cluster: MaxArraySize %q: %w", m[1], err)
	}
	return n, nil
}

// MaxArraySize asks the cluster for its MaxArraySize: array indices must be below it.
func MaxArraySize(ctx context.Context) (int, error) {
	out, err := runTool(ctx, "scontrol", "show", "config")
	if err != nil {
		return 0, err
	}
	return parseMaxArraySize(out)
}

// checkArraySize refuses an array whose largest index the cluster does not allow.
func checkArraySize(tasks []int, max int) error {
	top := 0
	for _, t := range tasks {
		top = maxInt(top, t)
	}
	if top >= max {
		return fmt.Errorf("cluster: the array needs index %d (%d tasks), but this cluster's MaxArraySize is %d (indices 0 to %d): "+
			"split the sweep into smaller specs, or ask the administrators to raise MaxArraySize", top, len(tasks), max, max-1)
	}
	return nil
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// sbatch submits script and returns the job id (sbatch --parsable prints "ID" or "ID;CLUSTER").
func sbatch(ctx context.Context, script string) (string, error) {
	out, err := runTool(ctx, "sbatch", "--parsable", script)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(out)
	if i := strings.IndexByte(id, ';'); i >= 0 {
		id = id[:i]
	}
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("cluster: sbatch printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

// queuedTasks asks squeue which array tasks of the given jobs are still pending or running:
// task index -> Slurm state (PENDING, RUNNING, ...). Jobs Slurm no longer knows are finished.
func queuedTasks(ctx context.Context, jobs []string) (map[int]string, error) {
	tasks := map[int]string{}
	if len(jobs) == 0 {
		return tasks, nil
	}
	if _, err := exec.LookPath("squeue"); err != nil {
		return tasks, nil // not on a Slurm node: nothing is known to be queued
	}
	for _, job := range jobs {
		out, err := runTool(ctx, "squeue", "-h", "-r", "-j", job, "-t", "PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED,REQUEUED", "-o", "%i|%T")
		if err != nil {
			if strings.Contains(err.Error(), "Invalid job id") {
				continue
			}
			return nil, err
		}
		if err := parseQueue(out, job, tasks); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}

// parseQueue adds the lines "JOB_TASK|STATE" of squeue -r for job to tasks.
func parseQueue(out, job string, tasks map[int]string) error {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		id, state, ok := strings.Cut(line, "|")
		j, t, isArray := strings.Cut(id, "_")
		if !ok || !isArray || j != job {
			continue
		}
		n, err := strconv.Atoi(t)
		if err != nil {
			// A pending array not yet split ("12_[3-5]") is expanded by -r; anything else is unexpected.
			return fmt.Errorf("cluster: squeue line %q: task %q is not a number", line, t)
		}
		tasks[n] = state
	}
	return nil
}
