package reproduce

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"fedbayes.dev/fedbayes/results"
)

// The run records let a reproduction be computed over sittings on different machines: a machine
// keeps the results directory only while it lives, so the finished runs' records (each run's
// run.json, rounds.jsonl and status.json: its spec, provenance, metric rows and end, but no
// checkpoints) are kept beside the report, one archive per paper and budget, and read back into the
// results directory before anything runs. A run found there is not run again, and the report can be
// written, and checked, from the records alone.

// RecordsFile is the archive of a paper's finished runs at budget b in the records directory dir:
// DIR/BUDGET/ID.tar.gz (ID the paper's results sub-directory).
func RecordsFile(dir string, p *Paper, b Budget) string {
	return filepath.Join(dir, string(b), p.dir()+".tar.gz")
}

// LoadRecords writes the runs of each paper's records archive at budget b into the results
// directory, leaving every run directory it already has as it is. A paper without an archive adds
// nothing. It returns the number of runs added and kept.
func LoadRecords(papers []*Paper, resultsDir, recordsDir string, b Budget) (added, kept int, err error) {
	for _, p := range papers {
		file := RecordsFile(recordsDir, p, b)
		recs, err := readRecords(file)
		if err != nil {
			return added, kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		res, err := results.UnpackRecords(recs, file, filepath.Join(resultsDir, p.dir()))
		if err != nil {
			return added, kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		added += res.Added
		kept += res.Kept
	}
	return added, kept, nil
}

// readRecords reads a records archive; a missing one holds no records.
func readRecords(file string) ([]results.Record, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	return results.ReadRecords(bytes.NewReader(data), file)
}

// SaveRecords writes each paper's records archive at budget b: every record the archive held, with
// the finished runs (completed or diverged) of the paper's presets at b found in the results
// directory added or, for a run of the same name, in its place. A run that is not finished in the
// results directory (interrupted, or failed) keeps its record, so no record is ever dropped. The
// archive is written atomically, and only when it has a record. It returns the records kept, by
// paper ID.
func SaveRecords(papers []*Paper, resultsDir, recordsDir string, b Budget) (map[string]int, error) {
	kept := map[string]int{}
	for _, p := range papers {
		file := RecordsFile(recordsDir, p, b)
		prev, err := readRecords(file)
		if err != nil {
			return kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		dirs, err := RunDirs([]*Paper{p}, Options{Dir: resultsDir, Budget: b})
		if err != nil {
			return kept, err
		}
		byName := map[string]results.Record{}
		pdir := filepath.Join(resultsDir, p.dir())
		for _, r := range prev {
			byName[r.Name] = r
			dirs = append(dirs, filepath.Join(pdir, r.Name))
		}
		for _, d := range dirs {
			rec, ok, err := results.ReadRecord(d)
			if err != nil {
				return kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
			}
			if ok {
				byName[rec.Name] = rec
			}
		}
		if len(byName) == 0 {
			continue
		}
		recs := make([]results.Record, 0, len(byName))
		for _, r := range byName {
			recs = append(recs, r)
		}
		var buf bytes.Buffer
		if err := results.WriteRecords(&buf, recs); err != nil {
			return kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return kept, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		if err := results.WriteFileAtomic(file, buf.Bytes(), 0o644); err != nil {
			return kept, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		kept[p.ID] = len(recs)
	}
	return kept, nil
}
