package reproduce

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"

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
// directory, leaving every run directory it already has as it is. A record that is not a run of its
// preset as it stands (staleRecords: the preset's spec changed since it ran) is not written: its
// run runs again, and SaveRecords then puts the new record in its place; until then the archive
// keeps it and the report names it (StaleRecordNotes). A paper without an archive adds nothing. It
// returns the number of runs added and kept.
func LoadRecords(papers []*Paper, resultsDir, recordsDir string, b Budget) (added, kept int, err error) {
	if err := checkRecordsBudget(b); err != nil {
		return 0, 0, err
	}
	for _, p := range papers {
		file := RecordsFile(recordsDir, p, b)
		recs, err := readRecords(file)
		if err != nil {
			return added, kept, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		recs, _, err = staleRecords(p, b, recs)
		if err != nil {
			return added, kept, fmt.Errorf("reproduce %s: %s: %w", p.ID, file, err)
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

// checkRecordsBudget refuses a budget that is not one of ParseBudget's: the budget is a folder of
// the records directory (RecordsFile), so another string ("../x", "/tmp") would read or write an
// archive outside it.
func checkRecordsBudget(b Budget) error {
	if _, err := ParseBudget(string(b)); err != nil {
		return fmt.Errorf("%w (the records of a budget are kept in DIR/BUDGET)", err)
	}
	return nil
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
	if err := checkRecordsBudget(b); err != nil {
		return nil, err
	}
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

// staleRecords splits a paper's records at budget b into those to restore and those that are not runs
// of their preset as it stands (a setting it no longer has, or engine.SpecCheck, the check run
// --resume applies: another spec, labels or seed), grouped as report notes by preset and reason.
// Records that belong to no preset of the paper at b (another budget's) are restored: the report
// ignores them, as it ignores such run folders.
func staleRecords(p *Paper, b Budget, recs []results.Record) (keep []results.Record, notes []string, err error) {
	settings, specOf, err := presetChecks(p, b)
	if err != nil {
		return nil, nil, err
	}
	stale := map[string][]string{}
	var untrusted []string
	for _, rec := range recs {
		if err := results.CheckRecord(rec); err != nil {
			untrusted = append(untrusted, fmt.Sprintf("left out the record %s kept in the records: it is not a run that readers trust (%v); "+
				"it is not restored, so its preset runs it again and the new record replaces it, "+
				"or `fedbayes reproduce -records DIR -budget %s -drop-record %s` removes it from the archive", rec.Name, err, b, rec.Name))
			continue
		}
		m, err := results.ParseMeta(rec.Name+"/"+results.MetaFile, rec.Files[results.MetaFile])
		if err != nil {
			return nil, nil, err
		}
		name := presetOf(p, b, m.Setting)
		if name == "" {
			keep = append(keep, rec)
			continue
		}
		why := fmt.Sprintf("setting %s is not one of its settings", m.Setting)
		gone := !settings[name][m.Setting]
		if !gone {
			if err := specOf[name](m); err == nil {
				keep = append(keep, rec)
				continue
			} else {
				why = err.Error()
			}
		}
		key := name + "\x00" + why + "\x00" + fmt.Sprint(gone)
		stale[key] = append(stale[key], rec.Name)
	}
	for key, names := range stale {
		name, rest, _ := strings.Cut(key, "\x00")
		why, gone, _ := strings.Cut(rest, "\x00")
		sort.Strings(names)
		next := "they are not restored, so the preset runs them again and the new records replace them"
		if gone == "true" {
			// A setting the preset no longer has is never run again: say how to drop its records.
			next = fmt.Sprintf("superseded runs of a previous version of the preset's settings, never rerun; they are not restored, and "+
				"`fedbayes reproduce -records DIR -budget %s -drop-record RUN` drops each from the archive", b)
		}
		notes = append(notes, fmt.Sprintf("left out %d %s of %s kept in the records: not runs of the preset as it stands (%s); %s: %s",
			len(names), words.Plural(len(names), "record"), name, why, next, strings.Join(names, ", ")))
	}
	sort.Strings(notes)
	return keep, append(untrusted, notes...), nil
}

// DropRecord removes the record of the run named run from each archive of the papers at budget b in
// recordsDir that holds it, writing each archive atomically (results.DropRecord, then
// results.WriteFileAtomic: a reader sees the archive before or after, never a part). It is the way
// out when a record is not one readers trust and the report is wanted without it. It returns the
// archives changed and the records each keeps; no archive holding the run is an error.
func DropRecord(papers []*Paper, recordsDir string, b Budget, run string) (files []string, left []int, err error) {
	if err := checkRecordsBudget(b); err != nil {
		return nil, nil, err
	}
	for _, p := range papers {
		file := RecordsFile(recordsDir, p, b)
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return files, left, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		out, n, err := results.DropRecord(data, file, run)
		if err != nil {
			if errors.Is(err, results.ErrNoRecord) {
				continue
			}
			return files, left, fmt.Errorf("reproduce %s: %w", p.ID, err)
		}
		if err := results.WriteFileAtomic(file, out, 0o644); err != nil {
			return files, left, fmt.Errorf("reproduce %s: records: %w", p.ID, err)
		}
		files, left = append(files, file), append(left, n)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("reproduce: no records archive at budget %s in %s holds a record of run %s", b, recordsDir, run)
	}
	return files, left, nil
}

// StaleRecordNotes names, for the report, the records of paper p's archive at budget b in recordsDir
// that LoadRecords does not restore (staleRecords). A missing archive has none.
func StaleRecordNotes(p *Paper, recordsDir string, b Budget) ([]string, error) {
	if err := checkRecordsBudget(b); err != nil {
		return nil, err
	}
	recs, err := readRecords(RecordsFile(recordsDir, p, b))
	if err != nil {
		return nil, err
	}
	_, notes, err := staleRecords(p, b, recs)
	return notes, err
}
