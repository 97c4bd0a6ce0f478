package engine

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
)

// resumeChildEnv names the results directory a child process of TestResumeAfterKill runs into.
const resumeChildEnv = "FEDBAYES_ENGINE_RESUME_CHILD"

func resumeSpec() *Spec {
	s := digitsSpec()
	s.Training.Rounds = 6
	return s
}

// TestResumeAfterKill starts a run in a child process (this test binary), kills it with SIGKILL after
// its third round, resumes it here, and checks that the rows equal those of an uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	if dir := os.Getenv(resumeChildEnv); dir != "" {
		// The child: slow rounds down so that the parent can kill it mid-run.
		afterRoundHook = func(string, int64, int) { time.Sleep(300 * time.Millisecond) }
		_, err := Run(context.Background(), resumeSpec(), Options{Dir: dir, Progress: progress.Discard})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	requireDigits(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterKill$")
	cmd.Env = append(os.Environ(), resumeChildEnv+"="+dir)
	var childOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &childOut, &childOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(dir, results.RunName("digits", 3))
	rowsFile := filepath.Join(runDir, results.RowsFile)
	deadline := time.Now().Add(60 * time.Second)
	for {
		raw, _ := os.ReadFile(rowsFile)
		if bytes.Count(raw, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the child wrote no 3 rows in 60 s; its output:\n%s", childOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	if killed.Status.State != "" || len(killed.Rows) < 3 || len(killed.Rows) >= 6 {
		t.Fatalf("killed run: status %q, %d rows; want incomplete with 3 to 5 rows", killed.Status.State, len(killed.Rows))
	}
	sum := runQuiet(t, resumeSpec(), dir, true)
	if r := sum.Runs[0]; !r.Resumed || r.State != results.Completed {
		t.Fatalf("resumed run: %+v", r)
	}
	ref := runQuiet(t, resumeSpec(), t.TempDir(), false)
	got, err := results.ReadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := results.ReadRun(ref.Runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != len(want.Rows) {
		t.Fatalf("resumed run has %d rows, uninterrupted %d", len(got.Rows), len(want.Rows))
	}
	for i := range got.Rows {
		a, b := got.Rows[i], want.Rows[i]
		a.Time, b.Time = results.Timing{}, results.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d differs (killed after %d rows):\nresumed       %+v\nuninterrupted %+v", i, len(killed.Rows), a, b)
		}
	}
}
