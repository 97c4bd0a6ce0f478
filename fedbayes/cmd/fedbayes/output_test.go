package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// smallSpec writes a digits spec of two rounds on a few hundred examples with the given seeds.
func smallSpec(t *testing.T, dir, seeds string) string {
	t.Helper()
	spec := filepath.Join(dir, "spec-"+strings.ReplaceAll(seeds, ",", "_")+".json")
	writeFile(t, spec, `{"name": "split", "dataset": {"name": "digits", "subsample": 300, "test_subsample": 100},
		"partition": {"clients": 3}, "model": {"hidden": [8]}, "training": {"rounds": 2, "batch_size": 32, "lr": 0.1},
		"evaluation": {"samples": 2}, "seeds": [`+seeds+`]}`)
	return spec
}

// progressLine matches a per-round progress line ("split seed 1 round 2/2 ...").
var progressLine = regexp.MustCompile(`round [0-9]+/[0-9]+`)

// TestRunSplitsProgressFromResults runs `fedbayes run` as a process with its standard output going
// to a file, as `fedbayes run ... > out.txt` does: the progress lines go to standard error, the file
// holds the results (the summary table) alone. The same holds in process (runMain's writers).
func TestRunSplitsProgressFromResults(t *testing.T) {
	digitsInstalled(t)
	dir := t.TempDir()
	spec := smallSpec(t, dir, "1")
	outFile := filepath.Join(dir, "out.txt")
	f, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", spec, "-o", filepath.Join(dir, "process"))
	cmd.Env = append(os.Environ(), "FEDBAYES_TEST_AS_COMMAND=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = f, &stderr
	err = cmd.Run()
	f.Close()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	file, _ := os.ReadFile(outFile)
	check := func(where, out, errOut string) {
		if progressLine.MatchString(out) || strings.Contains(out, "rounds in") {
			t.Errorf("%s: progress in the results:\n%s", where, out)
		}
		if !strings.Contains(out, "setting") || !strings.Contains(out, "completed") || !strings.Contains(out, "results in ") {
			t.Errorf("%s: the summary is not in the results:\n%s", where, out)
		}
		if !progressLine.MatchString(errOut) || !strings.Contains(errOut, "completed: 2 rounds in") {
			t.Errorf("%s: no progress on standard error:\n%s", where, errOut)
		}
	}
	check("process", string(file), stderr.String())

	var out, errOut bytes.Buffer
	if st := runMain([]string{"run", spec, "-o", filepath.Join(dir, "inprocess")}, &out, &errOut); st != 0 {
		t.Fatalf("status %d: %s", st, errOut.String())
	}
	check("runMain", out.String(), errOut.String())
}

// TestRunAgain runs a spec, then the same command again: the second says the runs are finished,
// where, and how to see them, shows them and exits 0. A spec with a further seed in the same folder
// is refused with the flag that continues it.
func TestRunAgain(t *testing.T) {
	digitsInstalled(t)
	dir := t.TempDir()
	spec := smallSpec(t, dir, "1")
	res := filepath.Join(dir, "runs")
	runCommandCases(t, []commandCase{
		{"first", []string{"run", spec, "-o", res}, 0, "completed", ""},
		{"again", []string{"run", spec, "-o", res}, 0, "finished before",
			res + " already holds the 1 finished run(s) of " + spec + "; they are kept and shown below (fedbayes table " + res + " tabulates them"},
		{"more seeds", []string{"run", smallSpec(t, dir, "1,2"), "-o", res}, 1, "",
			"holds 1 of the 2 runs of " + filepath.Join(dir, "spec-1_2.json") + ", 1 of them finished: continue them with fedbayes run"},
	})
	if _, err := os.Stat(filepath.Join(res, "split-seed2")); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote split-seed2 (%v)", err)
	}
}

// TestTableSplitsNotesFromResults checks that `fedbayes table` prints the table alone on standard
// output and the runs it left out on standard error.
func TestTableSplitsNotesFromResults(t *testing.T) {
	root := tableFixture(t) // with an incomplete run, which the table leaves out
	var out, errOut bytes.Buffer
	if st := runMain([]string{"table", root, "-rows", "rule"}, &out, &errOut); st != 0 {
		t.Fatalf("status %d: %s", st, errOut.String())
	}
	if strings.Contains(out.String(), "skipped") || !strings.HasPrefix(out.String(), "| rule |") {
		t.Errorf("standard output is not the table alone:\n%s", out.String())
	}
	notes := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	for _, line := range notes {
		if !strings.HasPrefix(line, "fedbayes table: ") {
			t.Errorf("standard error holds %q, not a note of fedbayes table", line)
		}
	}
	if !strings.Contains(errOut.String(), "fedbayes table: skipped "+filepath.Join(root, "eaa-fmnist-seed3")+": incomplete") {
		t.Errorf("standard error does not name the incomplete run:\n%s", errOut.String())
	}
}

