package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempMarker is part of the name of every temporary file this package writes; stale ones (left by
// a killed process) are removed by Resume and ignored by readers.
const tempMarker = ".tmp-"

// WriteFileAtomic writes data to path so that readers see either the old file or the complete
// new one, never a part: it writes a temporary file in the same directory, syncs it to disk,
// renames it over path and syncs the directory. No temporary file is left behind on error. A path
// that holds something other than a regular file (a symlink, a named pipe, a device, a socket, a
// directory) is refused and left as it is (checkReplaceable): the rename would replace it with a
// regular file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("results: write %q: not a file path", path)
	}
	if err := checkReplaceable(path); err != nil {
		return err
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+tempMarker+"*")
	if err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("results: write %s: sync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// checkReplaceable refuses a path that exists as anything but a regular file (os.Lstat: a symlink
// is not followed), naming what it is; a missing path or a regular file passes.
func checkReplaceable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // a missing path is created; another error is the write's
	}
	m := fi.Mode()
	what := "not a regular file"
	switch {
	case m&os.ModeSymlink != 0:
		what = "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeDevice != 0:
		what = "a device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("results: write %s: it is %s, which writing would replace with a regular file; give the path of a regular file (or a new one)", path, what)
}

// syncDir makes a rename or a new file in dir durable. Some file systems do not support syncing a
// directory; that only weakens durability after a power loss, so the error is ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// isTemp reports whether a file name is one of this package's temporary files.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMarker)
}

// removeStaleTemps deletes temporary files a killed process left in dir.
func removeStaleTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() && isTemp(e.Name()) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("results: removing stale temporary file: %w", err)
			}
		}
	}
	return nil
}

// RemoveAbandonedTemps removes the temporary files that WriteFileAtomic(path, ...) left behind when its
// process was killed before the rename, if they were last modified more than age ago: a younger one
// may belong to a writer that is still running in another process. It returns the files removed.
// Run directories need no such call (Resume cleans them); it is for files written into a shared
// directory, such as the engine's figures.json in the results root.
func RemoveAbandonedTemps(path string, age time.Duration) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	prefix := "." + base + tempMarker
	var removed []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) <= age {
			continue // gone meanwhile, or maybe still being written
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return removed, fmt.Errorf("results: removing stale temporary file: %w", err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}
