package reproduce

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

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
// directory, leaving every run the directory already has as it is. A paper without an archive adds
// nothing. It returns the number of runs added and kept.
func LoadRecords(papers []*Paper, resultsDir, recordsDir string, b Budget) (added, kept int, err error) {
	for _, p := range papers {
		res, err := loadRecords(p, resultsDir, recordsDir, b)
		if err != nil {
			return added, kept, err
		}
		added += res.Added
		kept += res.Kept
	}
	return added, kept, nil
}

// loadRecords unpacks one paper's archive, if there is one.
func loadRecords(p *Paper, resultsDir, recordsDir string, b Budget) (results.UnpackResult, error) {
	file := RecordsFile(recordsDir, p, b)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return results.UnpackResult{}, nil
	}
	if err != nil {
		return results.UnpackResult{}, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
	}
	res, err := results.UnpackRecords(bytes.NewReader(data), file, filepath.Join(resultsDir, p.dir()))
	if err != nil {
		return res, fmt.Errorf("reproduce %s: %w", p.ID, err)
	}
	return res, nil
}

// SaveRecords writes each paper's records archive at budget b: the finished runs (completed or
// diverged) of the paper's presets at b found in the results directory, and every run the archive
// held before (read back into the results directory first, so no record is ever lost). The archive
// is written atomically, and only when there is a run to keep. It returns the runs kept, by paper ID.
func SaveRecords(papers []*Paper, resultsDir, recordsDir string, b Budget) (map[string]int, error) {
	kept := map[string]int{}
	for _, p := range papers {
		prev, err := loadRecords(p, resultsDir, recordsDir, b)
		if err != nil {
			return kept, err
		}
		pdir := filepath.Join(resultsDir, p.dir())
		dirs, err := RunDirs([]*Paper{p}, Options{Dir: resultsDir, Budget: b})
		if err != nil {
			return kept, err
		}
		seen := map[string]bool{}
		var have []string
		for _, d := range append(dirs, prevDirs(pdir, prev.Runs)...) {
			if !seen[d] && results.HasRun(d) {
				seen[d] = true
				have = append(have, d)
			}
		}
		sort.Strings(have)
		var buf bytes.Buffer
		n, err := results.PackRecords(&buf, pdir, have)
		if err != nil {
			return kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		if n == 0 {
			continue
		}
		file := RecordsFile(recordsDir, p, b)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return kept, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		if err := results.WriteFileAtomic(file, buf.Bytes(), 0o644); err != nil {
			return kept, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		kept[p.ID] = n
	}
	return kept, nil
}

// prevDirs turns an archive's run paths into run directories under pdir.
func prevDirs(pdir string, runs []string) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = filepath.Join(pdir, filepath.FromSlash(r))
	}
	return out
}