// exportCheck is the Python script of TestExportReadByPython: it loads the CSV with pandas where
// installed, else the csv module, and prints the mean final-round accuracy of the rule eaa, and
// the mean of the NLL column over the rows that have one.
const exportCheck = `
import sys
path = sys.argv[1]
try:
    import pandas as pd
    df = pd.read_csv(path)
    last = df[df["round"] == df.groupby(["setting", "seed"])["round"].transform("max")]
    acc = last[last["rule"] == "eaa"]["accuracy"].mean()
    nll = df["nll"].mean()
except ImportError:
    import csv
    rows = list(csv.DictReader(open(path, newline="")))
    final = {}
    for r in rows:
        key = (r["setting"], r["seed"])
        if key not in final or int(r["round"]) > int(final[key]["round"]):
            final[key] = r
    accs = [float(r["accuracy"]) for r in final.values() if r["rule"] == "eaa"]
    acc = sum(accs) / len(accs)
    nlls = [float(r["nll"]) for r in rows if r["nll"] != ""]
    nll = sum(nlls) / len(nlls)
print("%.6f %.6f" % (acc, nll))
`

// TestExportReadByPython exports the table fixture (and a run with an infinite NLL) as CSV, loads it
// with Python and checks eaa's mean accuracy against the cell `fedbayes table` prints for it; the
// infinite NLL is an empty cell, so the NLL column stays numeric.
func TestExportReadByPython(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s: %v", py, err)
	}
	root := t.TempDir()
	m := func(acc, nll float64) map[string]float64 {
		return map[string]float64{"accuracy": acc, "nll": nll, "ece": 0.125}
	}
	writeTableRun(t, root, "eaa", "fmnist", 1, m(0.75, 0.5), results.Completed)
	writeTableRun(t, root, "eaa", "fmnist", 2, m(0.875, 0.25), results.Completed)
	writeTableRun(t, root, "eaa", "fmnist", 3, m(0.1, 9), "") // incomplete: left out by both
	writeTableRun(t, root, "gaa_w", "fmnist", 1, m(0.5, 1), results.Completed)
	writeTableRun(t, root, "gaa_w", "fmnist", 4, m(0.5, math.Inf(1)), results.Completed)
	csvPath := filepath.Join(t.TempDir(), "runs.csv")
	var out, errOut bytes.Buffer
	if st := runMain([]string{"export", root, "-o", csvPath}, &out, &errOut); st != 0 {
		t.Fatalf("export: status %d: %s", st, errOut.String())
	}
	if !strings.Contains(out.String(), "wrote "+csvPath+": 4 rows (run, round)") || !strings.Contains(errOut.String(), "fedbayes export: skipped "+filepath.Join(root, "eaa-fmnist-seed3")) {
		t.Errorf("export said\n%s\n%s", out.String(), errOut.String())
	}
	got, err := exec.Command(py, "-c", exportCheck, csvPath).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, got)
	}
	var table bytes.Buffer
	if st := runMain([]string{"table", root, "-rows", "rule", "-metrics", "accuracy", "-digits", "6"}, &table, &errOut); st != 0 {
		t.Fatalf("table: status %d: %s", st, errOut.String())
	}
	fields := strings.Fields(string(got))
	if len(fields) != 2 {
		t.Fatalf("python printed %q", got)
	}
	// eaa's seeds 1 and 2: (0.75 + 0.875) / 2; the NLL over the rows with a finite one: 0.5, 0.25, 1.
	if fields[0] != "0.812500" || fields[1] != "0.583333" {
		t.Errorf("python's means %q, want 0.812500 0.583333", got)
	}
	if !regexp.MustCompile(`\| eaa \| (\*\*)?` + regexp.QuoteMeta(fields[0]) + "\u00a0±").MatchString(table.String()) {
		t.Errorf("table's eaa accuracy is not python's %s:\n%s", fields[0], table.String())
	}
}
