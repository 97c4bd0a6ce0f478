package results

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// recordFiles are the files of a run that a record keeps: what the run computed and how, without
// its checkpoints (which only serve to resume a run that is not finished).
var recordFiles = []string{MetaFile, RowsFile, StatusFile}

// maxRecordFile bounds one file read back from a record archive, so that a corrupt or hostile archive
// cannot fill the memory or the disk.
const maxRecordFile = 64 << 20

// PackRecords writes the records of the finished runs in dirs (completed or diverged: each has a
// status.json) to w as a gzip-compressed tar archive: for each run its run.json, rounds.jsonl and
// status.json under the run's path relative to root, without checkpoints. The archive is
// deterministic (runs in name order, fixed times and modes), so packing the same runs again gives the
// same bytes. Runs without a status (still running, or interrupted) are left out; a run that failed
// is left out too, as Load leaves it out. It returns the number of runs packed.
func PackRecords(w io.Writer, root string, dirs []string) (int, error) {
	type entry struct {
		name string // slash-separated path inside the archive
		dir  string
	}
	var entries []entry
	for _, d := range dirs {
		rel, err := filepath.Rel(root, d)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			return 0, fmt.Errorf("results: pack records: run %s is not under %s", d, root)
		}
		st, ok, err := readStatus(d)
		if err != nil {
			return 0, fmt.Errorf("results: pack records: %w", err)
		}
		if !ok || st.State == Failed {
			continue
		}
		entries = append(entries, entry{name: filepath.ToSlash(rel), dir: d})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return 0, err
	}
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0).UTC()
	for _, e := range entries {
		for _, f := range recordFiles {
			data, err := os.ReadFile(filepath.Join(e.dir, f))
			if errors.Is(err, os.ErrNotExist) && f == RowsFile {
				continue // a run that diverged before its first evaluated round has no rows
			}
			if err != nil {
				return 0, fmt.Errorf("results: pack records: %w", err)
			}
			hdr := &tar.Header{Name: e.name + "/" + f, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return 0, fmt.Errorf("results: pack records: %w", err)
			}
			if _, err := tw.Write(data); err != nil {
				return 0, fmt.Errorf("results: pack records: %w", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return 0, fmt.Errorf("results: pack records: %w", err)
	}
	if err := gz.Close(); err != nil {
		return 0, fmt.Errorf("results: pack records: %w", err)
	}
	return len(entries), nil
}

// UnpackResult counts what UnpackRecords did.
type UnpackResult struct {
	// Added is the number of runs written into the results directory.
	Added int
	// Kept is the number of runs left as they were because the directory already had them (a run
	// found locally, finished or not, wins over its record).
	Kept int
	// Runs are the paths of every run the archive holds (added or kept), relative to the root,
	// slash-separated, in order.
	Runs []string
}

// UnpackRecords reads an archive written by PackRecords and writes each run it holds into root,
// unless root already has a run of that name. Each run is checked (its run.json, rows and status read
// back as Load reads them) in a temporary directory under root and then renamed into place, so a
// reader never sees a part of a run and an error leaves nothing behind. An archive entry that is not
// one of a run's three record files, or whose path leaves root, is an error naming the entry; so is
// a corrupt archive. name is the archive's name for the messages.
func UnpackRecords(r io.Reader, name, root string) (UnpackResult, error) {
	var res UnpackResult
	runs, err := readRecords(r, name)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return res, fmt.Errorf("results: unpack %s: %w", name, err)
	}
	names := make([]string, 0, len(runs))
	for n := range runs {
		names = append(names, n)
	}
	sort.Strings(names)
	res.Runs = names
	for _, n := range names {
		dst := filepath.Join(root, filepath.FromSlash(n))
		if _, err := os.Stat(dst); err == nil {
			res.Kept++
			continue
		}
		if err := placeRun(dst, runs[n]); err != nil {
			return res, fmt.Errorf("results: unpack %s: run %s: %w", name, n, err)
		}
		res.Added++
	}
	return res, nil
}

// readRecords reads every run's files from the archive, by run path, checking the entries' names.
func readRecords(r io.Reader, name string) (map[string]map[string][]byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("results: unpack %s: not a gzip archive: %w", name, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	runs := map[string]map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("results: unpack %s: corrupt archive: %w", name, err)
		}
		dir, file := path.Split(hdr.Name)
		dir = strings.TrimSuffix(dir, "/")
		if hdr.Typeflag != tar.TypeReg || !isRecordFile(file) || !localPath(dir) {
			return nil, fmt.Errorf("results: unpack %s: entry %q is not a run's run.json, rounds.jsonl or status.json", name, hdr.Name)
		}
		if hdr.Size > maxRecordFile {
			return nil, fmt.Errorf("results: unpack %s: entry %q is %d bytes, more than a record holds (%d)", name, hdr.Name, hdr.Size, maxRecordFile)
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxRecordFile+1))
		if err != nil {
			return nil, fmt.Errorf("results: unpack %s: entry %q: %w", name, hdr.Name, err)
		}
		if runs[dir] == nil {
			runs[dir] = map[string][]byte{}
		}
		if _, dup := runs[dir][file]; dup {
			return nil, fmt.Errorf("results: unpack %s: entry %q appears twice", name, hdr.Name)
		}
		runs[dir][file] = data
	}
	return runs, nil
}

// isRecordFile reports whether a file name is one of recordFiles.
func isRecordFile(f string) bool {
	for _, r := range recordFiles {
		if f == r {
			return true
		}
	}
	return false
}

// localPath reports whether a slash-separated path names a directory below the root: not empty,
// not absolute, no "." or ".." element, and not one of this package's temporary names.
func localPath(p string) bool {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "." || el == ".." || isTemp(el) {
			return false
		}
	}
	return true
}

// placeRun writes a run's files into a temporary directory beside dst, reads the run back, and
// renames the directory to dst.
func placeRun(dst string, files map[string][]byte) (err error) {
	if files[MetaFile] == nil || files[StatusFile] == nil {
		return fmt.Errorf("the record lacks %s or %s", MetaFile, StatusFile)
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dst)+tempMarker)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			return err
		}
	}
	run, err := ReadRun(tmp)
	if err != nil {
		return err
	}
	if run.Status.State != Completed && run.Status.State != Diverged {
		return fmt.Errorf("status %q: a record holds only finished runs", run.Status.State)
	}
	if run.TornBytes > 0 || !bytes.HasSuffix(files[RowsFile], []byte("\n")) && len(files[RowsFile]) > 0 {
		return fmt.Errorf("%s does not end with a whole line", RowsFile)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	syncDir(parent)
	return nil
}
