package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

func TestRunCommand(t *testing.T) {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed: %v", err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	writeFile(t, spec, `{"name": "cli", "dataset": {"name": "digits", "subsample": 300, "test_subsample": 100},
		"partition": {"clients": 3}, "model": {"hidden": [8]}, "training": {"rounds": 2, "batch_size": 32, "lr": 0.1},
		"evaluation": {"samples": 2}, "seeds": [1], "budget": "reduced: a test budget"}`)
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"dataset": {"name": "digits"}, "training": {"optimizer": "lbfgs"}}`)
	out := filepath.Join(dir, "results")
	tests := []commandCase{
		{"run", []string{"run", spec, "-o", out}, 0, "completed", ""},
		{"figures written", []string{"run", spec, "-o", out, "--resume"}, 0, "finished before", ""},
		// The budget printed is what ran, not the spec's stated label.
		{"budget run", []string{"run", spec, "-o", out, "--resume"}, 0,
			"budget: digits: 300 training / 100 test examples, 3 clients, T=2 rounds, E=1 local epoch, 1 seed\n", ""},
		// The same command again: the finished run is kept and shown, status 0.
		{"run again", []string{"run", "-o", out, spec}, 0, "finished before", "already holds the 1 finished run(s) of " + spec},
		{"invalid spec", []string{"run", bad, "-o", out}, 1, "", `training.optimizer: "lbfgs" is not one of sgd, adam`},
		{"list", []string{"run", "-list"}, 0, "ozer2022-fmnist-c100-dirichlet-reduced", ""},
		{"print preset", []string{"run", "--fast", "--print", "quick-digits"}, 0, `"name": "quick-digits-fast"`, ""},
		{"unknown preset", []string{"run", "zzzzzzzzzzzz"}, 2, "", "neither a spec file nor a preset (fedbayes run -list"},
		{"no argument", []string{"run"}, 2, "", "give one spec file"},
	}
	runCommandCases(t, tests)
	if b, err := os.ReadFile(filepath.Join(out, "figures.json")); err != nil || !strings.Contains(string(b), `"cli (T=2, E=1, 1 seed, 300 / 100 examples)"`) {
		t.Errorf("figures.json without the budget in its titles (%v):\n%.300s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "cli-seed1", "status.json")); err != nil {
		t.Errorf("no status.json: %v", err)
	}
	// The same command with a changed spec: the finished run is of another experiment, so the
	// command fails before anything is printed or written, naming the folder and what differs.
	changed := filepath.Join(dir, "changed.json")
	writeFile(t, changed, strings.Replace(mustRead(t, spec), `"lr": 0.1`, `"lr": 0.05`, 1))
	figures := mustRead(t, filepath.Join(out, "figures.json"))
	written, err := os.Stat(filepath.Join(out, "figures.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, resume := range []bool{false, true} {
		args := []string{"run", changed, "-o", out}
		if resume {
			args = append(args, "--resume")
		}
		var stdout, stderr bytes.Buffer
		if got := runMain(args, &stdout, &stderr); got != 1 {
			t.Errorf("%v: status %d, want 1\nstderr %s", args, got, stderr.String())
		}
		want := "fedbayes run: " + filepath.Join(out, "cli-seed1") + ": holds a run of another experiment (the specs differ: training.lr: 0.1 in the recorded run, 0.05 now)"
		if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 ||
			strings.Contains(stderr.String(), "engine:") || !strings.Contains(stderr.String(), "choose another results directory with -o") {
			t.Errorf("%v: want one error line starting %q and no output\nstdout %q\nstderr %q", args, want, stdout.String(), stderr.String())
		}
		if fi, err := os.Stat(filepath.Join(out, "figures.json")); err != nil || !fi.ModTime().Equal(written.ModTime()) ||
			mustRead(t, filepath.Join(out, "figures.json")) != figures {
			t.Errorf("%v: figures.json was rewritten (%v)", args, err)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunRefusesDataErrorsFirst checks that a field only the data shows to be wrong (a sort feature
// the dataset lacks) is refused with its name, and that neither one process nor -jobs writes anything.
func TestRunRefusesDataErrorsFirst(t *testing.T) {
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "diabetes_target.csv.gz")); err != nil {
		t.Skipf("diabetes not installed: %v", err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	writeFile(t, spec, `{"name": "sorted", "dataset": {"name": "diabetes"},
		"partition": {"method": "heterogeneity", "clients": 3, "h": 0.5, "sort_feature": "BMI"},
		"model": {"kind": "deterministic", "hidden": [8]}, "aggregation": {"rule": "FedAvg"},
		"training": {"rounds": 1, "batch_size": 16, "lr": 0.01}, "seeds": [1, 2]}`)
	want := `partition.sort_feature: "BMI" is not a feature of diabetes (features: age, sex, bmi`
	for _, jobs := range []string{"1", "2"} {
		out := filepath.Join(dir, "results-"+jobs)
		runCommandCases(t, []commandCase{{"jobs " + jobs, []string{"run", spec, "-o", out, "-jobs", jobs}, 1, "", want}})
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("-jobs %s: %s was written (%v)", jobs, out, err)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
