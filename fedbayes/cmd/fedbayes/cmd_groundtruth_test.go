package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/groundtruth"
)

// TestGroundTruthCommand runs one small scenario and checks the files it writes, and that a second
// run writes the same bytes (same seed, same result).
func TestGroundTruthCommand(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "page.md")
	args := []string{"ground-truth", "-split", "covariate-shift", "-het", "0.5", "-clients", "3", "-dims", "2",
		"-n", "5", "-test", "20", "-seeds", "2", "-rounds", "6", "-o", dir, "-doc", doc}
	var out, errOut bytes.Buffer
	if st := runMain(args, &out, &errOut); st != 0 {
		t.Fatalf("status %d: %s%s", st, out.String(), errOut.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res groundtruth.StudyResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("study.json: %v", err)
	}
	if len(res.Summaries) != 1 || res.Summaries[0].Clients != 3 || len(res.Summaries[0].Rows) == 0 {
		t.Fatalf("study.json: unexpected summaries %+v", res.Summaries)
	}
	if r := res.Summaries[0].Rounds; len(r) != 2 || r[0].Rounds != 6 || len(r[1].Rows) == 0 || len(r[1].Rows[0].KLFromTruth) != 6 {
		t.Errorf("study.json: rounds %+v, want both prior policies over 6 rounds", r)
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Ground truth", "covariate-shift (h = 0.5)", "-split covariate-shift -het 0.5 -likelihood linear", "| DWC |",
		"-rounds 6", "## Over rounds", "### Fixed prior", "### Updated prior", "KL(p ‖ q) by round"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	out.Reset()
	if st := runMain(args, &out, &errOut); st != 0 {
		t.Fatalf("second run: status %d: %s", st, errOut.String())
	}
	again, _ := os.ReadFile(filepath.Join(dir, "study.json"))
	if !bytes.Equal(raw, again) {
		t.Error("same flags, different study.json")
	}
}

// TestGroundTruthCommandBadFlags checks that bad flags are errors with a message, not panics.
func TestGroundTruthCommandBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "dirichlet"}, "unknown split"},
		{[]string{"-split", "iid", "-het", "2"}, "heterogeneity"},
		{[]string{"-clients", "0"}, "clients"},
		{[]string{"-seeds", "0"}, "-seeds"},
		{[]string{"-corr", "1"}, "correlation"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"-split", "iid", "-likelihood", "poisson"}, "unknown likelihood"},
		{[]string{"-hmc-samples", "1"}, "HMC samples"},
		{[]string{"-rounds", "-1"}, "-rounds"},
	} {
		var out, errOut bytes.Buffer
		args := append([]string{"ground-truth", "-o", t.TempDir()}, tc.args...)
		st := runMain(args, &out, &errOut)
		if st == 0 || st == 3 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: status %d, stderr %q, want an error containing %q", tc.args, st, errOut.String(), tc.want)
		}
	}
}

// TestGroundTruthCommandLogistic runs one small logistic scenario: the page has its HMC section and
// the reference lands in the cache, which a second run reads.
func TestGroundTruthCommandLogistic(t *testing.T) {
	dir := t.TempDir()
	args := []string{"ground-truth", "-split", "iid", "-likelihood", "logistic", "-clients", "3", "-dims", "2",
		"-n", "10", "-test", "20", "-seeds", "1", "-hmc-warmup", "100", "-hmc-samples", "100", "-o", dir}
	var out, errOut bytes.Buffer
	if st := runMain(args, &out, &errOut); st != 0 {
		t.Fatalf("status %d: %s%s", st, out.String(), errOut.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, "ground-truth.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "## Logistic regression against an HMC reference") {
		t.Error("page lacks the logistic section")
	}
	cached, _ := filepath.Glob(filepath.Join(dir, "hmc", "hmc-*.json"))
	if len(cached) != 1 {
		t.Errorf("HMC cache: %v", cached)
	}
}
