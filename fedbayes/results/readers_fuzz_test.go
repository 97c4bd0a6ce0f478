package results

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/internal/strictjson/strictjsontest"
)

// FuzzReadersStrict writes arbitrary bytes as the JSON file of each reader of jsonReaders in a run
// folder (the object of its line, for rounds.jsonl and a checkpoint's header) and reads it. No
// reader may panic; a document that strictjson.Check refuses (a duplicate key, a number out of
// range, a syntax error) must be refused by every reader, naming the file. A new reader of a JSON
// file joins jsonReaders and so this target. The seeds are each reader's valid file and its
// strictjsontest variants.
func FuzzReadersStrict(f *testing.F) {
	dir := strictRun(f)
	for _, r := range jsonReaders {
		obj := readerObject(f, dir, r)
		f.Add(obj)
		variants, err := strictjsontest.Variants(obj)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range variants {
			f.Add(v.Doc)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if bytes.IndexByte(doc, '\n') >= 0 {
			return // one line: the rows and the checkpoint header hold their object on one line
		}
		for _, r := range jsonReaders {
			dir := strictRun(t)
			path := filepath.Join(dir, r.file)
			writeReaderObject(t, path, r, doc)
			err := r.read(dir)
			if strictjson.Check(doc) != nil && (err == nil || !strings.Contains(err.Error(), path)) {
				t.Fatalf("%s: %q: %v; strictjson refuses it, so must the reader, naming %s", r.name, doc, err, path)
			}
		}
	})
}

// readerObject returns the JSON object that reader r reads in the run folder dir.
func readerObject(t testing.TB, dir string, r jsonReader) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, r.file))
	if err != nil {
		t.Fatal(err)
	}
	if r.line == 0 {
		return raw
	}
	return bytes.TrimSuffix(bytes.SplitAfter(raw, []byte("\n"))[r.line-1], []byte("\n"))
}

// writeReaderObject writes doc as the JSON object reader r reads at path, the other lines kept.
func writeReaderObject(t testing.TB, path string, r jsonReader, doc []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := doc
	if r.line > 0 {
		lines := bytes.SplitAfter(raw, []byte("\n"))
		lines[r.line-1] = append(append([]byte(nil), doc...), '\n')
		out = bytes.Join(lines, nil)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzDropRecord drops a run's record from arbitrary archives. It must never panic; when it
// succeeds, the archive it gives reads back (ReadRecords) without that run and with every other
// record of the input byte for byte, and is what WriteRecords writes for them.
func FuzzDropRecord(f *testing.F) {
	_, recs := fixtureRecords(f)
	var good bytes.Buffer
	if err := WriteRecords(&good, recs); err != nil {
		f.Fatal(err)
	}
	setRecordLimits(f, 1<<13, 1<<15, 12)
	f.Add(good.Bytes(), recs[0].Name)
	f.Add(good.Bytes(), recs[1].Name)
	f.Add(good.Bytes()[:good.Len()/2], recs[0].Name)
	f.Add(tarGz(f, "a-seed0/run.json", "{}", "b-seed1/run.json", "{}", "b-seed1/rounds.jsonl", "", "b-seed1/status.json", "{}"), "a-seed0")
	f.Add(good.Bytes(), "..")
	f.Fuzz(func(t *testing.T, data []byte, run string) {
		out, left, err := DropRecord(data, "fuzz.tar.gz", run)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.tar.gz") {
				t.Fatalf("error %v does not name the archive", err)
			}
			return
		}
		after, err := ReadRecords(bytes.NewReader(out), "out.tar.gz")
		if err != nil || len(after) != left {
			t.Fatalf("the archive after the drop: %d records, %v; DropRecord said %d", len(after), err, left)
		}
		for _, r := range after {
			if r.Name == run {
				t.Fatalf("%s is still there", run)
			}
		}
		var again bytes.Buffer
		if err := WriteRecords(&again, after); err != nil || !bytes.Equal(again.Bytes(), out) {
			t.Fatalf("the archive is not WriteRecords' for its records (%v)", err)
		}
	})
}
