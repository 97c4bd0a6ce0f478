package results

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeClaimFile writes a claim file for owner into dir with the given heartbeat age.
func writeClaimFile(t *testing.T, dir string, o ClaimOwner, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ClaimFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestClaimStates(t *testing.T) {
	me := selfOwner()
	live := me
	live.Token = "other-process"
	live.PID = os.Getppid() // alive: the process that started the test
	live.Start = 0
	dead := me
	dead.PID, dead.Start, dead.Token = deadPID(t), 0, "dead"
	reused := live
	reused.Start = 1 // the live parent's pid, but another start time: a reused pid
	reboot := me
	reboot.BootID, reboot.Token = "another-boot", "reboot"
	remote := live
	remote.Host, remote.PID = "some-other-host", 1
	tests := []struct {
		name     string
		owner    ClaimOwner
		age      time.Duration
		wantBusy bool
		took     string
	}{
		{"live owner on this host", live, time.Second, true, ""},
		{"dead owner on this host", dead, time.Second, false, "is dead"},
		{"reused pid", reused, time.Second, false, "another process"},
		{"host rebooted", reboot, time.Second, false, "rebooted"},
		{"fresh heartbeat on another host", remote, 5 * time.Second, true, ""},
		{"stale heartbeat on another host", remote, claimStale + time.Minute, false, "no heartbeat for"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run-seed1")
			writeClaimFile(t, dir, tc.owner, tc.age)
			st, err := ReadClaimState(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Held || st.Live != tc.wantBusy {
				t.Fatalf("state %+v, want held and live=%v", st, tc.wantBusy)
			}
			c, err := ClaimRun(dir)
			if tc.wantBusy {
				var ce *ClaimedError
				if !errors.As(err, &ce) {
					t.Fatalf("ClaimRun = %v, want a ClaimedError", err)
				}
				for _, want := range []string{dir, tc.owner.Host, "pid "} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not name %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("stale claim not taken over: %v", err)
			}
			defer c.Release()
			if !strings.Contains(c.TookOver, tc.took) || !strings.Contains(c.TookOver, dir) {
				t.Errorf("TookOver = %q, want it to say %q and name the run", c.TookOver, tc.took)
			}
			cur, _, err := readClaim(dir)
			if err != nil || cur.Token != c.Owner().Token {
				t.Errorf("claim file %+v (%v) is not ours", cur, err)
			}
		})
	}
}

func TestClaimExclusiveAndRelease(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-seed1")
	c, err := ClaimRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimRun(dir); err == nil {
		t.Fatal("a second claim in the same process succeeded")
	}
	// The claim is not lent implicitly: Create and Resume of a claimed directory take their own
	// claim, which this process holds already.
	var ce *ClaimedError
	if _, err := Create(dir, testMeta(t, "run", nil, 1)); !errors.As(err, &ce) {
		t.Fatalf("Create of a directory this process claimed = %v, want a ClaimedError", err)
	}
	// Claim.Create writes under the claim, and leaves it to its holder.
	w, err := c.Create(testMeta(t, "run", nil, 1))
	if err != nil {
		t.Fatalf("Create under a held claim: %v", err)
	}
	if err := w.Complete(0); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); !st.Live {
		t.Errorf("the writer released a claim it did not take: %+v", st)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil {
		t.Errorf("second release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ClaimFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("claim file left after release: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isClaimFile(e.Name()) {
			t.Errorf("claim file %s left behind", e.Name())
		}
	}
}

func TestWriterTakesAndReleasesClaim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-seed1")
	w, err := Create(dir, testMeta(t, "run", nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); !st.Live {
		t.Fatalf("Create took no claim: %+v", st)
	}
	// The live writer's temporary file survives a Resume attempt by another writer.
	tmp := filepath.Join(dir, "."+StatusFile+tempMarker+"live")
	if err := os.WriteFile(tmp, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Resume(dir, nil); err == nil || !strings.Contains(err.Error(), "being written by") {
		t.Fatalf("Resume of a run being written = %v, want a claimed error", err)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("Resume deleted the live writer's temporary file: %v", err)
	}
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); st.Held {
		t.Fatalf("Close left the claim: %+v", st)
	}
	w, _, err = Resume(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Complete(0); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); st.Held {
		t.Fatalf("Complete left the claim: %+v", st)
	}
}

// TestClaimWritesExplicitly checks the claim's own Create and Resume: the holder's Writer leaves
// the claim to it across a Close and a Resume, and a released or lost claim writes nothing.
func TestClaimWritesExplicitly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-seed1")
	meta := testMeta(t, "run", nil, 1)
	c, err := ClaimRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(accRow(1, 0.5, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); !st.Live {
		t.Fatalf("Close released the holder's claim: %+v", st)
	}
	if _, _, err := Resume(dir, &meta); err == nil || !strings.Contains(err.Error(), "being written by") {
		t.Fatalf("Resume of a directory this process claimed = %v, want a claimed error", err)
	}
	w, _, err = c.Resume(&meta)
	if err != nil {
		t.Fatalf("Resume under the held claim: %v", err)
	}
	if err := w.Complete(1); err != nil {
		t.Fatal(err)
	}
	if st, _ := ReadClaimState(dir); !st.Live {
		t.Fatalf("Complete released the holder's claim: %+v", st)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func() error{
		"Create": func() error { _, err := c.Create(meta); return err },
		"Resume": func() error { _, _, err := c.Resume(&meta); return err },
	} {
		if err := write(); err == nil || !strings.Contains(err.Error(), "released") {
			t.Errorf("%s under a released claim = %v, want an error saying released", name, err)
		}
	}

	// A claim another process took over writes nothing, and its directory is left as it was.
	dir2 := filepath.Join(t.TempDir(), "run-seed2")
	c2, err := ClaimRun(dir2)
	if err != nil {
		t.Fatal(err)
	}
	other := selfOwner()
	other.Token = "thief"
	writeClaimFile(t, dir2, other, 0)
	if _, err := c2.Create(meta); err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Errorf("Create under a lost claim = %v, want an error saying taken over", err)
	}
	if _, err := os.Stat(filepath.Join(dir2, MetaFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create under a lost claim wrote %s: %v", MetaFile, err)
	}
	_ = c2.Release()
}

func TestClaimLost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run-seed1")
	w, err := Create(dir, testMeta(t, "run", nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	// Another process takes the claim over (as after a wrongly judged stale claim).
	other := selfOwner()
	other.Token = "thief"
	writeClaimFile(t, dir, other, 0)
	// The next write notices at once, without waiting for a heartbeat.
	err = w.Append(accRow(1, 0.5, 1))
	if err == nil || !strings.Contains(err.Error(), "taken over") {
		t.Fatalf("Append after losing the claim = %v, want an error", err)
	}
	_ = w.Close()
	if cur, _, err := readClaim(dir); err != nil || cur.Token != "thief" {
		t.Errorf("the loser removed the new owner's claim: %+v %v", cur, err)
	}
}

func TestClaimHeartbeat(t *testing.T) {
	defer func(h time.Duration) { claimHeartbeat = h }(claimHeartbeat)
	claimHeartbeat = 10 * time.Millisecond
	dir := filepath.Join(t.TempDir(), "run-seed1")
	c, err := ClaimRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	path := filepath.Join(dir, ClaimFile)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) < time.Minute {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the heartbeat did not refresh the claim's modification time")
}
