package results

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	for _, content := range []string{"first", "second, longer content", ""} {
		if err := WriteFileAtomic(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("content %q, want %q", got, content)
		}
		fi, _ := os.Stat(path)
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", fi.Mode().Perm())
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	// Failures leave nothing behind either: the target is a directory, or the directory is missing.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, WriteFileAtomic(filepath.Join(dir, "sub"), []byte("x"), 0o644), "sub")
	wantErr(t, WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644), "missing")
	wantErr(t, WriteFileAtomic(dir+string(os.PathSeparator), []byte("x"), 0o644), "not a file path")
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left after failures: %v", tmp)
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{".run.json.tmp-123", "keep.json", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeStaleTemps(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != ".hidden" || names[1] != "keep.json" {
		t.Errorf("left %v, want [.hidden keep.json]", names)
	}
}

func TestRemoveAbandonedTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "figures.json")
	old := filepath.Join(dir, ".figures.json"+tempMarker+"123")
	fresh := filepath.Join(dir, ".figures.json"+tempMarker+"456")
	other := filepath.Join(dir, ".table.md"+tempMarker+"789")
	for _, p := range []string{old, fresh, other, path} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-time.Hour)
	for _, p := range []string{old, other} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveAbandonedTemps(path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != old {
		t.Errorf("removed %v, want only %s", removed, old)
	}
	for p, want := range map[string]bool{old: false, fresh: true, other: true, path: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if _, err := RemoveAbandonedTemps(filepath.Join(dir, "missing", "f.json"), time.Minute); err == nil {
		t.Error("no error for a missing directory")
	}
}
