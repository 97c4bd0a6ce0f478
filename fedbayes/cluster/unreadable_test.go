package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/results"
)

// TestCheckUnreadableRun checks that a run folder whose claim cannot be read (a file in the folder's
// place, a claim that is a symlink loop, a folder without read permission where the test is not
// root) is reported as unreadable with the reason, never as running by pid 0.
func TestCheckUnreadableRun(t *testing.T) {
	dir := t.TempDir()
	spec := sweep(t, 3)
	refs, err := engine.RunList(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, refs[0].Name), []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, refs[1].Name)
	if err := os.Mkdir(loop, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(results.ClaimFile, filepath.Join(loop, results.ClaimFile)); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{0: "not a directory", 1: "too many levels of symbolic links"}
	if os.Getuid() != 0 {
		closed := filepath.Join(dir, refs[2].Name)
		if err := os.Mkdir(closed, 0o000); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(closed, 0o755)
		want[2] = "permission denied"
	}
	rep, err := Check(dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		rs := rep.Runs[i]
		if rs.State != Failed || !strings.Contains(rs.Detail, "is unreadable") || !strings.Contains(rs.Detail, w) {
			t.Errorf("run %s: %s (%s), want failed as unreadable with %q", rs.Run.Name, rs.State, rs.Detail, w)
		}
	}
	if rep.Count(Running) != 0 {
		t.Errorf("%d running: %s", rep.Count(Running), rep.Summary())
	}
}
