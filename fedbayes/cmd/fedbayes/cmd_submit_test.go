package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSubmitAndStatusCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "res")
	t.Setenv("PATH", "/nonexistent") // no Slurm here: only dry runs can succeed
	tests := []commandCase{
		{"dry run", []string{"submit", "quick-digits", "-o", out, "-dry-run", "-time", "10", "-sbatch", "--gres=gpu:1"}, 0, "dry run: wrote", ""},
		{"no sbatch", []string{"submit", "quick-digits", "-o", out}, 1, "", "sbatch is not on PATH"},
		{"bad time", []string{"submit", "quick-digits", "-o", out, "-dry-run", "-time", "2h"}, 1, "", `-time "2h"`},
		{"owned option", []string{"submit", "quick-digits", "-o", out, "-dry-run", "-sbatch", "--array=1-9"}, 1, "", "--array is set by fedbayes submit"},
		{"no spec", []string{"submit", "-o", out}, 2, "", "give one spec file"},
		{"status", []string{"status", out, "-v"}, 0, "0 done, 0 running, 0 queued, 0 failed, 0 interrupted, 0 diverged, 1 missing", ""},
		{"status with spec", []string{"status", out, "quick-digits"}, 0, "1 missing", ""},
		{"status of nothing", []string{"status", dir}, 1, "", "holds no submitted sweep"},
		{"status no dir", []string{"status"}, 2, "", "give the results directory"},
		{"reproduce dry run", []string{"reproduce", "-slurm", "-dry-run", "-papers", "003", "-results", filepath.Join(dir, "rep")}, 0, "reproduce 003: fmnist-fast", ""},
		{"reproduce no sbatch", []string{"reproduce", "-slurm", "-papers", "003", "-results", filepath.Join(dir, "rep")}, 1, "", "sbatch is not on PATH"},
	}
	runCommandCases(t, tests)
	scripts, _ := filepath.Glob(filepath.Join(out, ".slurm", "*.sbatch"))
	if len(scripts) != 1 {
		t.Fatalf("%d scripts written, want the dry run's one: %v", len(scripts), scripts)
	}
	b, _ := os.ReadFile(scripts[0])
	for _, want := range []string{"#SBATCH --array=0\n", "#SBATCH --time=10\n", "#SBATCH --gres=gpu:1\n", " run ", "-task-index \"$SLURM_ARRAY_TASK_ID\""} {
		if !strings.Contains(string(b), want) {
			t.Errorf("script lacks %q:\n%s", want, b)
		}
	}
}
