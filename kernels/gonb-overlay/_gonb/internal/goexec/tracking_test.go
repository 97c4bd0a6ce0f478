package goexec

// fedbayes patch (kernels/gonb-overlay): the test of trackOnDisk (tracking.go).

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// queued returns the files queued for gopls (EnumerateUpdatedFiles empties the queue).
func queued(t *testing.T, s *State) []string {
	var files []string
	if err := s.EnumerateUpdatedFiles(func(p string) error { files = append(files, p); return nil }); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestAutoTrackQueuesNoWorkspaceFile checks what AutoTrack queues for gopls with a go.work that uses
// a module of two packages, as the fedbayes kernel's --go_work does with the checkout: none of the
// module's files (gopls loads them from disk; upstream queued each one, and the first Tab sent them
// all), while both folders are tracked; a file of it written afterwards is queued, and a file given
// to Track (%track) is queued at once, as upstream does.
func TestAutoTrackQueuesNoWorkspaceFile(t *testing.T) {
	module := t.TempDir()
	write := func(rel, text string) string {
		p := filepath.Join(module, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("a.go", "package m\n")
	sub := write("sub/b.go", "package sub\n")
	s := &State{TempDir: t.TempDir(), trackingInfo: newTrackingInfo()}
	if err := os.WriteFile(filepath.Join(s.TempDir, "go.work"), []byte("go 1.22\n\nuse (\n\t.\n\t"+module+"\n)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Untrack("...") })
	if err := s.AutoTrack(); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("AutoTrack queued %v for gopls, want none (gopls reads the workspace's files from disk)", got)
	}
	tracked := s.ListTracked()
	for _, dir := range []string{module, filepath.Dir(sub)} {
		if !slices.Contains(tracked, dir) {
			t.Errorf("%s is not tracked: %v", dir, tracked)
		}
	}

	// A change after tracking started reaches gopls (the watcher queues it).
	write("sub/b.go", "package sub\n\nconst B = 1\n")
	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for time.Now().Before(deadline) && !slices.Contains(got, sub) {
		time.Sleep(20 * time.Millisecond)
		got = append(got, queued(t, s)...)
	}
	if !slices.Contains(got, sub) {
		t.Errorf("writing %s queued %v, want it", sub, got)
	}

	// %track FILE queues the file, as upstream does.
	own := filepath.Join(t.TempDir(), "own.go")
	if err := os.WriteFile(own, []byte("package own\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Track(own); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, s); !slices.Equal(got, []string{own}) {
		t.Errorf("Track(%s) queued %v, want that file", own, got)
	}
}
