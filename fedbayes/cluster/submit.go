package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// SlurmDir is the sub-directory of a results directory that holds the submission's files.
const SlurmDir = ".slurm"

// Files in SlurmDir: spec-NAME.json is the spec every task of the sweep NAME runs (several
// sweeps, such as a paper's presets, may share a results directory).
const (
	jobsFile = "jobs" // one line per submitted job: id, sweep name, tasks, time
	logsDir  = "logs" // the tasks' output, %A_%a.out
)

// specPath is the path of the submitted spec of the sweep named name.
func specPath(dir, name string) string {
	return filepath.Join(dir, SlurmDir, "spec-"+jobNameSafe(name)+".json")
}

// Options configure Submit.
type Options struct {
	// Spec is the sweep; SpecName names it in messages and in the script ("spec.json", a preset).
	Spec     *engine.Spec
	SpecName string
	// Dir is the results directory, on a file system every node shares.
	Dir string
	// Resources are the sbatch options.
	Resources Resources
	// JobName is the job's name; "" means "fedbayes-" + the spec's name.
	JobName string
	// Binary is the fedbayes executable the tasks run (it must be reachable from every node);
	// "" means this executable.
	Binary string
	// DryRun writes the script and submits nothing (no Slurm needed).
	DryRun bool
	// NoFigures makes the tasks write no figures.json (fedbayes run -no-figures), for a directory
	// shared by several sweeps.
	NoFigures bool
}

// Submission is what Submit did.
type Submission struct {
	// Script is the path of the sbatch script ("" when nothing was to submit).
	Script string
	// JobID is the Slurm job id ("" for a dry run or nothing to submit).
	JobID string
	// Tasks are the array indices submitted (runs missing, failed or interrupted).
	Tasks []int
	// Before is the state of every run before submitting.
	Before *Report
	// Logs is the directory of the tasks' logs.
	Logs string
}

