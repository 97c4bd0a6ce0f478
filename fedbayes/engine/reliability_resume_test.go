package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/simplegoplus"
)

// TestResumeRepairsAreNoted damages an interrupted run (its sole checkpoint corrupted, a torn last
// row) and checks that resuming it prints each repair on the notes (standard error) rather than
// restarting it from round 1 without a word (issue 36: ResumePoint.Notes and TornBytes were never
// printed), and that a plain resume prints nothing.
func TestResumeRepairsAreNoted(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Training.Rounds, s.Training.LocalEpochs = 2, 1
	var notes bytes.Buffer
	old := notesOut
	notesOut = &notes
	defer func() { notesOut = old }()
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	runDir := sum.Runs[0].Dir
	// Make it an interrupted run: no status, the sole checkpoint damaged, a torn last line.
	if err := os.Remove(filepath.Join(runDir, results.StatusFile)); err != nil {
		t.Fatal(err)
	}
	ckpts, _ := filepath.Glob(filepath.Join(runDir, results.CheckpointsDir, "*.ckpt"))
	if len(ckpts) != 1 {
		t.Fatalf("checkpoints %v, want one", ckpts)
	}
	raw, err := os.ReadFile(ckpts[0])
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 0xff
	if err := os.WriteFile(ckpts[0], raw, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(runDir, results.RowsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"round": 3, "metr`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	notes.Reset()
	again := runQuiet(t, s, dir, true)
	if r := again.Runs[0]; r.State != results.Completed || r.Resumed {
		t.Fatalf("resumed run %+v, want completed from round 1", r)
	}
	for _, want := range []string{
		"fedbayes: resuming " + runDir + ": ",
		"removed a torn last line of rounds.jsonl (18 bytes",
		"no valid checkpoint is left: the run restarts from round 1 (2 row(s) dropped)",
		filepath.Base(ckpts[0]),
	} {
		if !strings.Contains(notes.String(), want) {
			t.Errorf("notes lack %q:\n%s", want, notes.String())
		}
	}
	t.Logf("notes:\n%s", notes.String())
	// A finished run resumed again notes nothing but the kernels' warning, when OpenBLAS is off.
	notes.Reset()
	runQuiet(t, s, dir, true)
	if got, want := notes.String(), slowKernelsNote(); got != want {
		t.Errorf("notes on a plain resume:\n%s\nwant:\n%s", got, want)
	}
}

// slowKernelsNote is the line Run prints first when fedbayes's backend runs without OpenBLAS, and ""
// when it runs on OpenBLAS.
func slowKernelsNote() string {
	if w := backend.SlowKernels(backendConfig()); w != "" {
		return "fedbayes: " + w + "\n"
	}
	return ""
}

// TestSlowKernelsNoted checks that a run on SimpleGo's own loops says so on standard error (test-fallback
// runs this package with FEDBAYES_BLAS=off), and that a run on OpenBLAS prints no such line.
func TestSlowKernelsNoted(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Training.Rounds, s.Training.LocalEpochs = 1, 1
	var notes bytes.Buffer
	old := notesOut
	notesOut = &notes
	defer func() { notesOut = old }()
	runQuiet(t, s, t.TempDir(), false)
	want := slowKernelsNote()
	if got := notes.String(); got != want {
		t.Fatalf("notes %q, want %q", got, want)
	}
	if blas := simplegoplus.BLASInUse(); blas == (want != "") {
		t.Fatalf("BLASInUse() = %v but the note is %q", blas, want)
	}
}
