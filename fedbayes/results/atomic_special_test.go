//go:build unix

package results

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteFileAtomicRefusesSpecialFiles checks that a symlink, a named pipe, a device and a
// directory at the path are refused, naming what they are, and left as they were (the symlink's
// target unchanged, no temporary file left), while a regular file is replaced.
func TestWriteFileAtomicRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.csv")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{link, "it is a symbolic link"},
		{fifo, "it is a named pipe (FIFO)"},
		{sub, "it is a directory"},
	}
	if fi, err := os.Stat(os.DevNull); err == nil && fi.Mode()&os.ModeDevice != 0 {
		tests = append(tests, struct{ path, want string }{os.DevNull, "it is a device"})
	}
	for _, tc := range tests {
		err := WriteFileAtomic(tc.path, []byte("new"), 0o644)
		if err == nil || !strings.Contains(err.Error(), tc.path+": "+tc.want) {
			t.Errorf("%s: error %v, want %q", tc.path, err, tc.want)
		}
	}
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target holds %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isTemp(e.Name()) {
			t.Errorf("temporary file %s left", e.Name())
		}
	}
	if err := WriteFileAtomic(target, []byte("new"), 0o644); err != nil {
		t.Errorf("a regular file: %v", err)
	}
}
