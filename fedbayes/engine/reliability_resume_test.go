package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
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
	// A finished run resumed again notes nothing.
	notes.Reset()
	runQuiet(t, s, dir, true)
	if notes.Len() != 0 {
		t.Errorf("notes on a plain resume:\n%s", notes.String())
	}
}
