package results

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// toyEngine is a deterministic stand-in for the federated engine: its whole state is one
// number, advanced each round; it evaluates on some rounds and checkpoints every second round.
type toyEngine struct {
	state uint64
}

const toyRounds = 9

func (e *toyEngine) step() { e.state = e.state*6364136223846793005 + 1442695040888963407 }

func (e *toyEngine) evaluated(round int) bool { return round%3 != 2 }

func (e *toyEngine) row(round int) Row {
	x := float64(e.state>>11) / (1 << 53)
	return Row{Round: round, Metrics: map[string]float64{Accuracy: x, NLL: 1 - x},
		Time: Timing{LocalSeconds: float64(round)}, BytesSent: int64(round) * 100}
}

func (e *toyEngine) blob() []byte { return binary.LittleEndian.AppendUint64(nil, e.state) }

// run plays rounds from..toyRounds; if killAt > 0 it stops abruptly during round killAt, after
// the row (phase "row") or after the checkpoint (phase "checkpoint"), without a status.
func (e *toyEngine) run(t *testing.T, w *Writer, from, killAt int, phase string) {
	t.Helper()
	for r := from; r <= toyRounds; r++ {
		e.step()
		if e.evaluated(r) {
			if err := w.Append(e.row(r)); err != nil {
				t.Fatal(err)
			}
		}
		if r == killAt && phase == "row" {
			return
		}
		if r%2 == 0 {
			if err := w.SaveCheckpoint(r, e.blob()); err != nil {
				t.Fatal(err)
			}
		}
		if r == killAt {
			return
		}
	}
	if err := w.Complete(toyRounds); err != nil {
		t.Fatal(err)
	}
}

// kill abandons a writer the way a killed process does: the file is closed, nothing else.
// kill leaves the run as a killed process would: the rows file closed where it was, and the claim
// file left behind, naming a dead process.
func kill(w *Writer) {
	_ = w.f.Close()
	if w.claim != nil {
		dieHolding(w.claim)
	}
}

// dieHolding stops the claim's heartbeat and rewrites its file as the claim of a dead process on this
// host, as a kill -9 of its holder leaves it.
func dieHolding(c *Claim) {
	c.mu.Lock()
	c.released = true
	c.mu.Unlock()
	close(c.stop)
	<-c.done
	cmd := exec.Command("true")
	_ = cmd.Run()
	o := c.owner
	o.PID, o.Start = cmd.Process.Pid, 0
	data, _ := json.Marshal(o)
	_ = os.WriteFile(filepath.Join(c.dir, ClaimFile), data, 0o644)
}

func TestResumeEndsWithTheSameRows(t *testing.T) {
	root := t.TempDir()
	meta := testMeta(t, "toy", map[string]string{"rule": "eaa"}, 7)
	ref := filepath.Join(root, "reference")
	w, err := Create(ref, meta)
	if err != nil {
		t.Fatal(err)
	}
	(&toyEngine{state: 7}).run(t, w, 1, 0, "")
	want, err := os.ReadFile(filepath.Join(ref, RowsFile))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		killAt      int
		phase       string
		torn        string // bytes appended to rounds.jsonl after the kill
		stale       bool   // leave a stale temporary file behind
		wantRound   int    // checkpoint resumed from; -1 for none
		wantDropped int
	}{
		{killAt: 1, phase: "row", wantRound: -1, wantDropped: 1},
		{killAt: 2, phase: "checkpoint", wantRound: 2, wantDropped: 0},
		{killAt: 5, phase: "row", torn: `{"round":6,"metrics":{"accu`, wantRound: 4, wantDropped: 0}, // round 5 is not evaluated
		{killAt: 6, phase: "row", stale: true, wantRound: 4, wantDropped: 1},
		{killAt: 7, phase: "row", torn: "\x00\x00", wantRound: 6, wantDropped: 1},
		{killAt: 8, phase: "checkpoint", torn: "{", stale: true, wantRound: 8, wantDropped: 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("kill at %d after %s", tc.killAt, tc.phase), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			w, err := Create(dir, meta)
			if err != nil {
				t.Fatal(err)
			}
			(&toyEngine{state: 7}).run(t, w, 1, tc.killAt, tc.phase)
			kill(w)
			if tc.torn != "" {
				f, err := os.OpenFile(filepath.Join(dir, RowsFile), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.WriteString(tc.torn)
				_ = f.Close()
			}
			if tc.stale {
				if err := os.WriteFile(filepath.Join(dir, "."+StatusFile+tempMarker+"99"), []byte("{"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The half-done run is not loaded as a result.
			if _, skipped, err := Load(dir); err != nil || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "incomplete") {
				t.Errorf("load of the killed run: skipped %v, err %v", skipped, err)
			}

			w, rp, err := Resume(dir, &meta)
			if err != nil {
				t.Fatal(err)
			}
			e := &toyEngine{state: 7}
			from := 1
			if tc.wantRound < 0 {
				if rp.HasCheckpoint {
					t.Fatalf("resumed from round %d, want from the start", rp.Checkpoint.Round)
				}
			} else {
				if !rp.HasCheckpoint || rp.Checkpoint.Round != tc.wantRound {
					t.Fatalf("resume point %+v, want round %d", rp, tc.wantRound)
				}
				e.state = binary.LittleEndian.Uint64(rp.Checkpoint.Blob)
				from = rp.Checkpoint.Round + 1
			}
			if rp.DroppedRows != tc.wantDropped || rp.TornBytes != len(tc.torn) {
				t.Errorf("dropped %d rows, %d torn bytes; want %d, %d", rp.DroppedRows, rp.TornBytes, tc.wantDropped, len(tc.torn))
			}
			e.run(t, w, from, 0, "")
			got, err := os.ReadFile(filepath.Join(dir, RowsFile))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("resumed rows differ from the uninterrupted run:\n got %s\nwant %s", got, want)
			}
			if tmp := tempFiles(t, dir); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			runs, skipped, err := Load(dir)
			if err != nil || len(runs) != 1 || len(skipped) != 0 {
				t.Errorf("load after resume: %d runs, skipped %v, err %v", len(runs), skipped, err)
			}
		})
	}
}

