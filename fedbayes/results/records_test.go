package results

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recordsFixture writes a completed, a diverged, a failed and an unfinished run under root/p and
// returns their directories in that order.
func recordsFixture(t *testing.T, root string) []string {
	t.Helper()
	p := filepath.Join(root, "p")
	rows := []Row{accRow(1, 0.5, 1.2), accRow(3, 0.75, 0.6)}
	dirs := []string{
		writeRun(t, p, "a", map[string]string{"rule": "gaa"}, 0, rows, Completed),
		writeRun(t, p, "b", map[string]string{"rule": "eaa"}, 1, rows[:1], Diverged),
		writeRun(t, p, "c", nil, 0, rows, Failed),
		writeRun(t, p, "d", nil, 0, rows, ""),
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

// packedFixture writes recordsFixture's runs and returns their directories and their archive.
func packedFixture(t *testing.T) ([]string, *bytes.Buffer) {
	t.Helper()
	src := t.TempDir()
	dirs := recordsFixture(t, src)
	var buf bytes.Buffer
	if _, err := PackRecords(&buf, src, dirs); err != nil {
		t.Fatal(err)
	}
	return dirs, &buf
}

// archiveNames lists the entry names of a PackRecords archive.
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

func TestPackRecordsKeepsFinishedRuns(t *testing.T) {
	root := t.TempDir()
	dirs := recordsFixture(t, root)
	var buf bytes.Buffer
	n, err := PackRecords(&buf, root, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("packed %d runs, want 2 (the completed and the diverged one)", n)
	}
	want := []string{"p/a-seed0/run.json", "p/a-seed0/rounds.jsonl", "p/a-seed0/status.json",
		"p/b-seed1/run.json", "p/b-seed1/rounds.jsonl", "p/b-seed1/status.json"}
	if got := archiveNames(t, buf.Bytes()); !reflect.DeepEqual(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	// Deterministic: the same runs, in another order, give the same bytes.
	var again bytes.Buffer
	if _, err := PackRecords(&again, root, []string{dirs[3], dirs[1], dirs[0], dirs[2]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("packing the same runs twice gave different archives")
	}
	if _, err := PackRecords(&again, filepath.Join(root, "p", "a-seed0"), dirs[:1]); err == nil {
		t.Error("packing a run that is the root itself: no error")
	}
}

func TestUnpackRecordsRoundTrip(t *testing.T) {
	dirs, buf := packedFixture(t)
	dst := t.TempDir()
	res, err := UnpackRecords(bytes.NewReader(buf.Bytes()), "test.tar.gz", dst)
	if err != nil {
		t.Fatal(err)
	}
	if res.Added != 2 || res.Kept != 0 || !reflect.DeepEqual(res.Runs, []string{"p/a-seed0", "p/b-seed1"}) {
		t.Errorf("result %+v, want 2 added", res)
	}
	for _, d := range dirs[:2] {
		want, err := ReadRun(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadRun(filepath.Join(dst, "p", filepath.Base(d)))
		if err != nil {
			t.Fatal(err)
		}
		want.Dir, got.Dir = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s read back as %+v, want %+v", filepath.Base(d), got, want)
		}
		for _, f := range recordFiles {
			a, _ := os.ReadFile(filepath.Join(d, f))
			b, _ := os.ReadFile(filepath.Join(dst, "p", filepath.Base(d), f))
			if !bytes.Equal(a, b) {
				t.Errorf("%s/%s differs after the round trip", filepath.Base(d), f)
			}
		}
	}
	if files := tempFiles(t, dst); len(files) != 0 {
		t.Errorf("temporary files left: %q", files)
	}
	// Packing the unpacked runs gives the same archive.
	var again bytes.Buffer
	if _, err := PackRecords(&again, dst, []string{filepath.Join(dst, "p", "a-seed0"), filepath.Join(dst, "p", "b-seed1")}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("pack, unpack, pack changed the archive")
	}
	// A second unpack keeps what is there.
	res, err = UnpackRecords(bytes.NewReader(buf.Bytes()), "test.tar.gz", dst)
	if err != nil || res.Kept != 2 || res.Added != 0 {
		t.Errorf("second unpack: %+v, %v; want 2 kept", res, err)
	}
}

func TestUnpackRecordsKeepsLocalRun(t *testing.T) {
	_, buf := packedFixture(t)
	dst := t.TempDir()
	// An unfinished local run of the same name wins: it resumes, and is not replaced.
	local := writeRun(t, filepath.Join(dst, "p"), "a", map[string]string{"rule": "gaa"}, 0, []Row{accRow(1, 0.5, 1.2)}, "")
	res, err := UnpackRecords(bytes.NewReader(buf.Bytes()), "test.tar.gz", dst)
	if err != nil || res.Added != 1 || res.Kept != 1 {
		t.Fatalf("unpack: %+v, %v; want 1 added, 1 kept", res, err)
	}
	if _, err := os.Stat(filepath.Join(local, StatusFile)); err == nil {
		t.Error("the local unfinished run got the record's status")
	}
}

// tarGz builds an archive from name, content pairs.
func tarGz(t *testing.T, entries ...string) []byte {
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

func TestUnpackRecordsRejects(t *testing.T) {
	dirs, good := packedFixture(t)
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dirs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	meta, rows, status := read(MetaFile), read(RowsFile), read(StatusFile)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip", []byte("hello"), "not a gzip archive"},
		{"truncated", good.Bytes()[:good.Len()/2], "corrupt archive"},
		{"parent path", tarGz(t, "../x/run.json", meta), "is not a run's"},
		{"absolute path", tarGz(t, "/x/run.json", meta), "is not a run's"},
		{"checkpoint", tarGz(t, "x/checkpoints", "blob"), "is not a run's"},
		{"other file", tarGz(t, "x/notes.txt", "hi"), "is not a run's"},
		{"temporary dir", tarGz(t, ".x.tmp-1/run.json", meta), "is not a run's"},
		{"no status", tarGz(t, "x/run.json", meta, "x/rounds.jsonl", rows), "lacks"},
		{"twice", tarGz(t, "x/run.json", meta, "x/run.json", meta), "appears twice"},
		{"torn rows", tarGz(t, "x/run.json", meta, "x/rounds.jsonl", rows+`{"round":4`, "x/status.json", status), "rounds.jsonl"},
		{"bad meta", tarGz(t, "x/run.json", "{", "x/status.json", status), "x"},
		{"failed run", tarGz(t, "x/run.json", meta, "x/status.json", strings.Replace(status, `"completed"`, `"failed"`, 1)), "status failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := t.TempDir()
			_, err := UnpackRecords(bytes.NewReader(c.data), "bad.tar.gz", dst)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.tar.gz") {
				t.Errorf("error %q: want it to name bad.tar.gz and say %q", err, c.want)
			}
			if _, err := os.Stat(filepath.Join(dst, "x")); err == nil {
				t.Error("a rejected run was placed")
			}
			if files := tempFiles(t, dst); len(files) != 0 {
				t.Errorf("temporary files left: %q", files)
			}
		})
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
