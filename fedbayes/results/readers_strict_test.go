package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/strictjson/strictjsontest"
)

// jsonReader is one reader of a JSON file of a run folder, for TestReadersStrict.
type jsonReader struct {
	name string
	// file is the file's path under the run folder.
	file string
	// line is the line of the file that holds the JSON object (rounds.jsonl has one per row, a
	// checkpoint its header after the magic line); 0 is the whole file.
	line int
	// read reads the run folder's file as the package's readers do.
	read func(dir string) error
}

// jsonReaders are every reader of a JSON file that this package reads from disk. A new reader of a
// JSON file belongs in this table.
var jsonReaders = []jsonReader{
	{"status", StatusFile, 0, func(dir string) error { _, err := ReadRun(dir); return err }},
	{"rows", RowsFile, 2, func(dir string) error { _, err := ReadRun(dir); return err }},
	{"run.json", MetaFile, 0, func(dir string) error { _, err := ReadMeta(dir); return err }},
	{"record", MetaFile, 0, func(dir string) error { _, _, err := ReadRecord(dir); return err }},
	{"claim", ClaimFile, 0, func(dir string) error { _, _, err := readClaim(dir); return err }},
	{"checkpoint header", filepath.Join(CheckpointsDir, checkpointName(2)), 2, func(dir string) error {
		_, err := readCheckpointFile(filepath.Join(dir, CheckpointsDir, checkpointName(2)))
		return err
	}},
}

// strictRun writes a completed run of two rounds with a checkpoint and a claim file, every JSON
// file the readers read.
func strictRun(t testing.TB) string {
	t.Helper()
	dir := writeRun(t, t.TempDir(), "strict", nil, 1, []Row{accRow(1, 0.5, 1), accRow(2, 0.6, 0.9)}, Completed)
	ckpt, err := encodeCheckpoint(Checkpoint{Round: 2, Blob: []byte("state"), Rows: 2, LastRowRound: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, CheckpointsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CheckpointsDir, checkpointName(2)), ckpt, 0o644); err != nil {
		t.Fatal(err)
	}
	owner, err := json.Marshal(selfOwner())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ClaimFile), owner, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadersStrict feeds every reader of jsonReaders each hostile variant of its file
// (strictjsontest.Variants: a duplicate key, an unknown field, NaN, Infinity, 1e999, a truncated
// object) and expects an error that names the file and the problem; the untouched file reads.
func TestReadersStrict(t *testing.T) {
	for _, r := range jsonReaders {
		t.Run(r.name, func(t *testing.T) {
			dir := strictRun(t)
			if err := r.read(dir); err != nil {
				t.Fatalf("the valid file: %v", err)
			}
			path := filepath.Join(dir, r.file)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.SplitAfter(orig, []byte("\n"))
			obj := orig
			if r.line > 0 {
				obj = bytes.TrimSuffix(lines[r.line-1], []byte("\n"))
			}
			variants, err := strictjsontest.Variants(obj)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range variants {
				doc := v.Doc
				if r.line > 0 {
					c := append([][]byte(nil), lines...)
					c[r.line-1] = append(append([]byte(nil), v.Doc...), '\n')
					doc = bytes.Join(c, nil)
				}
				if err := os.WriteFile(path, doc, 0o644); err != nil {
					t.Fatal(err)
				}
				err := r.read(dir)
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), v.Want) {
					t.Errorf("%s: %v; want an error naming %s and %q", v.Name, err, path, v.Want)
				}
			}
		})
	}
}
