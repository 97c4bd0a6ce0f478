package notebook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCell writes a GoNB main.go whose main() holds body, as GoNB does before compiling a cell,
// with its modification time at t.
func writeCell(t *testing.T, dir, decls, body string, at time.Time) {
	t.Helper()
	src := "package main\n\n" + decls + "\nfunc main() {\n\tflag.Parse()\n" + body + "\n}\n"
	path := filepath.Join(dir, "main.go")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

// Run All sends every cell at once and GoNB runs the queued ones after an interrupt: the cells
// queued after the interrupted one must end unrun, and a person running a cell again must not be
// stopped.
func TestQueued(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	type step struct {
		cell  string        // main() body of the cell GoNB runs
		decls string        // declarations left by earlier cells
		gap   time.Duration // from the previous cell's end to GoNB writing main.go
		skip  bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the queue after an interrupt is skipped, each cell once", []step{
			{cell: "plot()", gap: time.Second, skip: true},
			{cell: "table()", decls: "func plot() {}", gap: 8 * time.Second, skip: true},
			{cell: "train2()", gap: 2 * time.Second, skip: true},
		}},
		{"the interrupted cell run again resumes, whatever the declarations", []step{
			{cell: "train()", decls: "func later() {}", gap: time.Second, skip: false},
			{cell: "plot()", gap: time.Second, skip: false},
		}},
		{"a skipped cell run again runs and ends the queue", []step{
			{cell: "plot()", gap: time.Second, skip: true},
			{cell: "plot()", gap: 3 * time.Second, skip: false},
			{cell: "table()", gap: time.Second, skip: false},
		}},
		{"a cell long after the interrupt runs", []step{
			{cell: "plot()", gap: 16 * time.Second, skip: false},
			{cell: "table()", gap: time.Second, skip: false},
		}},
		{"a gap ends the queue", []step{
			{cell: "plot()", gap: time.Second, skip: true},
			{cell: "table()", gap: time.Minute, skip: false},
		}},
	} {
		dir := t.TempDir()
		writeCell(t, dir, "", "train()", t0.Add(-time.Minute))
		if err := markInterrupt(dir, "stopped after round 2 of a-seed1", t0); err != nil {
			t.Fatal(err)
		}
		end := t0
		for i, st := range tc.steps {
			writeCell(t, dir, st.decls, st.cell, end.Add(st.gap))
			end = end.Add(st.gap + 3*time.Second) // compiled and ran (or ended at once)
			skip, line := Queued(dir, end)
			if skip != st.skip {
				t.Errorf("%s: step %d (%s): skip %v, want %v", tc.name, i, st.cell, skip, st.skip)
			}
			if skip && !strings.Contains(line, "not run: Run All was stopped by Kernel > Interrupt") || skip && !strings.Contains(line, "round 2 of a-seed1") {
				t.Errorf("%s: step %d: line %q", tc.name, i, line)
			}
		}
	}
	// No record, a record that cannot be read, no main.go: nothing is skipped.
	dir := t.TempDir()
	writeCell(t, dir, "", "plot()", t0)
	if skip, _ := Queued(dir, t0); skip {
		t.Error("skipped without an interrupt")
	}
	if err := os.WriteFile(filepath.Join(dir, interruptFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if skip, _ := Queued(dir, t0); skip {
		t.Error("skipped on an unreadable record")
	}
	if _, err := os.Stat(filepath.Join(dir, interruptFile)); !os.IsNotExist(err) {
		t.Errorf("the unreadable record was kept: %v", err)
	}
	empty := t.TempDir()
	if err := markInterrupt(empty, "x", t0); err == nil {
		t.Error("an interrupt recorded without GoNB's main.go")
	}
}

// An interrupt in any cell (not only a training one) is recorded for the queued cells; outside
// Train it ends the cell with a clean line, during Train it is left to Train.
func TestWatchInterrupts(t *testing.T) {
	defer func() { exit = os.Exit }()
	t0 := time.Now()
	for _, training := range []bool{false, true} {
		dir := t.TempDir()
		writeCell(t, dir, "", "plot()", t0.Add(-time.Second))
		code := -1
		exit = func(c int) { code = c }
		if training {
			trainActive.Add(1)
		}
		sig := make(chan os.Signal, 1)
		sig <- os.Interrupt
		close(sig)
		var out, errOut strings.Builder
		watchInterrupts(dir, sig, &out, &errOut)
		if training {
			trainActive.Add(-1)
		}
		wantCode := 1
		if training {
			wantCode = -1
		}
		if code != wantCode || (code == 1) != strings.Contains(out.String(), "interrupted (Kernel > Interrupt)") || errOut.Len() > 0 {
			t.Errorf("training %v: exit %d, stdout %q, stderr %q", training, code, out.String(), errOut.String())
		}
		// The next cell, queued, does not run.
		writeCell(t, dir, "", "table()", time.Now())
		if skip, _ := Queued(dir, time.Now()); !skip {
			t.Errorf("training %v: the cell queued after the interrupt ran", training)
		}
	}
}
