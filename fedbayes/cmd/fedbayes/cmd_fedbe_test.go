package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// TestFedBECommandUsage checks the flags of `fedbayes fedbe`, flag sugar over `fedbayes run`.
func TestFedBECommandUsage(t *testing.T) {
	old := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(old, []byte(`{"dataset": "digits", "rounds": 2, "fedbe": {"samples": 3}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"fedbe"}, 2, "give one preset or spec file"},
		{[]string{"fedbe", "-preset", "nosuch"}, 2, `"nosuch" is neither a spec file nor a preset`},
		{[]string{"fedbe", "-preset", "fedbe-digits-fast", "x.json"}, 2, "not both"},
		{[]string{"fedbe", "-preset", "fedbe-digits-fast", "-methods", "fedavg,fedprox"}, 2, `method "fedprox": no strategy`},
		{[]string{"fedbe", "-preset", "fedbe-digits-fast", "-rounds", "-1"}, 2, "-rounds -1: must not be negative"},
		{[]string{"fedbe", "-preset", "fedbe-digits-fast", "-seeds", "1,x"}, 2, `-seeds: "x"`},
		{[]string{"fedbe", old}, 1, "a spec of the former predictive or FedBE runner"},
		{[]string{"fedbe", "-preset", "fedbe-fmnist-full", "-print"}, 0, `"rounds": 40`},
		{[]string{"fedbe", "fedbe-fmnist-full", "-print"}, 0, `"rule": "fedbe-gaussian-no-swa"`},
		{[]string{"fedbe", "fedbe-fmnist-full", "-print", "-methods", "fedbe", "-rounds", "3"}, 0, `"rounds": 3`},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		status := runMain(tc.args, &out, &errOut)
		all := out.String() + errOut.String()
		if status != tc.status || !strings.Contains(all, tc.want) {
			t.Errorf("%v: status %d, output\n%s\nwant status %d and %q", tc.args, status, all, tc.status, tc.want)
		}
	}
}

// TestFedBECommandRun runs two rounds of FedAvg and FedBE on digits and checks the printed table.
func TestFedBECommandRun(t *testing.T) {
	if a := data.Status(data.Dir()); !sklearnPresent(a) {
		t.Skipf("scikit-learn data not installed in %s (run `fedbayes data install`)", data.Dir())
	}
	dir := t.TempDir()
	args := []string{"fedbe", "-preset", "fedbe-digits-fast", "-seeds", "1", "-rounds", "2", "-o", dir, "-methods", "fedavg,fedbe-gaussian"}
	var out, errOut bytes.Buffer
	if status := runMain(args, &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	for _, want := range []string{"after round 2", "| fedavg |", "| fedbe-gaussian |", "accuracy", "fedbayes table -rows variant"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fedbe-digits-fast-fedbe-gaussian-seed1", "rounds.jsonl")); err != nil {
		t.Errorf("no rounds: %v", err)
	}
	// A rerun keeps the finished runs: the same table, nothing trained again.
	out.Reset()
	if status := runMain(args, &out, &errOut); status != 0 || !strings.Contains(out.String(), "| fedbe-gaussian |") {
		t.Errorf("rerun: status %d, output %s %s", status, out.String(), errOut.String())
	}
}

// TestFedBECommandRefusesOldRuns checks that a results directory holding a run of the former
// multi-round runner under a preset run's name is refused before anything runs, naming the run and
// what differs from the preset's run, by fedbayes fedbe and fedbayes run alike.
func TestFedBECommandRefusesOldRuns(t *testing.T) {
	dir := t.TempDir()
	old := map[string]any{"spec": map[string]any{"name": "fedbe-digits-fast", "dataset": "digits", "local": map[string]any{}, "fedbe": map[string]any{}},
		"method": "fedavg"}
	meta, err := results.NewMeta("fedbe-digits-fast-fedavg", map[string]string{"method": "fedavg"}, 1, old, runinfo.Collect("test"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(filepath.Join(dir, "fedbe-digits-fast-fedavg-seed1"), meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Complete(0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"fedbe", "-preset", "fedbe-digits-fast", "-o", dir}, {"run", "fedbe-digits-fast", "-o", dir, "--resume"}} {
		var out, errOut bytes.Buffer
		status := runMain(args, &out, &errOut)
		if status != 1 || !strings.Contains(errOut.String(), "fedbe-digits-fast-fedavg-seed1") || !strings.Contains(errOut.String(), "label") {
			t.Errorf("%v: status %d, stderr %s; want 1, the run and what differs", args, status, errOut.String())
		}
	}
}
