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

// TestInstallWidensRestrictiveModes installs, makes the manifest, a data file and a folder private
// (as an older install or a private umask left them), and checks that a second install, which
// finds everything installed, makes them readable by every user again (0644 files, 0755 folders),
// and leaves a wider mode as it is.
func TestInstallWidensRestrictiveModes(t *testing.T) {
	debs := fakeDebs(t)
	dir := filepath.Join(t.TempDir(), "data")
	calls := 0
	in := fakeInstaller(debs, &calls, "")
	if err := in.install(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path      string
		set, want os.FileMode
	}{
		{filepath.Join(dir, ManifestFile), 0o600, 0o644},
		{filepath.Join(dir, "fashion-mnist", "train-images-idx3-ubyte.gz"), 0o600, 0o644},
		{filepath.Join(dir, SklearnDir, "iris.csv"), 0o640, 0o644},
		{filepath.Join(dir, SklearnDir, "wine_data.csv"), 0o664, 0o664},
		{filepath.Join(dir, SklearnDir), 0o700, 0o755},
	}
	for _, tc := range tests {
		if err := os.Chmod(tc.path, tc.set); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.install(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("the second install fetched again (%d fetches)", calls)
	}
	for _, tc := range tests {
		fi, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("%s: mode %v after a second install (was %v), want %v", tc.path, got, tc.set, tc.want)
		}
	}
}
