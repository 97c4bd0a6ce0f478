package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseRows feeds arbitrary bytes to the rounds.jsonl reader. It must never panic, and what it
// accepts must be consistent: rounds strictly increase, every row passes Row.Validate, a torn tail
// and an unterminated last row exclude each other, and the accepted rows written back in the
// rounds.jsonl format read back as the same rounds and values. Checking the rows against a status
// (Run.Check) must not panic either. The seed corpus is in testdata/fuzz/FuzzParseRows.
func FuzzParseRows(f *testing.F) {
	good, err := encodeRows([]Row{accRow(1, 0.5, 1), accRow(2, 0.75, math.Inf(1))})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(good)-9])
	f.Add([]byte(`{"round":1,"metrics":{"accuracy":"NaN"},"time":{"local_s":0,"aggregate_s":0,"eval_s":0},"bytes_sent":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := parseRows("rounds.jsonl", data)
		if err != nil {
			return
		}
		if rf.torn > 0 && rf.unterminated {
			t.Fatalf("torn %d bytes and an unterminated last row at once", rf.torn)
		}
		if rf.torn > len(data) {
			t.Fatalf("torn %d bytes of %d", rf.torn, len(data))
		}
		for i, r := range rf.rows {
			if err := r.Validate(); err != nil {
				t.Fatalf("accepted row %d fails Validate: %v", i, err)
			}
			if i > 0 && r.Round <= rf.rows[i-1].Round {
				t.Fatalf("accepted rounds %d then %d", rf.rows[i-1].Round, r.Round)
			}
			_ = r.CheckValues()
		}
		last := 0
		if n := len(rf.rows); n > 0 {
			last = rf.rows[n-1].Round
		}
		for _, st := range []Status{{State: Completed, Round: last}, {State: Diverged, Round: last, Reason: "x"}, {}} {
			run := Run{Dir: "d", Status: st, Rows: rf.rows, TornBytes: rf.torn}
			_ = run.Check(func(Meta) ([]int, bool) { return []int{1, 2, 3}, true })
		}
		again, err := encodeRows(rf.rows)
		if err != nil {
			t.Fatalf("accepted rows cannot be written back: %v", err)
		}
		rf2, err := parseRows("again", again)
		if err != nil || rf2.torn != 0 || rf2.unterminated || len(rf2.rows) != len(rf.rows) {
			t.Fatalf("rows written back read as %d rows (torn %d, unterminated %v, %v), want %d", len(rf2.rows), rf2.torn, rf2.unterminated, err, len(rf.rows))
		}
		for i := range rf.rows {
			a, _ := json.Marshal(rf.rows[i])
			b, _ := json.Marshal(rf2.rows[i])
			if string(a) != string(b) {
				t.Fatalf("row %d changed when written back:\n%s\n%s", i, a, b)
			}
		}
	})
}

// FuzzUnpackRecords feeds arbitrary bytes to the records archive reader and places what it accepts
// with UnpackRecords. Neither may panic; ReadRecords must keep its bounds (lowered here, so that the
// fuzzer reaches them: the entries and their total size, uncompressed, within recordLimits), return
// records in name order with exactly a run's three files each; and every run that UnpackRecords
// places must read back as its record (ReadRecord). The seeds are a good archive, archives that pass
// each bound, and hostile entry names.
func FuzzUnpackRecords(f *testing.F) {
	// A good archive of one run: the first of a reproduction's archives.
	arch, err := os.ReadFile(filepath.Join("..", "..", "docs", "reproduction", "records", "medium", "002.tar.gz"))
	if err != nil {
		f.Fatal(err)
	}
	all, err := ReadRecords(bytes.NewReader(arch), "002.tar.gz")
	if err != nil || len(all) == 0 {
		f.Fatalf("002.tar.gz: %d records, %v", len(all), err)
	}
	var good bytes.Buffer
	if err := WriteRecords(&good, all[:1]); err != nil {
		f.Fatal(err)
	}
	setRecordLimits(f, 1<<13, 1<<15, 12)
	f.Add(good.Bytes())
	f.Add(good.Bytes()[:good.Len()/2])
	f.Add(zeroArchive(f, 3, 1<<13)) // within the bounds, not JSON
	f.Add(zeroArchive(f, 5, 1<<13)) // past the total
	f.Add(zeroArchive(f, 1, 1<<14)) // past the per-entry bound
	f.Add(zeroArchive(f, 13, 512))  // past the number of entries
	f.Add(tarGz(f, "../x/run.json", "{}"))
	f.Add(tarGz(f, "x/run.json", "{}", "x/rounds.jsonl", "", "x/status.json", "{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := ReadRecords(bytes.NewReader(data), "fuzz.tar.gz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.tar.gz") {
				t.Fatalf("error %v does not name the archive", err)
			}
			return
		}
		var total int64
		if n := len(recs) * len(recordFiles); n > recordLimits.Entries {
			t.Fatalf("%d entries accepted, the bound is %d", n, recordLimits.Entries)
		}
		for i, r := range recs {
			if i > 0 && recs[i-1].Name >= r.Name {
				t.Fatalf("records %q then %q", recs[i-1].Name, r.Name)
			}
			if len(r.Files) != len(recordFiles) {
				t.Fatalf("record %s has %d files", r.Name, len(r.Files))
			}
			for f, b := range r.Files {
				if !isRecordFile(f) || int64(len(b)) > recordLimits.File {
					t.Fatalf("record %s: file %q of %d bytes", r.Name, f, len(b))
				}
				total += int64(len(b))
			}
		}
		if total > recordLimits.Total {
			t.Fatalf("%d bytes accepted, the bound is %d", total, recordLimits.Total)
		}
		out := t.TempDir()
		res, err := UnpackRecords(recs, "fuzz.tar.gz", out)
		if err != nil {
			return
		}
		if res.Added != len(recs) {
			t.Fatalf("added %d of %d records to an empty directory", res.Added, len(recs))
		}
		for _, r := range recs {
			back, ok, err := ReadRecord(filepath.Join(out, r.Name))
			if err != nil || !ok {
				t.Fatalf("placed run %s does not read back: ok %v, %v", r.Name, ok, err)
			}
			for f, b := range r.Files {
				if !bytes.Equal(back.Files[f], b) {
					t.Fatalf("placed run %s: %s differs", r.Name, f)
				}
			}
		}
	})
}
