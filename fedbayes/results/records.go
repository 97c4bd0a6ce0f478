package results

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// recordFiles are the files of a run that a record keeps: what the run computed and how, without
// its checkpoints (which only serve to resume a run that is not finished).
var recordFiles = []string{MetaFile, RowsFile, StatusFile}

// recordLimits bound what ReadRecords reads from one archive, so that a corrupt or hostile archive
// (a few MB of gzip-compressed zeros expand to GB) cannot fill the memory or the disk: each entry is
// checked against them by its declared size before a byte of it is read or allocated, and the
// entries are counted as they come. A variable so that the tests can lower them.
var recordLimits = struct {
	// File bounds one entry (one run's run.json, rounds.jsonl or status.json): 64 MiB.
	File int64
	// Total bounds the sum of the entries' sizes, uncompressed: 256 MiB (the reproduction's
	// archives in docs/reproduction/records hold 0.6 to 1.4 MB each).
	Total int64
	// Entries bounds the number of entries: 3 per run, 20 000 runs.
	Entries int
}{File: 64 << 20, Total: 256 << 20, Entries: 3 * 20_000}

// staleRecordAge is how old a temporary directory of UnpackRecords must be before another
// UnpackRecords removes it as left by a killed process.
const staleRecordAge = 10 * time.Minute

// Record is a finished run's record: its name (the run directory's base name) and the contents of
// its run.json, rounds.jsonl and status.json.
type Record struct {
	// Name is the run directory's name, e.g. "gaa-size-iid-seed1".
	Name string
	// Files maps MetaFile, RowsFile and StatusFile to their contents.
	Files map[string][]byte
}

// ReadRecord reads the record of the run in dir. ok is false, with no error, when the run is not
// finished (no status, or a failed one) or dir holds no run; a finished run whose files do not read
// back as Load reads them is an error.
func ReadRecord(dir string) (rec Record, ok bool, err error) {
	if !HasRun(dir) {
		return Record{}, false, nil
	}
	st, ok, err := readStatus(dir)
	if err != nil {
		return Record{}, false, err
	}
	if !ok || st.State == Failed {
		return Record{}, false, nil
	}
	rec = Record{Name: filepath.Base(dir), Files: map[string][]byte{}}
	for _, f := range recordFiles {
		if rec.Files[f], err = os.ReadFile(filepath.Join(dir, f)); err != nil {
			return Record{}, false, fmt.Errorf("results: record of %s: %w", dir, err)
		}
	}
	if err := checkRecord(dir, rec.Name, rec.Files); err != nil {
		return Record{}, false, fmt.Errorf("results: record of %s: %w", dir, err)
	}
	return rec, true, nil
}

// checkRecord checks that a run's files, as found in dir, are a finished run that Load reads: its
// run.json, rows and status valid, the rows ending with a whole line, the state completed or
// diverged, the rows consistent with the status (the check every reader applies, CheckRun: no rows
// ending before the status round), and name the conventional name of its setting and seed
// (RunName), so that a record under another name cannot count a seed twice.
func checkRecord(dir, name string, files map[string][]byte) error {
	for _, f := range recordFiles {
		if files[f] == nil {
			return fmt.Errorf("the record lacks %s", f)
		}
	}
	run, err := ReadRun(dir)
	if err != nil {
		return err
	}
	if run.Status.State != Completed && run.Status.State != Diverged {
		return fmt.Errorf("status %q: a record holds only finished runs", run.Status.State)
	}
	if rows := files[RowsFile]; run.TornBytes > 0 || len(rows) > 0 && !bytes.HasSuffix(rows, []byte("\n")) {
		return fmt.Errorf("%s does not end with a whole line", RowsFile)
	}
	if err := (CheckOptions{}).CheckRun(run); err != nil {
		return fmt.Errorf("%s; a record holds only runs that readers trust", refusedReason(err))
	}
	if want := RunName(run.Meta.Setting, run.Meta.Seed); name != want {
		return fmt.Errorf("it holds setting %s seed %d, whose run is named %s: a record under another name would count the seed twice", run.Meta.Setting, run.Meta.Seed, want)
	}
	return nil
}

