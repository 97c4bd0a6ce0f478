package reproduce

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestUntrustedRecordLeftOut: an archive with one record that readers do not trust (a duplicate key
// in its status.json) no longer refuses the whole archive: LoadRecords restores the others, the
// report's notes name the record, its reason and the command that drops it, and DropRecord removes
// it from the archive (written atomically: the archive then reads, and holds the other records).
func TestUntrustedRecordLeftOut(t *testing.T) {
	first, records := t.TempDir(), t.TempDir()
	name := jamoussiPreset.Name(Medium)
	writeJamoussiRuns(t, first, name, []int64{0}, 0, 2)
	papers, _ := SelectPapers([]string{"002"})
	kept, err := SaveRecords(papers, first, records, Medium)
	if err != nil || kept["002"] != 2 {
		t.Fatalf("save: %v, %v; want 2 records", kept, err)
	}
	file := RecordsFile(records, papers[0], Medium)
	recs, err := readRecords(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := recs[0].Name
	recs[0].Files[results.StatusFile] = bytes.Replace(recs[0].Files[results.StatusFile], []byte("{"), []byte(`{"state": "completed", `), 1)
	var buf bytes.Buffer
	if err := results.WriteRecords(&buf, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	second := t.TempDir()
	added, _, err := LoadRecords(papers, second, records, Medium)
	if err != nil || added != 1 {
		t.Fatalf("load: %d added, %v; want 1 (the untrusted record left out)", added, err)
	}
	if results.HasRun(filepath.Join(second, "002", bad)) {
		t.Errorf("the untrusted record %s was restored", bad)
	}
	notes, err := StaleRecordNotes(papers[0], records, Medium)
	joined := strings.Join(notes, "\n")
	if err != nil || len(notes) != 1 || !strings.Contains(joined, "left out the record "+bad) ||
		!strings.Contains(joined, bad+"/status.json") || !strings.Contains(joined, `the key "state" appears twice`) ||
		!strings.Contains(joined, "-drop-record "+bad) {
		t.Errorf("notes %q, %v; want one naming %s, its duplicate key and -drop-record", notes, err, bad)
	}

	files, left, err := DropRecord(papers, records, Medium, bad)
	if err != nil || len(files) != 1 || files[0] != file || left[0] != 1 {
		t.Fatalf("drop: %v %v, %v; want %s with 1 record left", files, left, err, file)
	}
	after, err := readRecords(file)
	if err != nil || len(after) != 1 || after[0].Name != recs[1].Name {
		t.Errorf("the archive after the drop: %v, %v; want only %s", after, err, recs[1].Name)
	}
	if notes, err := StaleRecordNotes(papers[0], records, Medium); err != nil || len(notes) != 0 {
		t.Errorf("notes after the drop: %q, %v; want none", notes, err)
	}
	if _, _, err := DropRecord(papers, records, Medium, bad); err == nil || !strings.Contains(err.Error(), "no records archive") {
		t.Errorf("a second drop: %v; want no archive holding it", err)
	}
}