// Submit submits the runs of o.Spec that are missing, failed or interrupted in o.Dir as one Slurm
// job array, one task per run. Everything is checked before anything is submitted: the options, the
// spec (validated), sbatch on PATH, a writable results directory, a spec equal to the one submitted
// there before, and an array within the cluster's MaxArraySize.
func Submit(ctx context.Context, o Options) (*Submission, error) {
	if o.Spec == nil {
		return nil, fmt.Errorf("cluster: no spec")
	}
	refs, err := engine.RunList(o.Spec)
	if err != nil {
		return nil, err
	}
	if err := o.Resources.Validate(); err != nil {
		return nil, err
	}
	name := o.JobName
	if name == "" {
		name = "fedbayes-" + jobNameSafe(o.Spec.WithDefaults().Name)
	}
	if !jobNameRe.MatchString(name) {
		return nil, fmt.Errorf("cluster: -job-name %q: use letters, digits, '_', '-', '.', '+'", name)
	}
	if err := CheckSbatchValue("job name", name); err != nil {
		return nil, err
	}
	bin, dir, err := prepare(o.Binary, o.Dir, o.DryRun)
	if err != nil {
		return nil, err
	}
	lock, err := lockSubmit(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	specData, err := json.MarshalIndent(o.Spec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cluster: spec: %w", err)
	}
	specData = append(specData, '\n')
	sweepName := o.Spec.WithDefaults().Name
	specPath := specPath(dir, sweepName)
	if old, err := os.ReadFile(specPath); err == nil && !bytes.Equal(old, specData) {
		return nil, fmt.Errorf("cluster: %s was submitted with another spec named %q (%s); submit this one to another results directory or give it another name", dir, sweepName, specPath)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	jobs, err := readJobs(dir, sweepName)
	if err != nil {
		return nil, err
	}
	var queued map[int]string
	if !o.DryRun {
		if queued, err = queuedTasks(ctx, jobs); err != nil {
			return nil, err
		}
	}
	before, err := Check(dir, o.Spec, queued)
	if err != nil {
		return nil, err
	}
	sub := &Submission{Before: before, Tasks: before.ToSubmit(), Logs: filepath.Join(dir, SlurmDir, logsDir)}
	if len(sub.Tasks) == 0 {
		return sub, nil
	}
	if !o.DryRun {
		max, err := MaxArraySize(ctx)
		if err != nil {
			return nil, err
		}
		if err := checkArraySize(sub.Tasks, max); err != nil {
			return nil, err
		}
	}
	stamp := time.Now().UTC().Format("20060102T150405.000Z")
	s := Script{
		JobName:   name,
		Tasks:     sub.Tasks,
		Output:    OutputPattern(sub.Logs),
		Resources: o.Resources,
		Command:   runCommand(bin, specPath, dir, o.NoFigures),
		TaskArg:   true,
		Comment: []string{
			fmt.Sprintf("fedbayes submit %s: %d of its %d runs, written %s", o.SpecName, len(sub.Tasks), len(refs), stamp),
			"Each task runs (or resumes) the run whose index is its array index; fedbayes status " + dir + " shows them all.",
		},
	}
	if _, err := s.Render(); err != nil { // every value of the script checked before a file is written
		return nil, err
	}
	// Checks done: write the files, then submit.
	if err := os.MkdirAll(sub.Logs, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := results.WriteFileAtomic(specPath, specData, 0o644); err != nil {
		return nil, err
	}
	if err := writeAndSubmit(ctx, sub, s, dir, sweepName, stamp, o.DryRun); err != nil {
		return nil, err
	}
	if o.DryRun {
		return sub, nil
	}
	if err := appendJob(dir, sub.JobID, sweepName, sub.Tasks, stamp); err != nil {
		return sub, fmt.Errorf("cluster: job %s was submitted, but recording it failed (fedbayes status will not see its queued tasks): %w", sub.JobID, err)
	}
	return sub, nil
}

// lockSubmit takes the results directory's submit lock, the claim on DIR/.slurm (results.ClaimRun:
// exclusive among processes, taken over when its holder is dead or silent): Submit holds it from
// reading the runs' states to recording the job, so two submits at once cannot both find a run
// missing and send it twice. A lock another live process holds is an error naming it.
func lockSubmit(dir string) (*results.Claim, error) {
	lock, err := results.ClaimRun(filepath.Join(dir, SlurmDir))
	if ce := (*results.ClaimedError)(nil); errors.As(err, &ce) {
		return nil, fmt.Errorf("cluster: another fedbayes submit into %s is under way (%s); when it has ended, "+
			"submit again: it sends only the runs still missing, failed or interrupted", dir, ce.Owner)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: the submit lock of %s: %w", dir, err)
	}
	return lock, nil
}

// runCommand is the command of each task, before its index.
func runCommand(bin, spec, dir string, noFigures bool) []string {
	c := []string{bin, "run", spec, "-o", dir, "--resume"}
	if noFigures {
		c = append(c, "-no-figures")
	}
	return append(c, "-task-index")
}

// binary returns the absolute path of the fedbayes executable the tasks run.
func binary(b string) (string, error) {
	if b == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("cluster: cannot find this executable (give -binary): %w", err)
		}
		b = exe
	}
	abs, err := filepath.Abs(b)
	if err != nil {
		return "", fmt.Errorf("cluster: -binary %q: %w", b, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("cluster: -binary: %w", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("cluster: -binary %s is not an executable file", abs)
	}
	return abs, nil
}

// checkWritable creates dir and DIR/.slurm if needed and checks a file can be written there.
func checkWritable(dir string) error {
	sd := filepath.Join(dir, SlurmDir)
	if err := os.MkdirAll(sd, 0o755); err != nil {
		return fmt.Errorf("cluster: results directory %s is not writable: %w", dir, err)
	}
	for _, d := range []string{dir, sd} {
		f, err := os.CreateTemp(d, ".write-test-*")
		if err != nil {
			return fmt.Errorf("cluster: results directory %s is not writable: %w", d, err)
		}
		name := f.Name()
		f.Close()
		if err := os.Remove(name); err != nil {
			return fmt.Errorf("cluster: results directory %s: %w", d, err)
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.+\-]+`)

func jobNameSafe(s string) string {
	s = strings.Trim(unsafeName.ReplaceAllString(s, "-"), "-")
	if s == "" {
		return "sweep"
	}
	return s
}

// ReadSubmittedSpecs reads the specs of the sweeps submitted into dir, in name order.
func ReadSubmittedSpecs(dir string) ([]*engine.Spec, error) {
	paths, err := filepath.Glob(filepath.Join(dir, SlurmDir, "spec-*.json"))
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("cluster: %s holds no submitted sweep (no %s); give the spec too: fedbayes status %s SPEC", dir, filepath.Join(SlurmDir, "spec-*.json"), dir)
	}
	var specs []*engine.Spec
	for _, p := range paths {
		s, err := engine.ReadSpec(p)
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// readJobs returns the ids of the jobs submitted into dir for the sweep named name.
func readJobs(dir, name string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, SlurmDir, jobsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 || strings.Trim(fields[0], "0123456789") != "" {
			return nil, fmt.Errorf("cluster: %s line %d: %q is not \"JOBID SWEEP TASKS TIME\"", filepath.Join(dir, SlurmDir, jobsFile), n, sc.Text())
		}
		if fields[1] == jobNameSafe(name) {
			ids = append(ids, fields[0])
		}
	}
	return ids, sc.Err()
}

// appendJob records a submitted job (one line, appended and synced).
func appendJob(dir, id, name string, tasks []int, stamp string) error {
	f, err := os.OpenFile(filepath.Join(dir, SlurmDir, jobsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "%s %s %s %s\n", id, jobNameSafe(name), ArrayRange(tasks), stamp); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CommandOptions configure SubmitCommand.
type CommandOptions struct {
	// Name names the job and its script; Dir is the results directory whose .slurm holds them.
	Name, Dir string
	// Args are the fedbayes arguments the task runs (after the executable).
	Args []string
	// Resources, Binary and DryRun are as in Options.
	Resources Resources
	Binary    string
	DryRun    bool
}

// prepare makes the checks every submission starts with: sbatch on PATH (unless dryRun), the
// fedbayes executable the tasks run, and a writable results directory, returned as absolute paths.
func prepare(binaryFlag, resultsDir string, dryRun bool) (bin, dir string, err error) {
	if err := CheckDir(resultsDir); err != nil {
		return "", "", err
	}
	if !dryRun {
		if _, err := lookSlurm("sbatch"); err != nil {
			return "", "", err
		}
	}
	if bin, err = binary(binaryFlag); err != nil {
		return "", "", err
	}
	if err := CheckShellWord("-binary", bin); err != nil {
		return "", "", err
	}
	if dir, err = filepath.Abs(resultsDir); err != nil {
		return "", "", fmt.Errorf("cluster: results directory %q: %w", resultsDir, err)
	}
	if err := CheckDir(dir); err != nil {
		return "", "", err
	}
	if err := checkWritable(dir); err != nil {
		return "", "", err
	}
	return bin, dir, nil
}

// CheckDir checks that a results directory can be named in the sbatch script: its path goes into
// the #SBATCH --output line (CheckSbatchValue; a '%' is escaped by OutputPattern) and, quoted, into
// the command of each task (CheckShellWord). Submit and SubmitCommand call it, with the absolute
// path too, before they write anything.
func CheckDir(dir string) error {
	if err := CheckShellWord("results directory", dir); err != nil {
		return err
	}
	return CheckSbatchValue("results directory", dir)
}

// SubmitCommand submits one fedbayes command as a single Slurm task (for work that has no per-run
// index, such as a `fedbayes reproduce -run-only` of a whole preset). Its checks are those
// of Submit that apply: options, sbatch on PATH, a writable directory.
func SubmitCommand(ctx context.Context, o CommandOptions) (*Submission, error) {
	if err := o.Resources.Validate(); err != nil {
		return nil, err
	}
	name := "fedbayes-" + jobNameSafe(o.Name)
	if err := CheckSbatchValue("job name", name); err != nil {
		return nil, err
	}
	bin, dir, err := prepare(o.Binary, o.Dir, o.DryRun)
	if err != nil {
		return nil, err
	}
	sub := &Submission{Tasks: []int{0}, Logs: filepath.Join(dir, SlurmDir, logsDir)}
	stamp := time.Now().UTC().Format("20060102T150405.000Z")
	s := Script{
		JobName:   name,
		Tasks:     sub.Tasks,
		Output:    OutputPattern(sub.Logs),
		Resources: o.Resources,
		Command:   append([]string{bin}, o.Args...),
		Comment:   []string{fmt.Sprintf("fedbayes: %s, written %s", o.Name, stamp)},
	}
	if _, err := s.Render(); err != nil { // every value of the script checked before a file is written
		return nil, err
	}
	if err := os.MkdirAll(sub.Logs, 0o755); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if err := writeAndSubmit(ctx, sub, s, dir, o.Name, stamp, o.DryRun); err != nil {
		return nil, err
	}
	return sub, nil
}

// writeAndSubmit renders s into DIR/SlurmDir/job-NAME-STAMP.sbatch (atomically; sub.Script) and,
// unless dryRun, submits it with sbatch (sub.JobID).
func writeAndSubmit(ctx context.Context, sub *Submission, s Script, dir, name, stamp string, dryRun bool) error {
	text, err := s.Render()
	if err != nil {
		return err
	}
	sub.Script = filepath.Join(dir, SlurmDir, "job-"+jobNameSafe(name)+"-"+stamp+".sbatch")
	if err := results.WriteFileAtomic(sub.Script, []byte(text), 0o755); err != nil {
		return err
	}
	if dryRun {
		return nil
	}
	sub.JobID, err = sbatch(ctx, sub.Script)
	return err
}
