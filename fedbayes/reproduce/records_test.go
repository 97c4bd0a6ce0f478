package reproduce

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
)

// TestRecordsCarryTheReport keeps the records of a partly run medium budget, reads them into an
// empty results directory on "another machine", and checks that the report written from there is
// the same; a later save from a directory that lost some runs still keeps every record.
func TestRecordsCarryTheReport(t *testing.T) {
	first, records := t.TempDir(), t.TempDir()
	name := jamoussiPreset.Name(Medium)
	writeJamoussiRuns(t, first, jamoussiPreset.Name(Reduced), []int64{0}, 0, 2) // another budget: not kept
	writeJamoussiRuns(t, first, name, []int64{0, 1, 2}, 0, 0)
	// An unfinished run of the preset: not kept either.
	unfinished := filepath.Join(first, "002", results.RunName(name+"-n1-EAA", 0))
	if err := os.Remove(filepath.Join(unfinished, results.StatusFile)); err != nil {
		t.Fatal(err)
	}
	papers, _ := SelectPapers([]string{"002"})
	kept, err := SaveRecords(papers, first, records, Medium)
	if err != nil {
		t.Fatal(err)
	}
	if kept["002"] != 47 {
		t.Errorf("kept %v, want 47 runs of 002 (48 less the unfinished one)", kept)
	}
	file := RecordsFile(records, papers[0], Medium)
	if file != filepath.Join(records, "medium", "002.tar.gz") {
		t.Errorf("records file %s", file)
	}
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}

	second := t.TempDir()
	added, kept2, err := LoadRecords(papers, second, records, Medium)
	if err != nil || added != 47 || kept2 != 0 {
		t.Fatalf("load: %d added, %d kept, %v; want 47 added", added, kept2, err)
	}
	if err := os.RemoveAll(unfinished); err != nil { // its note ("skipped ...") is the only difference
		t.Fatal(err)
	}
	md1, f1 := writeReport(t, first, Medium)
	md2, f2 := writeReport(t, second, Medium)
	if !reflect.DeepEqual(f1, f2) {
		t.Errorf("findings differ: %+v against %+v", f1, f2)
	}
	if strings.ReplaceAll(md1, first, "DIR") != strings.ReplaceAll(md2, second, "DIR") {
		t.Error("the report from the records differs from the report from the runs")
	}

	// The second machine finishes the unfinished run and loses two others: the save keeps all 48.
	for _, s := range []string{"-n1-GAA", "-n2-AALV"} {
		if err := os.RemoveAll(filepath.Join(second, "002", results.RunName(name+s, 1))); err != nil {
			t.Fatal(err)
		}
	}
	eaa := variantIndex(t, name, "n1-EAA")
	writeJamoussiRuns(t, second, name, []int64{0}, eaa, eaa+1)
	// And a recorded run there is unfinished (started again by hand and interrupted): its record stays.
	restarted := filepath.Join(second, "002", results.RunName(name+"-n2-AALV", 0))
	if err := os.Remove(filepath.Join(restarted, results.StatusFile)); err != nil {
		t.Fatal(err)
	}
	kept, err = SaveRecords(papers, second, records, Medium)
	if err != nil || kept["002"] != 48 {
		t.Errorf("second save: %v, %v; want 48 runs of 002", kept, err)
	}
	// Saving again changes nothing.
	after, _ := os.ReadFile(file)
	if _, err := SaveRecords(papers, second, records, Medium); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(file)
	if string(after) != string(again) || string(before) == string(after) {
		t.Error("the archive changed on a save with nothing new, or not on one with a new run")
	}
	// No archive: nothing to load, and no error.
	if added, _, err := LoadRecords(papers, t.TempDir(), t.TempDir(), Medium); added != 0 || err != nil {
		t.Errorf("no records: %d added, %v", added, err)
	}
}

