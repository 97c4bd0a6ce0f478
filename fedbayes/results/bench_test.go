package results

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkAppend measures appending one synced row (the per-round cost of the record).
func BenchmarkAppend(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "r"), Meta{Setting: "s", Spec: []byte(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	row := accRow(0, 0.5, 1)
	row.ClientAccuracy = make([]float64, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		row.Round = i + 1
		if err := w.Append(row); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveCheckpoint measures an atomic checkpoint of a 1 MiB blob (about a 784-100-10
// Bayesian MLP's means and log-variances in float32 is 0.6 MiB), with pruning.
func BenchmarkSaveCheckpoint(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "r"), Meta{Setting: "s", Spec: []byte(`{}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	blob := bytes.Repeat([]byte{7}, 1<<20)
	b.SetBytes(int64(len(blob)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := w.SaveCheckpoint(i, blob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadAndTable measures loading 60 runs of 100 rows and building their table.
func BenchmarkLoadAndTable(b *testing.B) {
	root := b.TempDir()
	for s := 0; s < 12; s++ {
		for seed := int64(1); seed <= 5; seed++ {
			meta := Meta{Setting: "setting" + strconv.Itoa(s), Seed: seed, Spec: []byte(`{}`)}
			dir := filepath.Join(root, RunName(meta.Setting, seed))
			w, err := Create(dir, meta)
			if err != nil {
				b.Fatal(err)
			}
			_ = w.Close()
			rows := make([]Row, 100) // written in one go: the setup need not sync every row
			for r := range rows {
				rows[r] = Row{Round: r + 1, Metrics: map[string]float64{Accuracy: 0.5, NLL: 1, ECE: 0.1}}
			}
			data, err := encodeRows(rows)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := marshalIndented(Status{State: Completed, Round: 100})
			if WriteFileAtomic(filepath.Join(dir, RowsFile), data, 0o644) != nil || WriteFileAtomic(filepath.Join(dir, StatusFile), st, 0o644) != nil {
				b.Fatal("setup failed")
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runs, _, err := Load(root)
		if err != nil || len(runs) != 60 {
			b.Fatal(len(runs), err)
		}
	}
}
