package results

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recordsFixture writes a completed, a diverged, a failed and an unfinished run under root and
// returns their directories in that order.
func recordsFixture(t testing.TB, root string) []string {
	t.Helper()
	rows := []Row{accRow(1, 0.5, 1.2), accRow(3, 0.75, 0.6)}
	dirs := []string{
		writeRun(t, root, "a", map[string]string{"rule": "gaa"}, 0, rows, Completed),
		writeRun(t, root, "b", map[string]string{"rule": "eaa"}, 1, rows[:1], Diverged),
		writeRun(t, root, "c", nil, 0, rows, Failed),
		writeRun(t, root, "d", nil, 0, rows, ""),
	}
	// A checkpoint, which a record never holds.
	if err := os.MkdirAll(filepath.Join(dirs[0], CheckpointsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs[0], CheckpointsDir, "round-000000003.ckpt"), []byte("blob"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dirs
}

// fixtureRecords reads the records of recordsFixture's runs (the completed and the diverged one).
func fixtureRecords(t testing.TB) ([]string, []Record) {
	t.Helper()
	dirs := recordsFixture(t, t.TempDir())
	var recs []Record
	for _, d := range dirs {
		r, ok, err := ReadRecord(d)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			recs = append(recs, r)
		}
	}
	return dirs, recs
}

func TestReadRecord(t *testing.T) {
	dirs, recs := fixtureRecords(t)
	if len(recs) != 2 || recs[0].Name != "a-seed0" || recs[1].Name != "b-seed1" {
		t.Fatalf("records %v: want the completed a-seed0 and the diverged b-seed1", recs)
	}
	for _, f := range recordFiles {
		want, _ := os.ReadFile(filepath.Join(dirs[0], f))
		if !bytes.Equal(recs[0].Files[f], want) {
			t.Errorf("%s differs from the file", f)
		}
	}
	if len(recs[0].Files) != 3 {
		t.Errorf("record files %d, want 3 (no checkpoint)", len(recs[0].Files))
	}
	if _, ok, err := ReadRecord(filepath.Join(t.TempDir(), "none")); ok || err != nil {
		t.Errorf("no run: ok %v, err %v; want neither", ok, err)
	}
	// A finished run whose rows are torn is an error, not a record.
	f, err := os.OpenFile(filepath.Join(dirs[0], RowsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString(`{"round":4`)
	_ = f.Close()
	if _, _, err := ReadRecord(dirs[0]); err == nil || !strings.Contains(err.Error(), RowsFile) {
		t.Errorf("torn rows: %v; want an error naming %s", err, RowsFile)
	}
}

// archiveNames lists the entry names of a WriteRecords archive.
func archiveNames(t *testing.T, data []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}

func TestWriteRecords(t *testing.T) {
	_, recs := fixtureRecords(t)
	var buf, again bytes.Buffer
	if err := WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := []string{"a-seed0/run.json", "a-seed0/rounds.jsonl", "a-seed0/status.json",
		"b-seed1/run.json", "b-seed1/rounds.jsonl", "b-seed1/status.json"}
	if got := archiveNames(t, buf.Bytes()); !reflect.DeepEqual(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	// Deterministic: the same records in another order give the same bytes.
	if err := WriteRecords(&again, []Record{recs[1], recs[0]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("the same records gave different archives")
	}
	back, err := ReadRecords(bytes.NewReader(buf.Bytes()), "x")
	if err != nil || !reflect.DeepEqual(back, recs) {
		t.Errorf("read back %v, %v; want the records written", back, err)
	}
	for _, bad := range [][]Record{{recs[0], recs[0]}, {{Name: "../a", Files: recs[0].Files}}, {{Name: "a/b", Files: recs[0].Files}}} {
		if err := WriteRecords(&again, bad); err == nil {
			t.Errorf("records %q written", bad[0].Name)
		}
	}
}

func TestUnpackRecordsRoundTrip(t *testing.T) {
	dirs, recs := fixtureRecords(t)
	dst := t.TempDir()
	res, err := UnpackRecords(recs, "test.tar.gz", dst)
	if err != nil {
		t.Fatal(err)
	}
	if res != (UnpackResult{Added: 2}) {
		t.Errorf("result %+v, want 2 added", res)
	}
	for _, d := range dirs[:2] {
		want, err := ReadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadRun(filepath.Join(dst, filepath.Base(d)))
		if err != nil {
			t.Fatal(err)
		}
		want.Dir, got.Dir = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s read back as %+v, want %+v", filepath.Base(d), got, want)
		}
		back, ok, err := ReadRecord(filepath.Join(dst, filepath.Base(d)))
		if !ok || err != nil {
			t.Fatalf("record of the placed run: %v, %v", ok, err)
		}
		if i := map[string]int{"a-seed0": 0, "b-seed1": 1}[back.Name]; !reflect.DeepEqual(back.Files, recs[i].Files) {
			t.Errorf("%s: files differ after the round trip", back.Name)
		}
	}
	if files := tempFiles(t, dst); len(files) != 0 {
		t.Errorf("temporary files left: %q", files)
	}
	// A second unpack keeps what is there.
	res, err = UnpackRecords(recs, "test.tar.gz", dst)
	if err != nil || res != (UnpackResult{Kept: 2}) {
		t.Errorf("second unpack: %+v, %v; want 2 kept", res, err)
	}
}

func TestUnpackRecordsKeepsLocalRun(t *testing.T) {
	_, recs := fixtureRecords(t)
	dst := t.TempDir()
	// An unfinished local run of the same name is left to resume, not replaced.
	local := writeRun(t, dst, "a", map[string]string{"rule": "gaa"}, 0, []Row{accRow(1, 0.5, 1.2)}, "")
	res, err := UnpackRecords(recs, "test.tar.gz", dst)
	if err != nil || res != (UnpackResult{Added: 1, Kept: 1}) {
		t.Fatalf("unpack: %+v, %v; want 1 added, 1 kept", res, err)
	}
	if _, err := os.Stat(filepath.Join(local, StatusFile)); err == nil {
		t.Error("the local unfinished run got the record's status")
	}
}

// tarGz builds an archive from name, content pairs.
func tarGz(t testing.TB, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := 0; i+1 < len(entries); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: entries[i], Mode: 0o644, Size: int64(len(entries[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(entries[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadRecordsRejects(t *testing.T) {
	_, recs := fixtureRecords(t)
	meta, rows, status := string(recs[0].Files[MetaFile]), string(recs[0].Files[RowsFile]), string(recs[0].Files[StatusFile])
	var good bytes.Buffer
	if err := WriteRecords(&good, recs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte("hello"), "not a gzip archive"},
		{"truncated", good.Bytes()[:good.Len()/2], "corrupt archive"},
		{"parent path", tarGz(t, "../x/run.json", meta), "is not a run's"},
		{"absolute path", tarGz(t, "/x/run.json", meta), "is not a run's"},
		{"nested", tarGz(t, "x/y/run.json", meta), "is not a run's"},
		{"checkpoint", tarGz(t, "x/checkpoints", "blob"), "is not a run's"},
		{"other file", tarGz(t, "x/notes.txt", "hi"), "is not a run's"},
		{"temporary dir", tarGz(t, ".x.tmp-1/run.json", meta), "is not a run's"},
		{"no status", tarGz(t, "x/run.json", meta, "x/rounds.jsonl", rows), "lacks status.json"},
		{"twice", tarGz(t, "x/run.json", meta, "x/run.json", meta, "x/status.json", status), "appears twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadRecords(bytes.NewReader(c.data), "bad.tar.gz")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.tar.gz") {
				t.Errorf("error %v: want it to name bad.tar.gz and say %q", err, c.want)
			}
		})
	}
}

func TestUnpackRecordsRejects(t *testing.T) {
	_, recs := fixtureRecords(t)
	with := func(file, content string) Record {
		files := map[string][]byte{}
		for k, v := range recs[0].Files {
			files[k] = v
		}
		files[file] = []byte(content)
		return Record{Name: "x", Files: files}
	}
	for _, c := range []struct {
		name string
		rec  Record
		want string
	}{
		{"torn rows", with(RowsFile, string(recs[0].Files[RowsFile])+`{"round":4`), RowsFile},
		{"bad meta", with(MetaFile, "{"), MetaFile},
		{"failed run", with(StatusFile, strings.Replace(string(recs[0].Files[StatusFile]), `"completed"`, `"failed"`, 1)), "status failed"},
		{"bad name", Record{Name: "..", Files: recs[0].Files}, "not a run directory's name"},
		// Issue 36: rows that end before the status round passed, and -records put the run back
		// each time the run path asked to remove it; a copy under another name counted its seed twice.
		{"rows end before the status round", with(RowsFile, firstLines(string(recs[0].Files[RowsFile]), 1)), "ends at round 1, but the run completed after round"},
		{"another name", Record{Name: recs[0].Name + ".bak", Files: recs[0].Files}, "whose run is named " + recs[0].Name},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := t.TempDir()
			// A good record before the bad one is not placed either: all or nothing.
			_, err := UnpackRecords([]Record{recs[0], c.rec}, "bad.tar.gz", dst)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.tar.gz") {
				t.Errorf("error %v: want it to name bad.tar.gz and say %q", err, c.want)
			}
			if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Errorf("left in the results directory: %v", entries)
			}
		})
	}
}

func TestUnpackRecordsRemovesStaleTemps(t *testing.T) {
	_, recs := fixtureRecords(t)
	dst := t.TempDir()
	stale := filepath.Join(dst, ".a-seed0"+tempMarker+"1")
	fresh := filepath.Join(dst, ".a-seed0"+tempMarker+"2")
	for _, d := range []string{stale, fresh} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleRecordAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := UnpackRecords(recs[:1], "x", dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale temporary directory was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a young temporary directory (maybe another process's) was removed")
	}
}

func TestLoadIgnoresUnplacedRecord(t *testing.T) {
	root := t.TempDir()
	writeRun(t, root, "a", nil, 0, []Row{accRow(1, 0.5, 1.2)}, Completed)
	// What a killed UnpackRecords leaves: a temporary directory holding a run's files.
	writeRun(t, filepath.Join(root, ".b-seed0"+tempMarker+"123"), "b", nil, 0, []Row{accRow(1, 0.5, 1.2)}, Completed)
	runs, skipped, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || len(skipped) != 0 {
		t.Errorf("loaded %d runs, skipped %v: want the one placed run only", len(runs), skipped)
	}
}

// setRecordLimits lowers ReadRecords' bounds for one test.
func setRecordLimits(tb testing.TB, file, total int64, entries int) {
	tb.Helper()
	old := recordLimits
	recordLimits.File, recordLimits.Total, recordLimits.Entries = file, total, entries
	tb.Cleanup(func() { recordLimits = old })
}

// zeroArchive returns a records archive of n entries (run-I/run.json, rounds.jsonl, status.json in
// turn) of size zero bytes each, built from concatenated gzip members so that a large archive costs
// little to build: a tar header per entry, then one compressed block of zeros repeated.
func zeroArchive(t testing.TB, n int, size int64) []byte {
	t.Helper()
	member := func(data []byte) []byte {
		var b bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		gz.Write(data)
		gz.Close()
		return b.Bytes()
	}
	const block = 1 << 20
	if size%512 != 0 || (size > block && size%block != 0) {
		t.Fatalf("size %d: want a multiple of 512, and of %d above it", size, block)
	}
	zeros := member(make([]byte, min(size, block)))
	var out bytes.Buffer
	for i := 0; i < n; i++ {
		var hb bytes.Buffer
		tw := tar.NewWriter(&hb)
		name := fmt.Sprintf("run-%d/%s", i/3, recordFiles[i%3])
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		tw.Flush()
		out.Write(member(hb.Bytes()))
		for written := int64(0); written < size; written += min(size, block) {
			out.Write(zeros)
		}
	}
	out.Write(member(make([]byte, 1024)))
	return out.Bytes()
}

// TestReadRecordsBounds: an archive whose entries, total uncompressed size or number of entries pass
// the bounds is refused with an error naming the archive, as soon as a tar header shows it (before the
// entry is read: an entry declared past the bound and cut short is refused for its size, not as a
// corrupt archive), and without allocating past the bound. Issue 36: a 10.5 MB archive of zero-filled
// entries (each under the per-entry cap) made ReadRecords allocate until the process died.
func TestReadRecordsBounds(t *testing.T) {
	cut := func(b []byte) []byte { return b[:len(b)-len(b)/4] }
	tests := []struct {
		name        string
		file, total int64
		entries     int
		data        []byte
		want        string
	}{
		{"total", 4 << 20, 8 << 20, 1000, zeroArchive(t, 30, 4<<20), "past 8388608 bytes uncompressed"},
		{"entries", 1 << 20, 1 << 30, 4, zeroArchive(t, 9, 512), "more than 4 entries"},
		{"one entry", 1 << 20, 1 << 30, 1000, zeroArchive(t, 3, 2<<20), "more than a record file may hold (1048576)"},
		{"declared past the total, cut short", 64 << 20, 8 << 20, 1000, cut(zeroArchive(t, 1, 32<<20)), "past 8388608 bytes uncompressed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			setRecordLimits(t, tc.file, tc.total, tc.entries)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := ReadRecords(bytes.NewReader(tc.data), "zeros.tar.gz")
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "zeros.tar.gz") {
				t.Errorf("error %v: want it to name zeros.tar.gz and say %q", err, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(tc.total)+16<<20 {
				t.Errorf("ReadRecords allocated %d bytes, the bound is %d", alloc, tc.total)
			}
		})
	}
	// The default bounds: an archive of 300 MiB of zeros (20 MiB of 15 entries, each under the
	// per-entry bound) is refused.
	if testing.Short() {
		return
	}
	data := zeroArchive(t, 15, 20<<20)
	if _, err := ReadRecords(bytes.NewReader(data), "zeros.tar.gz"); err == nil || !strings.Contains(err.Error(), "past 268435456 bytes") {
		t.Errorf("%d-byte archive of 300 MiB of zeros: error %v, want the total bound", len(data), err)
	}
}

// firstLines returns the first n lines of s, each with its newline.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:n], "")
}