func TestResumeRefuses(t *testing.T) {
	root := t.TempDir()
	meta := testMeta(t, "s", nil, 1)
	done := writeRun(t, root, "s", nil, 1, []Row{accRow(1, 0.5, 1)}, Completed)
	_, _, err := Resume(done, nil)
	wantErr(t, err, "already completed", "nothing to resume")
	div := writeRun(t, root, "d", nil, 1, []Row{accRow(1, 0.5, 1)}, Diverged)
	_, _, err = Resume(div, nil)
	wantErr(t, err, "already diverged at round 1: NaN loss")
	_, _, err = Resume(filepath.Join(root, "missing"), nil)
	wantErr(t, err, "missing")

	// A different experiment cannot continue a run.
	inc := writeRun(t, root, "s", nil, 2, []Row{accRow(1, 0.5, 1)}, "")
	other := meta
	other.Seed = 2
	other.Spec = []byte(`{"rounds": 6}`)
	_, _, err = Resume(inc, &other)
	wantErr(t, err, "different experiment", "specs differ")
	other = meta
	_, _, err = Resume(inc, &other)
	wantErr(t, err, "seed: 2 in the recorded run, 1 now")

	// Rows the checkpoint recorded went missing: refuse rather than produce a short record.
	lost := filepath.Join(root, "lost")
	w, err := Create(lost, meta)
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 3; r++ {
		if err := w.Append(accRow(r, 0.5, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.SaveCheckpoint(3, []byte("x")); err != nil {
		t.Fatal(err)
	}
	kill(w)
	data, _ := os.ReadFile(filepath.Join(lost, RowsFile))
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(filepath.Join(lost, RowsFile), []byte(lines[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Resume(lost, &meta)
	wantErr(t, err, "holds 1 rows up to round 1", "recorded 3 rows up to round 3", "lost data")
}

func TestResumeFailedRunAndBadCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	meta := testMeta(t, "s", nil, 1)
	w, err := Create(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetKeepCheckpoints(2); err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 4; r++ {
		if err := w.Append(accRow(r, 0.5, 1)); err != nil {
			t.Fatal(err)
		}
		if err := w.SaveCheckpoint(r, []byte{byte(r)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Fail(4, errors.New("out of memory")); err != nil {
		t.Fatal(err)
	}
	// Damage the newest checkpoint: resume falls back to round 3 and drops row 4.
	p := filepath.Join(dir, CheckpointsDir, checkpointName(4))
	if err := os.WriteFile(p, []byte(checkpointMagic+"{"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, rp, err := Resume(dir, &meta)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if rp.Checkpoint.Round != 3 || rp.DroppedRows != 1 || len(rp.Notes) != 2 {
		t.Errorf("resume point %+v", rp)
	}
	if !strings.Contains(strings.Join(rp.Notes, "; "), "failed at round 4: out of memory") {
		t.Errorf("notes %q do not mention the failed attempt", rp.Notes)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("invalid checkpoint not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, StatusFile)); !os.IsNotExist(err) {
		t.Errorf("failed status not removed: %v", err)
	}
	if err := w.Append(accRow(4, 0.6, 1)); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRepairsLeftovers: a last row that lost only its newline is kept (and gets its newline
// back before new rows), and an older checkpoint that a kill before pruning left behind is removed.
func TestResumeRepairsLeftovers(t *testing.T) {
	meta := testMeta(t, "toy", nil, 7)
	ref := filepath.Join(t.TempDir(), "reference")
	w, err := Create(ref, meta)
	if err != nil {
		t.Fatal(err)
	}
	(&toyEngine{state: 7}).run(t, w, 1, 0, "")
	want, err := os.ReadFile(filepath.Join(ref, RowsFile))
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "run")
	if w, err = Create(dir, meta); err != nil {
		t.Fatal(err)
	}
	(&toyEngine{state: 7}).run(t, w, 1, 4, "checkpoint") // rows 1, 3, 4; checkpoint 4
	kill(w)
	rowsPath := filepath.Join(dir, RowsFile)
	data, err := os.ReadFile(rowsPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rowsPath, bytes.TrimSuffix(data, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, CheckpointsDir, checkpointName(2))
	if err := os.WriteFile(old, []byte("an older checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, rp, err := Resume(dir, &meta)
	if err != nil {
		t.Fatal(err)
	}
	if !rp.HasCheckpoint || rp.Checkpoint.Round != 4 || rp.DroppedRows != 0 || rp.TornBytes != 0 {
		t.Fatalf("resume point %+v, want checkpoint 4, nothing dropped", rp)
	}
	if rp.LastRow == nil || rp.LastRow.Round != 4 {
		t.Errorf("last row %+v, want round 4", rp.LastRow)
	}
	if !strings.Contains(strings.Join(rp.Notes, "; "), "removed 1 older checkpoint") {
		t.Errorf("notes %q do not mention the pruned checkpoint", rp.Notes)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("older checkpoint not removed: %v", err)
	}
	e := &toyEngine{state: binary.LittleEndian.Uint64(rp.Checkpoint.Blob)}
	e.run(t, w, 5, 0, "")
	got, err := os.ReadFile(rowsPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("resumed rows differ from the uninterrupted run:\n got %s\nwant %s", got, want)
	}
}
