package data

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestInstallWritesReadableFiles installs under a private umask (077) and checks that the manifest,
// every data file and every folder, the data folder that install made included, are readable by other users (issue 36: manifest.json was written
// 0600, so on a shared data folder other users got "not installed" or "CORRUPT").
func TestInstallWritesReadableFiles(t *testing.T) {
	debs := fakeDebs(t)
	dir := filepath.Join(t.TempDir(), "data")
	old := syscall.Umask(0o077)
	calls := 0
	err := fakeInstaller(debs, &calls, "").install(dir, io.Discard)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o644)
		if d.IsDir() {
			want = 0o755
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Errorf("checked %d files and folders; the install wrote more", seen)
	}
}
