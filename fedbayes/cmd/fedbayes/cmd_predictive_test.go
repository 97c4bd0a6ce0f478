package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

// TestPredictiveCommandUsage checks the flags of `fedbayes predictive`, flag sugar over `fedbayes
// run`: usage errors exit 2 naming the flag, -print prints the settings as `fedbayes run -print`
// does, and a spec of the former predictive runner is refused with the reason.
func TestPredictiveCommandUsage(t *testing.T) {
	old := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(old, []byte(`{"dataset": "digits", "clients": 3, "h": [0.5]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if status := runMain([]string{"run", "-print", "digits-fast"}, &want, &bytes.Buffer{}); status != 0 {
		t.Fatal("fedbayes run -print digits-fast failed")
	}
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"predictive"}, 2, "give one preset or spec file"},
		{[]string{"predictive", "-preset", "nosuch"}, 2, `"nosuch" is neither a spec file nor a preset`},
		{[]string{"predictive", "-preset", "digits-fast", "x.json"}, 2, "not both"},
		{[]string{"predictive", "-preset", "digits-fast", "-methods", "bcm,median"}, 2, `-methods: method "median": no strategy`},
		{[]string{"predictive", "digits-fast", "-methods", "fedbe-dirichlet"}, 2, `runs no method "fedbe-dirichlet"`},
		{[]string{"predictive", "-preset", "digits-fast", "-het", "1.5"}, 2, "partition.h"},
		{[]string{"predictive", "-preset", "digits-fast", "-het", "x"}, 2, `-het: "x" is not a number`},
		{[]string{"predictive", "-preset", "digits-fast", "-seeds", "x"}, 2, `-seeds: "x"`},
		{[]string{"predictive", old}, 1, "a spec of the former predictive or FedBE runner"},
		{[]string{"predictive", "-preset", "diabetes-fast", "-print"}, 0, `"name": "diabetes-fast-bcm-1"`},
		{[]string{"predictive", "digits-fast", "-print", "-methods", "oneshotfl,fedbe", "-het", "0.5", "-seeds", "7"}, 0, `"name": "digits-fast-oneshot-0.5"`},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		status := runMain(tc.args, &out, &errOut)
		all := out.String() + errOut.String()
		if status != tc.status || !strings.Contains(all, tc.want) {
			t.Errorf("%v: status %d, output\n%s\nwant status %d and %q", tc.args, status, all, tc.status, tc.want)
		}
	}
	var out bytes.Buffer
	if status := runMain([]string{"predictive", "-print", "digits-fast"}, &out, &bytes.Buffer{}); status != 0 || out.String() != want.String() {
		t.Errorf("fedbayes predictive -print digits-fast differs from fedbayes run -print digits-fast")
	}
	out.Reset()
	runMain([]string{"predictive", "digits-fast", "-print", "-methods", "oneshotfl,fedbe", "-het", "0.5", "-seeds", "7"}, &out, &bytes.Buffer{})
	if n := strings.Count(out.String(), `"rule": `); n != 2 || !strings.Contains(out.String(), `"digits-fast-fedbe-0.5"`) ||
		!strings.Contains(out.String(), `"seeds": [
      7
    ]`) {
		t.Errorf("-methods oneshotfl,fedbe -het 0.5 -seeds 7: want the settings oneshot and fedbe at h 0.5 with seed 7:\n%s", out.String())
	}
}

// TestPredictiveCommandRun runs the digits preset for one h and seed with a few methods through the
// engine and checks the printed table, the fitted beta and that a rerun keeps the complete runs.
func TestPredictiveCommandRun(t *testing.T) {
	if a := data.Status(data.Dir()); !sklearnPresent(a) {
		t.Skipf("scikit-learn data not installed in %s (run `fedbayes data install`)", data.Dir())
	}
	dir := t.TempDir()
	args := []string{"predictive", "digits-fast", "-seeds", "1", "-het", "0.9", "-o", dir,
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
