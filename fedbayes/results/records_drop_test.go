package results

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestDropRecord: dropping a record gives the archive WriteRecords writes for the other records;
// an archive without the run is ErrNoRecord; a record that ReadRecords refuses for its own entries
// (it lacks its status.json) can be dropped, which leaves an archive ReadRecords reads.
func TestDropRecord(t *testing.T) {
	_, recs := fixtureRecords(t)
	var all, rest bytes.Buffer
	if err := WriteRecords(&all, recs); err != nil {
		t.Fatal(err)
	}
	if err := WriteRecords(&rest, recs[1:]); err != nil {
		t.Fatal(err)
	}
	out, left, err := DropRecord(all.Bytes(), "x.tar.gz", recs[0].Name)
	if err != nil || left != 1 || !bytes.Equal(out, rest.Bytes()) {
		t.Errorf("drop %s: %d left, %v; want the archive of the other record", recs[0].Name, left, err)
	}
	if _, _, err := DropRecord(all.Bytes(), "x.tar.gz", "c-seed9"); !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "x.tar.gz") {
		t.Errorf("drop of a run without a record: %v; want ErrNoRecord naming the archive", err)
	}
	if _, _, err := DropRecord(all.Bytes(), "x.tar.gz", "../a"); err == nil {
		t.Error("drop of ../a: no error")
	}
	// a-seed0 lacks its status.json: ReadRecords refuses the archive, DropRecord removes it.
	f := recs[0].Files
	broken := tarGz(t, "a-seed0/"+MetaFile, string(f[MetaFile]), "a-seed0/"+RowsFile, string(f[RowsFile]),
		"b-seed1/"+MetaFile, string(recs[1].Files[MetaFile]), "b-seed1/"+RowsFile, string(recs[1].Files[RowsFile]),
		"b-seed1/"+StatusFile, string(recs[1].Files[StatusFile]))
	if _, err := ReadRecords(bytes.NewReader(broken), "broken.tar.gz"); err == nil || !strings.Contains(err.Error(), "a-seed0 lacks status.json") {
		t.Fatalf("the broken archive reads: %v", err)
	}
	out, left, err = DropRecord(broken, "broken.tar.gz", "a-seed0")
	if err != nil || left != 1 || !bytes.Equal(out, rest.Bytes()) {
		t.Errorf("drop from the broken archive: %d left, %v", left, err)
	}
}

// TestCheckRecord: a record whose status.json has a duplicate key is not trusted, and the reason
// names its file as the archive does (NAME/status.json), not a temporary folder; the good record is.
func TestCheckRecord(t *testing.T) {
	_, recs := fixtureRecords(t)
	if err := CheckRecord(recs[0]); err != nil {
		t.Fatalf("a good record: %v", err)
	}
	bad := Record{Name: recs[0].Name, Files: map[string][]byte{}}
	for k, v := range recs[0].Files {
		bad.Files[k] = v
	}
	bad.Files[StatusFile] = []byte(strings.Replace(string(bad.Files[StatusFile]), "{", `{"state": "completed", `, 1))
	err := CheckRecord(bad)
	if err == nil || !strings.Contains(err.Error(), "a-seed0/status.json") || !strings.Contains(err.Error(), "appears twice") ||
		strings.Contains(err.Error(), os.TempDir()) {
		t.Errorf("CheckRecord = %v; want the duplicate key of a-seed0/status.json, no temporary folder", err)
	}
}