// WriteRecords writes the records to w as a gzip-compressed tar archive, NAME/run.json,
// NAME/rounds.jsonl and NAME/status.json for each, in name order with fixed times and modes, so that
// the same records give the same bytes (with the same Go release's compress/gzip). Two records of
// one name are an error.
func WriteRecords(w io.Writer, recs []Record) error {
	recs = append([]Record(nil), recs...)
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0).UTC()
	for i, r := range recs {
		if i > 0 && recs[i-1].Name == r.Name {
			return fmt.Errorf("results: write records: run %s appears twice", r.Name)
		}
		if !recordName(r.Name) {
			return fmt.Errorf("results: write records: %q is not a run directory's name", r.Name)
		}
		for _, f := range recordFiles {
			data := r.Files[f]
			hdr := &tar.Header{Name: r.Name + "/" + f, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return fmt.Errorf("results: write records: %w", err)
			}
			if _, err := tw.Write(data); err != nil {
				return fmt.Errorf("results: write records: %w", err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("results: write records: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("results: write records: %w", err)
	}
	return nil
}

// ReadRecords reads an archive written by WriteRecords, in name order. An entry that is not one of a
// run's three record files directly under the archive's top (NAME/FILE), a record that lacks one of
// them, and a corrupt archive are errors naming the archive (name) and the entry. The records' contents
// are checked when they are placed (UnpackRecords). What it reads is bounded (recordLimits): an
// archive with an entry, a total or a number of entries past the bounds is refused as soon as its
// tar header shows it, before the entry is read.
func ReadRecords(r io.Reader, name string) ([]Record, error) {
	recs, _, err := readRecords(r, name, "")
	return recs, err
}

// readRecords is ReadRecords, leaving out the entries of the run named drop ("" drops none); it
// returns the number of entries left out.
func readRecords(r io.Reader, name, drop string) ([]Record, int, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, 0, fmt.Errorf("results: records %s: not a gzip archive: %w", name, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	byName := map[string]map[string][]byte{}
	var total int64 // bytes of the entries so far, uncompressed
	entries, dropped := 0, 0
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("results: records %s: corrupt archive: %w", name, err)
		}
		run, file, found := strings.Cut(hdr.Name, "/")
		if !found || hdr.Typeflag != tar.TypeReg || !isRecordFile(file) || !recordName(run) {
			return nil, 0, fmt.Errorf("results: records %s: entry %q is not a run's run.json, rounds.jsonl or status.json", name, hdr.Name)
		}
		if entries++; entries > recordLimits.Entries {
			return nil, 0, fmt.Errorf("results: records %s: more than %d entries, more than an archive of records may hold (%d runs)", name, recordLimits.Entries, recordLimits.Entries/len(recordFiles))
		}
		if hdr.Size < 0 || hdr.Size > recordLimits.File {
			return nil, 0, fmt.Errorf("results: records %s: entry %q is %d bytes, more than a record file may hold (%d)", name, hdr.Name, hdr.Size, recordLimits.File)
		}
		if total+hdr.Size > recordLimits.Total {
			return nil, 0, fmt.Errorf("results: records %s: entry %q (%d bytes) brings the archive past %d bytes uncompressed, more than an archive of records may hold", name, hdr.Name, hdr.Size, recordLimits.Total)
		}
		total += hdr.Size
		if drop != "" && run == drop {
			dropped++
			continue // its bytes are skipped by the next call of tr.Next
		}
		data := make([]byte, hdr.Size) // bounded by the checks above
		if _, err := io.ReadFull(tr, data); err != nil {
			return nil, 0, fmt.Errorf("results: records %s: entry %q: %w", name, hdr.Name, err)
		}
		if byName[run] == nil {
			byName[run] = map[string][]byte{}
		}
		if _, dup := byName[run][file]; dup {
			return nil, 0, fmt.Errorf("results: records %s: entry %q appears twice", name, hdr.Name)
		}
		byName[run][file] = data
	}
	recs := make([]Record, 0, len(byName))
	for run, files := range byName {
		for _, f := range recordFiles {
			if files[f] == nil {
				return nil, 0, fmt.Errorf("results: records %s: run %s lacks %s", name, run, f)
			}
		}
		recs = append(recs, Record{Name: run, Files: files})
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return recs, dropped, nil
}

// ErrNoRecord is DropRecord's error for an archive without the run's record.
var ErrNoRecord = errors.New("no record")

// DropRecord returns the archive data (named archive in the messages) without the record of the run
// named run, written by WriteRecords, and the number of records left. The archive is read as
// ReadRecords reads it, with the bounds, except that the dropped run's entries are not read, so a
// record that ReadRecords refuses for its own entries (one of its files missing) can be dropped.
// An archive without the run is an error.
func DropRecord(data []byte, archive, run string) ([]byte, int, error) {
	if !recordName(run) {
		return nil, 0, fmt.Errorf("results: records %s: %q is not a run directory's name", archive, run)
	}
	recs, dropped, err := readRecords(bytes.NewReader(data), archive, run)
	if err != nil {
		return nil, 0, err
	}
	if dropped == 0 {
		return nil, 0, fmt.Errorf("results: records %s: %w of run %s (%d records)", archive, ErrNoRecord, run, len(recs))
	}
	var buf bytes.Buffer
	if err := WriteRecords(&buf, recs); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), len(recs), nil
}

// CheckRecord checks a record as UnpackRecords does before placing it: written into a temporary
// directory, it must read back as a finished run that readers trust, under its run's name. The
// error says why the record is not trusted, naming its files NAME/FILE.
func CheckRecord(rec Record) error {
	if !recordName(rec.Name) {
		return fmt.Errorf("%q is not a run directory's name", rec.Name)
	}
	tmp, err := os.MkdirTemp("", "fedbayes-record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, rec.Name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, f := range recordFiles {
		if data, ok := rec.Files[f]; ok {
			if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
				return err
			}
		}
	}
	if err := checkRecord(dir, rec.Name, rec.Files); err != nil {
		// The reason names the record's files as the archive does (NAME/run.json), not the
		// temporary directory, so that the same record gives the same words.
		return errors.New(strings.ReplaceAll(err.Error(), tmp+string(filepath.Separator), ""))
	}
	return nil
}

// UnpackResult counts what UnpackRecords did.
type UnpackResult struct {
	// Added is the number of runs written into the results directory.
	Added int
	// Kept is the number of runs left as they were because the directory already had them (a run
	// found locally, finished or not, wins over its record).
	Kept int
}

// UnpackRecords writes each record into root as a run directory, unless root already has a
// directory of that name. Every record to write is first placed in a temporary directory under root
// and read back as Load reads it (a finished run: completed or diverged); only when all are good are
// they renamed into place, so an error leaves nothing new in root and a reader never sees a part of a
// run. Temporary directories left by a killed UnpackRecords are removed. name is the archive's name
// for the messages.
func UnpackRecords(recs []Record, name, root string) (res UnpackResult, err error) {
	removeStaleRecordTemps(root)
	type staged struct{ tmp, dst string }
	var ready []staged
	defer func() {
		for _, s := range ready {
			_ = os.RemoveAll(s.tmp) // after a rename there is nothing left to remove
		}
	}()
	for _, r := range recs {
		if !recordName(r.Name) {
			return res, fmt.Errorf("results: records %s: %q is not a run directory's name", name, r.Name)
		}
		dst := filepath.Join(root, r.Name)
		if _, err := os.Lstat(dst); err == nil {
			res.Kept++
			continue
		}
		if err := os.MkdirAll(root, 0o755); err != nil { // only when there is a run to place
			return UnpackResult{}, fmt.Errorf("results: records %s: %w", name, err)
		}
		tmp, err := os.MkdirTemp(root, "."+r.Name+tempMarker)
		if err != nil {
			return UnpackResult{}, fmt.Errorf("results: records %s: %w", name, err)
		}
		ready = append(ready, staged{tmp, dst})
		for f, data := range r.Files {
			if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
				return UnpackResult{}, fmt.Errorf("results: records %s: run %s: %w", name, r.Name, err)
			}
		}
		if err := checkRecord(tmp, r.Name, r.Files); err != nil {
			return UnpackResult{}, fmt.Errorf("results: records %s: run %s: %w", name, r.Name, err)
		}
	}
	for _, s := range ready {
		if err := os.Rename(s.tmp, s.dst); err != nil {
			return res, fmt.Errorf("results: records %s: %w", name, err)
		}
		res.Added++
	}
	if len(ready) > 0 {
		syncDir(root)
	}
	return res, nil
}

// removeStaleRecordTemps removes the temporary run directories that a killed UnpackRecords left in
// root (older than staleRecordAge: a younger one may be another process's, still at work).
func removeStaleRecordTemps(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !isTemp(e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleRecordAge {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
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

// recordName reports whether s can name a run directory of a record: one path element, not "." or
// "..", no separator, and not one of this package's temporary names.
func recordName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !isTemp(s)
}
