package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	root := t.TempDir()
	rows := []Row{accRow(1, 0.5, 1), accRow(2, 0.75, 0.5)}
	writeRun(t, root, "a", nil, 1, rows, Completed)
	writeRun(t, root, "a", nil, 2, rows, Completed)
	writeRun(t, root, "a", nil, 3, rows[:1], "")
	writeRun(t, root, "b", nil, 1, rows, Diverged)
	writeRun(t, root, "c", nil, 1, rows, Failed)
	writeRun(t, root, "e", nil, 1, nil, Completed)
	bad := writeRun(t, root, "d", nil, 1, rows, Completed)
	if err := os.WriteFile(filepath.Join(bad, RowsFile), []byte("{oops}\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A second results directory, given as a run directory itself.
	root2 := t.TempDir()
	single := writeRun(t, root2, "a", nil, 4, rows, Completed)

	runs, skipped, err := Load(root, single)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, filepath.Base(r.Dir))
	}
	if strings.Join(got, " ") != "a-seed1 a-seed2 a-seed4" {
		t.Errorf("loaded %v", got)
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[filepath.Base(s.Dir)] = s.Reason
	}
	for dir, want := range map[string]string{
		"a-seed3": "incomplete (no status)",
		"b-seed1": "diverged at round 2: NaN loss",
		"c-seed1": "failed at round 2",
		"d-seed1": "line 1: malformed row",
		"e-seed1": "without any rows",
	} {
		if !strings.Contains(reasons[dir], want) {
			t.Errorf("skip reason of %s: %q, want %q", dir, reasons[dir], want)
		}
	}
	if len(skipped) != 5 {
		t.Errorf("skipped %v", skipped)
	}
	if s := skipped[0].String(); !strings.HasPrefix(s, filepath.Join(root, "a-seed3")+": ") {
		t.Errorf("skip string %q", s)
	}

	if len(runs) != 3 {
		t.Errorf("%d runs loaded, want 3", len(runs))
	}
	for _, r := range runs {
		if acc := r.Rows[len(r.Rows)-1].Metrics[Accuracy]; acc != 0.75 {
			t.Errorf("%s: final accuracy %v, want 0.75", r.Dir, acc)
		}
	}

	file := filepath.Join(root, "a-seed1", MetaFile)
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{nil, "no results directory"},
		{[]string{filepath.Join(root, "missing")}, "missing"},
		{[]string{file}, "is not a directory"},
		{[]string{filepath.Join(root, "not-a-run")}, "holds no runs"},
	} {
		_, _, err := Load(tc.dirs...)
		wantErr(t, err, tc.want)
	}
}

func TestReadMetaRejectsNewerSchema(t *testing.T) {
	dir := writeRun(t, t.TempDir(), "a", nil, 1, nil, "")
	data, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	data = []byte(strings.Replace(string(data), `"schema": 1`, `"schema": 99`, 1))
	if err := os.WriteFile(filepath.Join(dir, MetaFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadMeta(dir)
	wantErr(t, err, "schema 99 is newer")
}

func TestRunName(t *testing.T) {
	for in, want := range map[string]string{
		"eaa/size iid": "eaa_size_iid-seed3",
		"α=0.5":        "_=0.5-seed3",
		"..":           "run-seed3",
		"fvbwa-gaa":    "fvbwa-gaa-seed3",
	} {
		if got := RunName(in, 3); got != want {
			t.Errorf("RunName(%q) = %q, want %q", in, got, want)
		}
	}
}
