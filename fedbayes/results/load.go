package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Run is one run as read from disk.
type Run struct {
	// Dir is the run directory.
	Dir string
	// Meta is run.json.
	Meta Meta
	// Status is status.json; its State is empty for an incomplete run.
	Status Status
	// Rows are the complete rows of rounds.jsonl, in increasing round.
	Rows []Row
	// TornBytes is the length of an incomplete last line that was ignored (0 if none).
	TornBytes int
	// Unterminated is true when the last row is complete but its newline is missing; the row is
	// kept (see Check for what makes a finished run's rows untrustworthy).
	Unterminated bool
}

// Final returns the value of metric in the run's last row. It is an error if the run has no rows
// or its last row lacks the metric (the message lists the metrics present).
func (r Run) Final(metric string) (float64, error) {
	if len(r.Rows) == 0 {
		return 0, fmt.Errorf("results: run %s has no rows", r.Dir)
	}
	last := r.Rows[len(r.Rows)-1]
	v, ok := last.Metrics[metric]
	if !ok {
		return 0, fmt.Errorf("results: run %s, round %d: no metric %q (has %v)", r.Dir, last.Round, metric, last.MetricNames())
	}
	return v, nil
}

// ReadRun reads the run in dir whatever its state (see Run.Status for whether it is complete).
func ReadRun(dir string) (Run, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return Run{}, err
	}
	st, _, err := readStatus(dir)
	if err != nil {
		return Run{}, err
	}
	rf, err := readRows(dir)
	if err != nil {
		return Run{}, err
	}
	return Run{Dir: dir, Meta: meta, Status: st, Rows: rf.rows, TornBytes: rf.torn, Unterminated: rf.unterminated}, nil
}

// Skipped is a run that Load left out, with the reason.
type Skipped struct {
	// Dir is the run directory.
	Dir string
	// Reason says why, e.g. "incomplete (no status)" or "diverged at round 7: NaN loss".
	Reason string
}

// String formats the skip as "DIR: REASON".
func (s Skipped) String() string { return s.Dir + ": " + s.Reason }

// ErrNoRuns is LoadWith's error for a directory that holds no runs at all (errors.Is).
var ErrNoRuns = errors.New("holds no runs")

// Load is LoadWith without an Expect: rows are checked against the status, not the spec.
func Load(dirs ...string) (runs []Run, skipped []Skipped, err error) {
	return LoadWith(LoadOptions{}, dirs...)
}

// LoadWith reads the completed runs under one or more results directories. Each directory is
// either a run directory itself or holds run directories as its immediate sub-directories. Runs
// that are incomplete, failed or diverged, that cannot be read, or that opt refuses (CheckRuns: rows
// against status and spec, the recorded spec, provenance), are listed in skipped with the reason
// rather than failing the load, and so is a sub-directory that holds a run's files but no run.json:
// nothing is dropped silently. It is an error if a directory is missing or holds no runs at all, or
// if two finished runs are the same run (setting, labels and seed; CheckUnique). Runs are returned
// in the order of the arguments, then by directory name.
func LoadWith(opt LoadOptions, dirs ...string) (runs []Run, skipped []Skipped, err error) {
	runs, diverged, skipped, err := LoadFinished(opt, dirs...)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range diverged {
		skipped = append(skipped, Skipped{Dir: r.Dir, Reason: r.Status.String()})
	}
	return runs, skipped, nil
}

// LoadFinished is LoadWith that returns the diverged runs that opt trusts apart (diverged), rather
// than among the skipped ones: a table shows them as diverged instead of dropping them
// (TableSpec.Diverged).
func LoadFinished(opt LoadOptions, dirs ...string) (runs, diverged []Run, skipped []Skipped, err error) {
	return loadFinished(opt, nil, dirs)
}

// LoadWithKnown is LoadWith that takes the runs of known (by run directory, as the directories
// under dirs are named) as they are instead of reading their folders: a writer that holds the runs
// it has just written reads only the others.
func LoadWithKnown(opt LoadOptions, known map[string]Run, dirs ...string) (runs []Run, skipped []Skipped, err error) {
	runs, diverged, skipped, err := loadFinished(opt, known, dirs)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range diverged {
		skipped = append(skipped, Skipped{Dir: r.Dir, Reason: r.Status.String()})
	}
	return runs, skipped, nil
}

// loadFinished is LoadFinished with the runs of known taken instead of read.
func loadFinished(opt LoadOptions, known map[string]Run, dirs []string) (runs, diverged []Run, skipped []Skipped, err error) {
	if len(dirs) == 0 {
		return nil, nil, nil, fmt.Errorf("results: no results directory given")
	}
	var finished []Run
	for _, root := range dirs {
		fi, err := os.Stat(root)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("results: results directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, nil, nil, fmt.Errorf("results: %s is not a directory", root)
		}
		runDirs, orphans, err := runDirsUnder(root)
		if err != nil {
			return nil, nil, nil, err
		}
		if len(runDirs) == 0 && len(orphans) == 0 {
			return nil, nil, nil, fmt.Errorf("results: %s %w (no %s in it or its sub-directories)", root, ErrNoRuns, MetaFile)
		}
		for _, d := range orphans {
			skipped = append(skipped, Skipped{Dir: d, Reason: "no " + MetaFile + " (a run's files without its description; a run killed while starting, or a damaged copy)"})
		}
		for _, d := range runDirs {
			r, ok := known[d]
			var err error
			if !ok {
				r, err = ReadRun(d)
			}
			switch {
			case err != nil:
				skipped = append(skipped, Skipped{Dir: d, Reason: err.Error()})
			case r.Status.State != Completed && r.Status.State != Diverged:
				skipped = append(skipped, Skipped{Dir: d, Reason: r.Status.String()})
			default:
				finished = append(finished, r)
			}
		}
	}
	ok, refused, err := CheckRuns(finished, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, r := range ok {
		if r.Status.State == Diverged {
			diverged = append(diverged, r)
		} else {
			runs = append(runs, r)
		}
	}
	return runs, diverged, append(skipped, refused...), nil
}

// runDirsUnder returns root itself if it is a run directory, else its sub-directories that are;
// orphans are the directories (root itself, or its sub-directories) that hold a run's files (rows,
// status or checkpoints) but no run.json.
func runDirsUnder(root string) (dirs, orphans []string, err error) {
	if isRunDir(root) {
		return []string{root}, nil, nil
	}
	if hasRunFiles(root) {
		return nil, []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("results: %w", err)
	}
	for _, e := range entries {
		d := filepath.Join(root, e.Name())
		switch {
		case !e.IsDir(), isTemp(e.Name()): // a temporary directory: a run UnpackRecords has not placed yet
		case isRunDir(d):
			dirs = append(dirs, d)
		case hasRunFiles(d):
			orphans = append(orphans, d)
		}
	}
	sort.Strings(dirs)
	sort.Strings(orphans)
	return dirs, orphans, nil
}

// isRunDir reports whether dir has a run.json (or one that cannot be checked: ReadRun then says why).
func isRunDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return !errors.Is(err, os.ErrNotExist)
}

// hasRunFiles reports whether dir holds a file only a run directory has.
func hasRunFiles(dir string) bool {
	for _, name := range []string{RowsFile, StatusFile, CheckpointsDir} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}
