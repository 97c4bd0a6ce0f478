package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

func TestArrayRange(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{7, 0, 2, 1, 3, 5, 8, 8}, "0-3,5,7-8"},
		{[]int{4, 6, 9}, "4,6,9"},
	}
	for _, tc := range tests {
		if got := ArrayRange(tc.in); got != tc.want {
			t.Errorf("ArrayRange(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestResourcesValidate(t *testing.T) {
	tests := []struct {
		name string
		r    Resources
		want string // "" for valid
	}{
		{"defaults", Resources{}, ""},
		{"all set", Resources{Partition: "gpu,cpu", Time: "1-12:00:00", CPUs: 4, Mem: "16G", MaxConcurrent: 8,
			Extra: []string{"--gres=gpu:1", "#SBATCH --account=lab"}, Setup: []string{"module load cuda"}}, ""},
		{"minutes", Resources{Time: "90"}, ""},
		{"bad time", Resources{Time: "2h"}, "-time \"2h\""},
		{"bad mem", Resources{Mem: "4 GB"}, "-mem \"4 GB\""},
		{"bad partition", Resources{Partition: "gpu;rm -rf"}, "-partition"},
		{"negative cpus", Resources{CPUs: -1}, "-cpus -1"},
		{"negative max", Resources{MaxConcurrent: -2}, "-max -2"},
		{"extra not an option", Resources{Extra: []string{"gres=gpu:1"}}, "must start with '-'"},
		{"extra sets the array", Resources{Extra: []string{"--array=0-9"}}, "--array is set by fedbayes submit"},
		{"extra sets the output", Resources{Extra: []string{"-o /tmp/x"}}, "-o is set by fedbayes submit"},
		{"extra two lines", Resources{Extra: []string{"--gres=gpu:1\n--mem=1G"}}, "one line"},
		{"setup two lines", Resources{Setup: []string{"a\nb"}}, "-setup line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestScriptRender(t *testing.T) {
	s := Script{
		JobName:   "fedbayes-sweep",
		Tasks:     []int{3, 0, 1, 5},
		Output:    "/shared/res/.slurm/logs/%A_%a.out",
		Resources: Resources{Partition: "gpu", Time: "2:00:00", CPUs: 4, Mem: "8G", MaxConcurrent: 2, Extra: []string{"#SBATCH --gres=gpu:1"}, Setup: []string{"module load cuda"}},
		Command:   []string{"/opt/fed bayes/fedbayes", "run", "/shared/res/.slurm/spec.json", "-o", "/shared/res", "--resume", "-task-index"},
		TaskArg:   true,
		Comment:   []string{"a comment"},
	}
	got, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	want := `#!/bin/bash
#SBATCH --job-name=fedbayes-sweep
#SBATCH --array=0-1,3,5%2
#SBATCH --output=/shared/res/.slurm/logs/%A_%a.out
#SBATCH --partition=gpu
#SBATCH --time=2:00:00
#SBATCH --cpus-per-task=4
#SBATCH --mem=8G
#SBATCH --gres=gpu:1
# a comment
set -euo pipefail
# One run per task, on the CPUs Slurm gave it; no download of an XLA plugin.
export GOMAXPROCS="${SLURM_CPUS_PER_TASK:-1}"
export GOMLX_NO_AUTO_INSTALL="${GOMLX_NO_AUTO_INSTALL:-1}"
module load cuda
exec '/opt/fed bayes/fedbayes' run /shared/res/.slurm/spec.json -o /shared/res --resume -task-index "$SLURM_ARRAY_TASK_ID"
`
	if got != want {
		t.Errorf("script:\n%s\nwant:\n%s", got, want)
	}
	s.Tasks = nil
	if _, err := s.Render(); err == nil {
		t.Error("a script without tasks rendered")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"/a/b-c_d.json": "/a/b-c_d.json", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "$HOME": "'$HOME'"} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParseMaxArraySize(t *testing.T) {
	n, err := parseMaxArraySize("AuthType                = auth/munge\nMaxArraySize            = 1001\nMaxJobCount = 10000\n")
	if err != nil || n != 1001 {
		t.Fatalf("got %d, %v", n, err)
	}
	if _, err := parseMaxArraySize("MaxJobCount = 10000\n"); err == nil {
		t.Error("no MaxArraySize accepted")
	}
	if err := checkArraySize([]int{0, 5, 1000}, 1001); err != nil {
		t.Error(err)
	}
	if err := checkArraySize([]int{0, 1001}, 1001); err == nil || !strings.Contains(err.Error(), "MaxArraySize is 1001") {
		t.Errorf("index 1001 with MaxArraySize 1001: %v", err)
	}
}

func TestParseQueue(t *testing.T) {
	tasks := map[int]string{}
	if err := parseQueue("12_0|RUNNING\n12_3|PENDING\n13_1|PENDING\n12|RUNNING\n", "12", tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0] != "RUNNING" || tasks[3] != "PENDING" {
		t.Errorf("tasks = %v", tasks)
	}
	if err := parseQueue("12_[4-5]|PENDING\n", "12", tasks); err == nil {
		t.Error("an unexpanded array accepted")
	}
}

// sweep returns a valid spec of n runs (the quick-digits preset with n seeds).
func sweep(t *testing.T, n int) *engine.Spec {
	t.Helper()
	s, err := presets.Preset("quick-digits")
	if err != nil {
		t.Fatal(err)
	}
	s.Seeds = nil
	for i := 0; i < n; i++ {
		s.Seeds = append(s.Seeds, int64(i))
	}
	return s
}

// fakeSlurm puts sbatch, scontrol and squeue scripts on PATH; sbatch records its argument.
func fakeSlurm(t *testing.T, maxArray int) string {
	t.Helper()
	bin := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("sbatch", `echo "$2" > "`+bin+`/submitted"; echo "4242;cluster"`+"\n")
	write("scontrol", "echo 'MaxArraySize            = "+strconv.Itoa(maxArray)+"'\n")
	write("squeue", "exit 0\n")
	t.Setenv("PATH", bin)
	return bin
}

// executable returns a file usable as the fedbayes binary.
func executable(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestSubmitRefuses(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	notDir := filepath.Join(root, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := sweep(t, 2)
	bad.Training.Optimizer = "lbfgs"
	tests := []struct {
		name    string
		path    string // PATH ("" keeps the fake Slurm)
		spec    *engine.Spec
		dir     string
		res     Resources
		max     int
		wantErr string
	}{
		{"no sbatch", "/nonexistent", sweep(t, 2), filepath.Join(root, "a"), Resources{}, 1001, "sbatch is not on PATH"},
		{"invalid spec", "", bad, filepath.Join(root, "b"), Resources{}, 1001, "lbfgs"},
		{"unwritable dir", "", sweep(t, 2), filepath.Join(notDir, "results"), Resources{}, 1001, "is not writable"},
		{"array too large", "", sweep(t, 5), filepath.Join(root, "c"), Resources{}, 4, "MaxArraySize is 4"},
		{"bad option", "", sweep(t, 2), filepath.Join(root, "d"), Resources{Time: "soon"}, 1001, "-time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeSlurm(t, tc.max)
			if tc.path != "" {
				t.Setenv("PATH", tc.path)
			}
			_, err := Submit(ctx, Options{Spec: tc.spec, SpecName: "test", Dir: tc.dir, Resources: tc.res, Binary: executable(t)})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if _, err := os.Stat(filepath.Join(fake, "submitted")); err == nil {
				t.Error("sbatch was called")
			}
			if m, _ := filepath.Glob(filepath.Join(tc.dir, SlurmDir, "*.sbatch")); len(m) > 0 {
				t.Errorf("a refused submission wrote %v", m)
			}
		})
	}
}

func TestSubmitAndResubmit(t *testing.T) {
	ctx := context.Background()
	fake := fakeSlurm(t, 1001)
	dir := filepath.Join(t.TempDir(), "res")
	spec := sweep(t, 4)
	o := Options{Spec: spec, SpecName: "quick-digits", Dir: dir, Binary: executable(t), Resources: Resources{CPUs: 2, MaxConcurrent: 3}}
	sub, err := Submit(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if sub.JobID != "4242" || ArrayRange(sub.Tasks) != "0-3" {
		t.Fatalf("job %q tasks %v", sub.JobID, sub.Tasks)
	}
	got, _ := os.ReadFile(filepath.Join(fake, "submitted"))
	if strings.TrimSpace(string(got)) != sub.Script {
		t.Errorf("sbatch got %q, want %q", got, sub.Script)
	}
	script, _ := os.ReadFile(sub.Script)
	for _, want := range []string{"--array=0-3%3", "--cpus-per-task=2", "--resume -task-index \"$SLURM_ARRAY_TASK_ID\"", filepath.Join(dir, SlurmDir, "spec-quick-digits.json")} {
		if !strings.Contains(string(script), want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	back, err := ReadSubmittedSpecs(dir)
	if err != nil || len(back) != 1 {
		t.Fatalf("%d submitted specs: %v", len(back), err)
	}
	if refs, err := engine.RunList(back[0]); err != nil || len(refs) != 4 {
		t.Fatalf("submitted spec: %d runs, %v", len(refs), err)
	}
	if jobs, err := readJobs(dir, "quick-digits"); err != nil || len(jobs) != 1 || jobs[0] != "4242" {
		t.Errorf("jobs %v %v", jobs, err)
	}

	// Run 0 done, run 2 failed: a second submission sends 1, 2 and 3 only.
	refs, _ := engine.RunList(spec)
	writeState(t, dir, spec, refs[0], results.Completed)
	writeState(t, dir, spec, refs[2], results.Failed)
	sub, err = Submit(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if ArrayRange(sub.Tasks) != "1-3" {
		t.Errorf("resubmitted %v, want 1-3", sub.Tasks)
	}

	// Another spec into the same directory is refused.
	other := sweep(t, 4)
	other.Training.Rounds = 7
	o.Spec = other
	if _, err := Submit(ctx, o); err == nil || !strings.Contains(err.Error(), "another spec") {
		t.Errorf("another spec: %v", err)
	}

	// Another sweep (another name) may share the directory; status then reports both.
	named := sweep(t, 2)
	named.Name = "second"
	o.Spec = named
	if sub, err := Submit(ctx, o); err != nil || ArrayRange(sub.Tasks) != "0-1" {
		t.Fatalf("a second sweep: %v %v", sub, err)
	}
	reps, err := Status(ctx, dir)
	if err != nil || len(reps) != 2 || reps[0].Sweep != "quick-digits" || reps[1].Sweep != "second" {
		t.Fatalf("status of two sweeps: %v %v", reps, err)
	}
	if reps[0].Count(Done) != 1 || reps[0].Count(Failed) != 1 || reps[1].Count(Missing) != 2 {
		t.Errorf("counts: %s; %s", reps[0].Summary(), reps[1].Summary())
	}

	// A single command as one task (a whole preset's fedbayes reproduce -run-only).
	one, err := SubmitCommand(ctx, CommandOptions{Name: "reproduce 002", Dir: dir, Args: []string{"reproduce", "-run-only"}, Binary: executable(t)})
	if err != nil || one.JobID != "4242" {
		t.Fatalf("SubmitCommand: %+v %v", one, err)
	}
	if b, _ := os.ReadFile(one.Script); !strings.Contains(string(b), "reproduce -run-only\n") || !strings.Contains(string(b), "--array=0\n") {
		t.Errorf("command script:\n%s", b)
	}

	// A dry run needs no Slurm.
	t.Setenv("PATH", "/nonexistent")
	o.Spec, o.DryRun = spec, true
	sub, err = Submit(ctx, o)
	if err != nil || sub.JobID != "" || sub.Script == "" {
		t.Errorf("dry run: %+v %v", sub, err)
	}
}

// writeState writes a run of ref of spec into dir in the given state ("" leaves it incomplete): the
// meta `fedbayes run` records and a row at each round the spec evaluates (a finished run other than
// completed, and an incomplete one, stop after the first).
func writeState(t *testing.T, dir string, spec *engine.Spec, ref engine.RunRef, st results.State) {
	t.Helper()
	meta := metaOf(t, spec, ref)
	rounds, ok := engine.ExpectedRounds(meta)
	if !ok {
		t.Fatal("no rounds in the spec")
	}
	if st != results.Completed {
		rounds = rounds[:1]
	}
	writeRows(t, dir, ref, meta, rounds, st)
}

// metaOf is the meta `fedbayes run` records for run ref of spec.
func metaOf(t *testing.T, spec *engine.Spec, ref engine.RunRef) results.Meta {
	t.Helper()
	settings, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range settings {
		if st.Name == ref.Setting {
			meta, err := results.NewMeta(st.Name, st.Labels, ref.Seed, st.Spec, runinfo.Info{Fedbayes: runinfo.Version, Backend: "test"})
			if err != nil {
				t.Fatal(err)
			}
			return meta
		}
	}
	t.Fatalf("no setting %s", ref.Setting)
	return results.Meta{}
}

// writeRows writes run ref with meta into dir: one row per round, then state st at the last
// round of the spec when completed, at the last row otherwise.
func writeRows(t *testing.T, dir string, ref engine.RunRef, meta results.Meta, rounds []int, st results.State) {
	t.Helper()
	w, err := results.Create(filepath.Join(dir, ref.Name), meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rounds {
		if err := w.Append(results.Row{Round: r, Metrics: map[string]float64{results.Accuracy: 0.5}}); err != nil {
			t.Fatal(err)
		}
	}
	last := rounds[len(rounds)-1]
	switch st {
	case results.Completed:
		want, _ := engine.ExpectedRounds(meta)
		err = w.Complete(want[len(want)-1])
	case results.Failed:
		err = w.Fail(last, errors.New("out of memory"))
	case results.Diverged:
		err = w.Diverge(last, "NaN loss")
	default:
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckCounts(t *testing.T) {
	dir := t.TempDir()
	spec := sweep(t, 7)
	refs, err := engine.RunList(spec)
	if err != nil {
		t.Fatal(err)
	}
	writeState(t, dir, spec, refs[0], results.Completed)
	writeState(t, dir, spec, refs[1], results.Completed)
	writeState(t, dir, spec, refs[2], results.Failed)
	writeState(t, dir, spec, refs[3], results.Diverged)
	writeState(t, dir, spec, refs[4], "")
	c, err := results.ClaimRun(filepath.Join(dir, refs[5].Name)) // running: a live claim
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	// refs[6] is missing; a queued task for it makes it queued.
	rep, err := Check(dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[State]int{Done: 2, Failed: 1, Diverged: 1, Interrupted: 1, Running: 1, Missing: 1, Queued: 0}
	for s, n := range want {
		if got := rep.Count(s); got != n {
			t.Errorf("%s: %d, want %d (%s)", s, got, n, rep.Summary())
		}
	}
	if got := ArrayRange(rep.ToSubmit()); got != "2,4,6" {
		t.Errorf("to submit %s, want 2,4,6 (failed, interrupted, missing)", got)
	}
	if !strings.Contains(rep.Runs[2].Detail, "out of memory") || !strings.Contains(rep.Runs[3].Detail, "NaN loss") {
		t.Errorf("details: %q, %q", rep.Runs[2].Detail, rep.Runs[3].Detail)
	}
	rep, err = Check(dir, spec, map[int]string{6: "PENDING", 0: "RUNNING"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(Queued) != 1 || rep.Count(Done) != 2 || len(rep.ToSubmit()) != 2 {
		t.Errorf("with queued tasks: %s", rep.Summary())
	}
	if _, err := Check(filepath.Join(dir, "nope"), spec, nil); err == nil {
		t.Error("a missing results directory accepted")
	}
	if _, err := ReadSubmittedSpecs(dir); err == nil || !strings.Contains(err.Error(), "no submitted sweep") {
		t.Errorf("no spec.json: %v", err)
	}
}
