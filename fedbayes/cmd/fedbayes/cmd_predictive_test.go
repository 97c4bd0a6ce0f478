package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

func TestPredictiveCommandUsage(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{"dataset": "digits", "clients": 3, "nosuch": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"predictive"}, 2, "give one spec file or -preset"},
		{[]string{"predictive", "-preset", "nosuch"}, 2, `unknown preset "nosuch"`},
		{[]string{"predictive", "-preset", "digits-fast", "x.json"}, 2, "not both"},
		{[]string{"predictive", "-preset", "digits-fast", "-methods", "bcm,median"}, 2, "methods = median"},
		{[]string{"predictive", "-preset", "digits-fast", "-h", "1.5"}, 2, "field h = 1.5"},
		{[]string{"predictive", "-preset", "digits-fast", "-seeds", "x"}, 2, `-seeds: "x"`},
		{[]string{"predictive", spec}, 1, `unknown field "nosuch"`},
		{[]string{"predictive", "-preset", "diabetes-fast", "-print"}, 0, `"variants": [`},
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

// TestPredictiveCommandRun runs the digits preset for one h and seed with a few methods through the
// engine and checks the printed table, the fitted beta and that a rerun keeps the complete runs.
func TestPredictiveCommandRun(t *testing.T) {
	if a := data.Status(data.Dir()); !sklearnPresent(a) {
		t.Skipf("scikit-learn data not installed in %s (run `fedbayes data install`)", data.Dir())
	}
	dir := t.TempDir()
	args := []string{"predictive", "-preset", "digits-fast", "-seeds", "1", "-h", "0.9", "-o", dir,
		"-methods", "fedavg,bcm,mixture,beta-predbayes,d-bcm"}
	var out, errOut bytes.Buffer
	if status := runMain(args, &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	for _, want := range []string{"| variant |", "| bcm |", "| d-bcm |", "| fedavg |", "| beta-predbayes |", "fitted beta at h=0.9:", "accuracy"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "digits-fast-beta-predbayes-0.9-seed1", "run.json")); err != nil {
		t.Errorf("no engine run of beta-PredBayes: %v", err)
	}
	// A rerun finds the trial complete and prints the same table.
	var again bytes.Buffer
	if status := runMain(args, &again, &errOut); status != 0 {
		t.Fatalf("rerun status %d: %s", status, errOut.String())
	}
	first := out.String()[:strings.Index(out.String(), "fitted beta")]
	if !strings.HasPrefix(again.String(), first) {
		t.Errorf("rerun table differs:\n%s\nfirst:\n%s", again.String(), first)
	}
}

func sklearnPresent(all []data.Availability) bool {
	for _, a := range all {
		if a.Name == "digits" || a.Name == "sklearn" {
			return a.Present
		}
	}
	return false
}
