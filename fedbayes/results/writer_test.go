package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestCreateAppendFinishRoundTrip(t *testing.T) {
	root := t.TempDir()
	labels := map[string]string{"rule": "eaa", "weighting": "size"}
	rows := []Row{accRow(1, 0.5, 1.2), accRow(2, 0.7, 0.9), accRow(4, 0.8, 0.6)}
	dir := writeRun(t, root, "eaa size", labels, 3, rows, Completed)
	if filepath.Base(dir) != "eaa_size-seed3" {
		t.Errorf("run dir %q", dir)
	}
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := testMeta(t, "eaa size", labels, 3)
	if why := sameRun(run.Meta, want); why != "" {
		t.Errorf("meta differs: %s", why)
	}
	if run.Meta.Info.Backend != "test" || run.Meta.Schema != SchemaVersion {
		t.Errorf("meta %+v", run.Meta)
	}
	if run.Status.State != Completed || run.Status.Round != 4 || run.Status.Time == "" {
		t.Errorf("status %+v", run.Status)
	}
	if len(run.Rows) != len(rows) {
		t.Fatalf("%d rows, want %d", len(run.Rows), len(rows))
	}
	for i := range rows {
		if !reflect.DeepEqual(run.Rows[i], rows[i]) {
			t.Errorf("row %d: got %+v want %+v", i, run.Rows[i], rows[i])
		}
	}
	if v, err := run.Final(Accuracy); err != nil || v != 0.8 {
		t.Errorf("final accuracy %v, %v", v, err)
	}
	wantErr(t, func() error { _, err := run.Final("brier"); return err }(), `no metric "brier"`, "accuracy", dir)
	if tmp := tempFiles(t, root); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	// The spec is stored as given.
	var spec map[string]any
	if err := json.Unmarshal(run.Meta.Spec, &spec); err != nil || spec["setting"] != "eaa size" {
		t.Errorf("spec %s: %v", run.Meta.Spec, err)
	}
}

func TestCreateRefuses(t *testing.T) {
	root := t.TempDir()
	dir := writeRun(t, root, "a", nil, 1, []Row{accRow(1, 0.5, 1)}, "")
	_, err := Create(dir, testMeta(t, "a", nil, 1))
	wantErr(t, err, "already holds a run")
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Create(other, testMeta(t, "a", nil, 1))
	wantErr(t, err, "not empty", "notes.txt")
	for _, tc := range []struct {
		meta Meta
		want string
	}{
		{Meta{Spec: json.RawMessage(`{}`)}, "empty setting"},
		{Meta{Setting: "s"}, "empty spec"},
		{Meta{Setting: "s", Spec: json.RawMessage(`{`)}, "not valid JSON"},
		{Meta{Setting: "s", Spec: json.RawMessage(`{}`), Labels: map[string]string{"seed": "1"}}, "reserved"},
		{Meta{Setting: "s", Spec: json.RawMessage(`{}`), Labels: map[string]string{"setting": "x"}}, "reserved"},
	} {
		_, err := Create(filepath.Join(root, "new"), tc.meta)
		wantErr(t, err, tc.want)
	}
	// A Create killed between the rows file and run.json can be redone.
	crashed := filepath.Join(root, "crashed")
	if err := os.MkdirAll(crashed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crashed, RowsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(crashed, testMeta(t, "a", nil, 1))
	if err != nil {
		t.Fatalf("create over a crashed create: %v", err)
	}
	_ = w.Close()
	_, err = NewMeta("s", nil, 1, func() {}, testMeta(t, "s", nil, 1).Info)
	wantErr(t, err, "spec cannot be written as JSON")
}

func TestWriterOrderChecks(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "r"), testMeta(t, "s", nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"row 2", func() error { return w.Append(accRow(2, 0.5, 1)) }, ""},
		{"row 2 again", func() error { return w.Append(accRow(2, 0.5, 1)) }, "round 2 after round 2"},
		{"checkpoint before last row", func() error { return w.SaveCheckpoint(1, nil) }, "older than the last row"},
		{"checkpoint 3", func() error { return w.SaveCheckpoint(3, []byte("s3")) }, ""},
		{"row 3 after checkpoint 3", func() error { return w.Append(accRow(3, 0.5, 1)) }, "after the checkpoint of round 3"},
		{"checkpoint 3 again", func() error { return w.SaveCheckpoint(3, nil) }, "after the checkpoint of round 3"},
		{"bad row", func() error { return w.Append(Row{Round: 9, BytesSent: -1}) }, "bytes"},
		{"bad status", func() error { return w.Finish(Status{State: Diverged, Round: 3}) }, "without a reason"},
		{"unknown state", func() error { return w.Finish(Status{State: "done"}) }, "not one of"},
		{"keep 0", func() error { return w.SetKeepCheckpoints(0) }, "at least 1"},
		{"complete", func() error { return w.Complete(3) }, ""},
		{"after finish", func() error { return w.Append(accRow(5, 0.5, 1)) }, "is finished"},
		{"finish twice", func() error { return w.Complete(3) }, "is finished"},
	}
	for _, s := range steps {
		err := s.do()
		if s.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			continue
		}
		wantErr(t, err, s.want)
	}
}

func TestCheckpointsKeepAndVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, testMeta(t, "s", nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetKeepCheckpoints(2); err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= 5; r++ {
		if err := w.Append(accRow(r, 0.5, 1)); err != nil {
			t.Fatal(err)
		}
		if err := w.SaveCheckpoint(r, bytes.Repeat([]byte{byte(r)}, 100*r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rounds, err := listCheckpoints(dir)
	if err != nil || !reflect.DeepEqual(rounds, []int{4, 5}) {
		t.Fatalf("checkpoints %v (%v), want [4 5]", rounds, err)
	}
	c, ok, skipped, err := LatestCheckpoint(dir)
	if err != nil || !ok || len(skipped) != 0 {
		t.Fatalf("latest: ok %v skipped %v err %v", ok, skipped, err)
	}
	if c.Round != 5 || c.Rows != 5 || c.LastRowRound != 5 || !bytes.Equal(c.Blob, bytes.Repeat([]byte{5}, 500)) {
		t.Errorf("checkpoint round %d rows %d last %d blob %d bytes", c.Round, c.Rows, c.LastRowRound, len(c.Blob))
	}
	// Flip one byte of the newest: it fails its checksum and the older one is used.
	path := filepath.Join(dir, CheckpointsDir, checkpointName(5))
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 1
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, ok, skipped, err = LatestCheckpoint(dir)
	if err != nil || !ok || c.Round != 4 || len(skipped) != 1 {
		t.Fatalf("after corruption: round %d ok %v skipped %v err %v", c.Round, ok, skipped, err)
	}
	wantErr(t, func() error { _, err := readCheckpointFile(path); return err }(), "checksum mismatch")
	for name, content := range map[string]string{
		"not magic":    "hello\n",
		"no header":    checkpointMagic + `{"round":1`,
		"short blob":   checkpointMagic + `{"round":1,"size":10,"sha256":""}` + "\nabc",
		"wrong number": checkpointMagic + `{"round":2,"size":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}` + "\n",
	} {
		p := filepath.Join(t.TempDir(), checkpointName(1))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readCheckpointFile(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
