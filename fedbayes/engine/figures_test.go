package engine

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFiguresRemovesAKilledWritersTemp: a kill before figures.json's rename leaves a temporary file
// in the results root; the next figures write removes it (a recent one, maybe another process's, stays).
func TestFiguresRemovesAKilledWritersTemp(t *testing.T) {
	requireDigits(t)
	dir := t.TempDir()
	runQuiet(t, digitsSpec(), dir, false)
	stale := filepath.Join(dir, ".figures.json.tmp-111")
	fresh := filepath.Join(dir, ".figures.json.tmp-222")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte(`{"version":`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}
	path, skipped, err := writeFigures(dir, "t")
	if err != nil || path != filepath.Join(dir, FiguresFile) || len(skipped) != 0 {
		t.Fatalf("writeFigures: %q, skipped %v, %v", path, skipped, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary file not removed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("recent temporary file removed: %v", err)
	}
}
