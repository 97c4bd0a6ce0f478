package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReproduceRecordsFlag: -records reads the records before writing the report, and a corrupt
// archive is an error naming it.
func TestReproduceRecordsFlag(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "records")
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(filepath.Join(bad, "reduced"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "reduced", "002.tar.gz"), []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.md")
	args := func(rec string) []string {
		return []string{"reproduce", "-report-only", "-no-figures", "-papers", "002", "-results", filepath.Join(dir, "res"), "-records", rec, "-o", out}
	}
	runCommandCases(t, []commandCase{
		{"no records yet", args(records), 0, "records: 0 finished runs read from " + records, ""},
		{"corrupt records", args(bad), 1, "", filepath.Join(bad, "reduced", "002.tar.gz") + ": not a gzip archive"},
		{"drop without records", []string{"reproduce", "-drop-record", "x-seed0"}, 2, "", "-drop-record needs -records DIR"},
		{"drop from no archive", []string{"reproduce", "-papers", "002", "-records", records, "-drop-record", "x-seed0"}, 1, "",
			"no records archive at budget reduced in " + records + " holds a record of run x-seed0"},
		{"drop from a corrupt archive", []string{"reproduce", "-papers", "002", "-records", bad, "-drop-record", "x-seed0"}, 1, "", "not a gzip archive"},
	})

}