// variantIndex returns the index of the variant with this label in the preset's spec.
func variantIndex(t *testing.T, preset, label string) int {
	t.Helper()
	spec, err := presets.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range spec.Variants {
		if v.Label == label {
			return i
		}
	}
	t.Fatalf("%s has no variant %s", preset, label)
	return -1
}

// TestStaleRecordsRunAgain keeps the records of a preset, changes one recorded spec (as when a
// preset changes after its runs were recorded), and checks that LoadRecords does not restore that
// record (so the preset runs it again instead of refusing the finished run of another experiment),
// that the report names it, and that a save after the rerun replaces it.
func TestStaleRecordsRunAgain(t *testing.T) {
	first, records := t.TempDir(), t.TempDir()
	name := jamoussiPreset.Name(Medium)
	writeJamoussiRuns(t, first, name, []int64{0}, 0, 2)
	papers, _ := SelectPapers([]string{"002"})
	// The first run's recorded spec says another learning rate.
	stale := results.RunName(name+"-n0-FedAvg", 0)
	metaFile := filepath.Join(first, "002", stale, results.MetaFile)
	raw, err := os.ReadFile(metaFile)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(raw), `"lr": 0.01`, `"lr": 0.02`, 1)
	if changed == string(raw) {
		t.Fatalf("%s has no \"lr\": 0.01 to change", metaFile)
	}
	if err := os.WriteFile(metaFile, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	// And a run of a setting the preset no longer has (a row dropped since it ran).
	gone := name + "-n9-Gone"
	meta, err := results.NewMeta(gone, map[string]string{"variant": "n9-Gone"}, 0, map[string]any{"name": gone}, cleanInfo())
	if err != nil {
		t.Fatal(err)
	}
	goneDir := filepath.Join(t.TempDir(), results.RunName(gone, 0))
	writeOneRound(t, goneDir, meta)
	if kept, err := SaveRecords(papers, first, records, Medium); err != nil || kept["002"] != 2 {
		t.Fatalf("save: %v, %v; want 2 records", kept, err)
	}
	// The archive of an earlier sitting held that run too.
	file := RecordsFile(records, papers[0], Medium)
	recs, err := readRecords(file)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := results.ReadRecord(goneDir)
	if err != nil || !ok {
		t.Fatalf("record of %s: %v, %v", gone, ok, err)
	}
	var buf bytes.Buffer
	if err := results.WriteRecords(&buf, append(recs, rec)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	second := t.TempDir()
	added, _, err := LoadRecords(papers, second, records, Medium)
	if err != nil || added != 1 {
		t.Fatalf("load: %d added, %v; want 1 (the stale records left out)", added, err)
	}
	if results.HasRun(filepath.Join(second, "002", stale)) {
		t.Errorf("the stale record %s was restored", stale)
	}
	notes, err := StaleRecordNotes(papers[0], records, Medium)
	joined := strings.Join(notes, "\n")
	if err != nil || len(notes) != 2 || !strings.Contains(joined, stale) || !strings.Contains(joined, "training.lr: 0.02 in the recorded run") ||
		!strings.Contains(joined, "setting "+gone+" is not one of its settings") ||
		!strings.Contains(joined, "superseded runs of a previous version of the preset's settings, never rerun") ||
		!strings.Contains(joined, "the preset runs them again") {
		t.Errorf("stale notes %q, %v; want one naming %s and its learning rate, one naming %s", notes, err, stale, gone)
	}
	// The preset runs it again: the new record replaces the stale one, and no note is left.
	writeJamoussiRuns(t, second, name, []int64{0}, 0, 1)
	if kept, err := SaveRecords(papers, second, records, Medium); err != nil || kept["002"] != 3 {
		t.Fatalf("second save: %v, %v; want 3 records (none dropped)", kept, err)
	}
	if notes, err := StaleRecordNotes(papers[0], records, Medium); err != nil || len(notes) != 1 || !strings.Contains(notes[0], gone) {
		t.Errorf("after the rerun: stale notes %q, %v; want only the dropped setting's", notes, err)
	}
}
