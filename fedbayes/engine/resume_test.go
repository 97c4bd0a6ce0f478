package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
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

// pviResumeSpec is a partitioned-VI run of 100 clients, 10 sampled a round: the sites of clients
// that were not sampled must survive the kill.
func pviResumeSpec() *Spec {
	s := resumeSpec()
	s.Dataset.Subsample = 1500
	s.Partition = PartitionSpec{Method: "iid", Clients: 100, Participation: 0.1}
	s.Aggregation = AggregationSpec{Rule: "pvi"}
	s.Training.VarianceOptimizer, s.Training.VarianceLR = "adam", 0.01
	return s
}

// pviSequentialResumeSpec is pviResumeSpec with partitioned VI's sequential schedule: each sampled
// client trains against the global the clients before it left.
func pviSequentialResumeSpec() *Spec {
	s := pviResumeSpec()
	s.Aggregation.Options = json.RawMessage(`{"schedule": "sequential"}`)
	s.Training.Mode = "sequential"
	return s
}

// resumeCases are the runs TestResumeAfterKill kills and resumes, by name.
var resumeCases = map[string]func() *Spec{"gaa": resumeSpec, "pvi": pviResumeSpec, "pvi-sequential": pviSequentialResumeSpec}

// TestResumeAfterKill starts each run of resumeCases in a child process (this test binary), kills it
// with SIGKILL after its third round, resumes it here, and checks that the rows equal those of an
// uninterrupted run, and so does the final checkpoint (the global model and a stateful strategy's
// state, partitioned VI's sites), bit for bit.
func TestResumeAfterKill(t *testing.T) {
	if child := os.Getenv(resumeChildEnv); child != "" {
		// The child: slow rounds down so that the parent can kill it mid-run.
		name, dir, _ := strings.Cut(child, "=")
		slow := func(string, int64, int) { time.Sleep(300 * time.Millisecond) }
		_, err := Run(context.Background(), resumeCases[name](), Options{Dir: dir, Progress: progress.Discard, AfterRound: slow})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	requireDigits(t)
	for _, name := range []string{"gaa", "pvi", "pvi-sequential"} {
		t.Run(name, func(t *testing.T) { resumeAfterKill(t, name, resumeCases[name]) })
	}
}

func resumeAfterKill(t *testing.T, name string, spec func() *Spec) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterKill$")
	cmd.Env = append(os.Environ(), resumeChildEnv+"="+name+"="+dir)
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
	sum := runQuiet(t, spec(), dir, true)
	if r := sum.Runs[0]; !r.Resumed || r.State != results.Completed {
		t.Fatalf("resumed run: %+v", r)
	}
	ref := runQuiet(t, spec(), t.TempDir(), false)
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
		// The posterior health is part of the rows compared: its reference, the initial model, is
		// rebuilt from the seed on resume.
		if _, ok := a.Metrics[results.VarLocalMoved]; !ok {
			t.Errorf("row %d of the resumed run records no posterior health", i)
		}
		a.Time, b.Time = results.Timing{}, results.Timing{}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d differs (killed after %d rows):\nresumed       %+v\nuninterrupted %+v", i, len(killed.Rows), a, b)
		}
	}
	gc, ok, _, err := results.LatestCheckpoint(runDir)
	if err != nil || !ok {
		t.Fatalf("the resumed run's checkpoint: %v %v", ok, err)
	}
	wc, ok, _, err := results.LatestCheckpoint(ref.Runs[0].Dir)
	if err != nil || !ok {
		t.Fatalf("the uninterrupted run's checkpoint: %v %v", ok, err)
	}
	if !bytes.Equal(gc.Blob, wc.Blob) {
		t.Errorf("the final checkpoints differ (%d and %d bytes)", len(gc.Blob), len(wc.Blob))
	}
	if _, _, state, err := decodeCheckpoint(gc.Blob); err != nil || strings.HasPrefix(name, "pvi") != (state != nil) {
		t.Errorf("%s's checkpoint: strategy state of %d bytes (%v)", name, len(state), err)
	}
}

// TestResumeAfterTheLastCheckpoint is a run killed after its final checkpoint, before its status, and
// between that checkpoint's rename and the pruning of the previous one: the resume reports the real
// last round and its metrics (not round 0 without metrics), completes the run, and removes the older
// checkpoint left behind. A finished run whose rows were then damaged is refused, not reported done.
func TestResumeAfterTheLastCheckpoint(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	first := runQuiet(t, digitsSpec(), dir, false)
	runDir := first.Runs[0].Dir
	ckpts := filepath.Join(runDir, results.CheckpointsDir)
	last := filepath.Join(ckpts, "round-000000002.ckpt")
	raw, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	// An older checkpoint (a copy is enough: Resume never reads it) and no status.
	if err := os.WriteFile(filepath.Join(ckpts, "round-000000001.ckpt"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(runDir, results.StatusFile)); err != nil {
		t.Fatal(err)
	}
	sum := runQuiet(t, digitsSpec(), dir, true)
	r := sum.Runs[0]
	if r.State != results.Completed || r.Round != 2 || !r.Resumed {
		t.Fatalf("resumed run: state %q round %d resumed %v; want completed at round 2, resumed", r.State, r.Round, r.Resumed)
	}
	if !reflect.DeepEqual(r.Metrics, first.Runs[0].Metrics) || len(r.Metrics) == 0 {
		t.Errorf("resumed run reports metrics %v, want the last row's %v", r.Metrics, first.Runs[0].Metrics)
	}
	entries, err := os.ReadDir(ckpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(last) {
		t.Errorf("checkpoints after resume: %v, want only %s", entries, filepath.Base(last))
	}

	// Drop the final row of the finished run: resuming refuses it instead of calling it done.
	rowsPath := filepath.Join(runDir, results.RowsFile)
	rows, err := os.ReadFile(rowsPath)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.IndexByte(rows, '\n') + 1
	if err := os.WriteFile(rowsPath, rows[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), digitsSpec(), Options{Dir: dir, Resume: true, Progress: progress.Discard, NoFigures: true})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("rows cannot be trusted")) {
		t.Errorf("resume of a damaged finished run: %v, want a refusal naming the rows", err)
	}
}

func TestExpectedRounds(t *testing.T) {
	meta := func(spec string) results.Meta { return results.Meta{Spec: []byte(spec)} }
	tests := []struct {
		spec   string
		rounds []int
		ok     bool
	}{
		{`{"training":{"rounds":5},"evaluation":{"every":2}}`, []int{2, 4, 5}, true},
		{`{"training":{"rounds":4},"evaluation":{"every":2}}`, []int{2, 4}, true},
		{`{"training":{"rounds":3}}`, []int{1, 2, 3}, true},
		{`{"training":{"rounds":1},"evaluation":{"every":10}}`, []int{1}, true},
		{`{"spec":{"rounds":3}}`, nil, false},
		{`{"training":{}}`, nil, false},
		{`[1]`, nil, false},
	}
	for _, tc := range tests {
		got, ok := ExpectedRounds(meta(tc.spec))
		if ok != tc.ok || !reflect.DeepEqual(got, tc.rounds) {
			t.Errorf("ExpectedRounds(%s) = %v, %v; want %v, %v", tc.spec, got, ok, tc.rounds, tc.ok)
		}
	}
}
