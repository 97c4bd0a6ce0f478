package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// DefaultKeepCheckpoints is how many checkpoints a Writer keeps unless told otherwise.
const DefaultKeepCheckpoints = 1

// Writer records one run. Create starts a run, Resume continues an interrupted one. The order
// within a round is: Append the round's row (if it was evaluated), then SaveCheckpoint; the
// run ends with Finish (or Complete, Diverge, Fail). A Writer is safe for use by one goroutine at
// a time; its methods lock, so concurrent calls are serialised.
type Writer struct {
	mu        sync.Mutex
	dir       string
	meta      Meta
	f         *os.File
	rows      int
	lastRound int // round of the last row, -1 if none
	lastCkpt  int // round of the last checkpoint, -1 if none
	keep      int
	broken    error // set when an append failed half-way: the writer refuses further work
	finished  bool
	claim     *Claim // the claim on dir; every write checks it is still ours
	ownsClaim bool   // the writer took the claim and releases it when it finishes or closes
}

// Create starts the record of a new run in dir (created if missing; it must not already hold
// files other than stale temporary ones) and writes run.json. It takes the claim on dir
// (ClaimRun) for the Writer, which releases it when it finishes or closes; a run another live
// process is writing, or one this process has claimed, is a *ClaimedError. A caller that holds
// the claim already (to read the directory before deciding to create or resume) uses Claim.Create.
func Create(dir string, meta Meta) (*Writer, error) {
	if err := prepareMeta(&meta); err != nil {
		return nil, err
	}
	claim, err := ClaimRun(dir)
	if err != nil {
		return nil, err
	}
	w, err := claim.create(meta)
	return withClaim(w, err, claim, true)
}

// Create starts the record of a new run in the claimed directory, as the function Create does,
// under this claim: the Writer checks the claim before every write and leaves it to its holder,
// who releases it.
func (c *Claim) Create(meta Meta) (*Writer, error) {
	if err := prepareMeta(&meta); err != nil {
		return nil, err
	}
	if err := c.usable(); err != nil {
		return nil, err
	}
	w, err := c.create(meta)
	return withClaim(w, err, c, false)
}

// prepareMeta fills in the schema version of a new run's meta and validates it.
func prepareMeta(meta *Meta) error {
	if meta.Schema == 0 {
		meta.Schema = SchemaVersion
	}
	return meta.Validate()
}

// create is Create under the claim c; meta is prepared.
func (c *Claim) create(meta Meta) (*Writer, error) {
	dir := c.dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: create run: %w", err)
	}
	if err := removeStaleTemps(dir); err != nil {
		return nil, err
	}
	all, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("results: create run: %w", err)
	}
	var entries []os.DirEntry
	for _, e := range all {
		if !isClaimFile(e.Name()) {
			entries = append(entries, e)
		}
	}
	if len(entries) == 1 && entries[0].Name() == RowsFile {
		// A Create killed before writing run.json leaves only the empty rows file: start over.
		if fi, err := entries[0].Info(); err == nil && fi.Size() == 0 {
			entries = nil
		}
	}
	if len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, MetaFile)); err == nil {
			return nil, fmt.Errorf("results: %s already holds a run; resume it or choose another directory", dir)
		}
		return nil, fmt.Errorf("results: %s is not empty (holds %q); a run needs a directory of its own", dir, entries[0].Name())
	}
	data, err := marshalIndented(meta)
	if err != nil {
		return nil, fmt.Errorf("results: run.json of %s: %w", dir, err)
	}
	// rounds.jsonl first, run.json last: a directory with run.json always has a rows file.
	if err := WriteFileAtomic(filepath.Join(dir, RowsFile), nil, 0o644); err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(filepath.Join(dir, MetaFile), data, 0o644); err != nil {
		return nil, err
	}
	return openWriter(dir, meta, nil, -1)
}

// openWriter opens the rows file of dir for appending.
func openWriter(dir string, meta Meta, rows []Row, lastCkpt int) (*Writer, error) {
	f, err := os.OpenFile(filepath.Join(dir, RowsFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	w := &Writer{dir: dir, meta: meta, f: f, rows: len(rows), lastRound: -1, lastCkpt: lastCkpt, keep: DefaultKeepCheckpoints}
	if n := len(rows); n > 0 {
		w.lastRound = rows[n-1].Round
	}
	return w, nil
}

// withClaim attaches the claim to a new writer, or releases an owned claim when there is none.
func withClaim(w *Writer, err error, c *Claim, owned bool) (*Writer, error) {
	if err != nil || w == nil {
		if owned {
			err = errors.Join(err, c.Release())
		}
		return nil, err
	}
	w.claim, w.ownsClaim = c, owned
	return w, nil
}

// releaseClaim releases the writer's claim if it took it.
func (w *Writer) releaseClaim() error {
	if w.ownsClaim {
		w.ownsClaim = false
		return w.claim.Release()
	}
	return nil
}

// Dir returns the run directory.
func (w *Writer) Dir() string { return w.dir }

// Meta returns the run's meta as stored in run.json.
func (w *Writer) Meta() Meta { return w.meta }

// SetKeepCheckpoints sets how many of the newest checkpoints are kept (at least 1).
func (w *Writer) SetKeepCheckpoints(n int) error {
	if n < 1 {
		return fmt.Errorf("results: keep %d checkpoints: must be at least 1", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.keep = n
	return nil
}

// usable reports why the writer cannot be used, or nil.
func (w *Writer) usable() error {
	switch {
	case w.broken != nil:
		return fmt.Errorf("results: run %s: writer unusable after an earlier error: %w", w.dir, w.broken)
	case w.finished:
		return fmt.Errorf("results: run %s is finished", w.dir)
	}
	if w.claim != nil {
		// Read the claim file before every write (once or twice a round), not only at heartbeats,
		// so a writer whose claim was taken over stops at its next write.
		return w.claim.check()
	}
	return nil
}

// Append adds the row of an evaluated round to rounds.jsonl and syncs it to disk. Rounds must
// increase. If the write fails half-way the file is cut back to its previous length.
func (w *Writer) Append(r Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w (run %s)", err, w.dir)
	}
	if r.Round <= w.lastRound {
		return fmt.Errorf("results: run %s: row of round %d after round %d; rounds must increase", w.dir, r.Round, w.lastRound)
	}
	if r.Round <= w.lastCkpt {
		return fmt.Errorf("results: run %s: row of round %d after the checkpoint of round %d", w.dir, r.Round, w.lastCkpt)
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("results: run %s, row of round %d: %w", w.dir, r.Round, err)
	}
	line = append(line, '\n')
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("results: run %s: %w", w.dir, err)
	}
	if _, err := w.f.Write(line); err != nil {
		if terr := w.f.Truncate(st.Size()); terr != nil {
			w.broken = errors.Join(err, terr)
		}
		return fmt.Errorf("results: run %s, row of round %d: %w", w.dir, r.Round, err)
	}
	if err := w.f.Sync(); err != nil {
		w.broken = err
		return fmt.Errorf("results: run %s, row of round %d: sync: %w", w.dir, r.Round, err)
	}
	w.rows++
	w.lastRound = r.Round
	return nil
}

// SaveCheckpoint atomically saves the state after round (at or after the last appended row,
// after the previous checkpoint) and deletes all but the newest kept checkpoints. Resume returns
// the blob of the newest one.
func (w *Writer) SaveCheckpoint(round int, blob []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	switch {
	case round < 0:
		return fmt.Errorf("results: run %s: checkpoint round %d is negative", w.dir, round)
	case round < w.lastRound:
		return fmt.Errorf("results: run %s: checkpoint of round %d is older than the last row (round %d)", w.dir, round, w.lastRound)
	case round <= w.lastCkpt:
		return fmt.Errorf("results: run %s: checkpoint of round %d after the checkpoint of round %d", w.dir, round, w.lastCkpt)
	}
	dir := filepath.Join(w.dir, CheckpointsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: run %s: %w", w.dir, err)
	}
	data, err := encodeCheckpoint(Checkpoint{Round: round, Blob: blob, Rows: w.rows, LastRowRound: w.lastRound})
	if err != nil {
		return fmt.Errorf("results: run %s: %w", w.dir, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, checkpointName(round)), data, 0o644); err != nil {
		return err
	}
	w.lastCkpt = round
	_, err = w.prune()
	return err
}

// prune deletes all checkpoints but the newest w.keep and returns how many it deleted.
func (w *Writer) prune() (int, error) {
	rounds, err := listCheckpoints(w.dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for i := 0; i < len(rounds)-w.keep; i++ {
		if err := os.Remove(filepath.Join(w.dir, CheckpointsDir, checkpointName(rounds[i]))); err != nil {
			return n, fmt.Errorf("results: run %s: pruning checkpoints: %w", w.dir, err)
		}
		n++
	}
	return n, nil
}

// Finish writes status.json (atomically, after syncing the rows) and closes the writer. The
// status time is set to now when empty.
func (w *Writer) Finish(s Status) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if s.Time == "" {
		s.Time = nowUTC()
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w (run %s)", err, w.dir)
	}
	data, err := marshalIndented(s)
	if err != nil {
		return fmt.Errorf("results: run %s: %w", w.dir, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("results: run %s: %w", w.dir, err)
	}
	if err := WriteFileAtomic(filepath.Join(w.dir, StatusFile), data, 0o644); err != nil {
		return err
	}
	w.finished = true
	return errors.Join(w.f.Close(), w.releaseClaim())
}

// Complete finishes a run that ran all its rounds; round is the final round.
func (w *Writer) Complete(round int) error { return w.Finish(Status{State: Completed, Round: round}) }

// Diverge finishes a run stopped at round because its loss or parameters became non-finite.
func (w *Writer) Diverge(round int, reason string) error {
	return w.Finish(Status{State: Diverged, Round: round, Reason: reason})
}

// Fail finishes a run stopped at round by an error. A failed run can be resumed.
func (w *Writer) Fail(round int, err error) error {
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	return w.Finish(Status{State: Failed, Round: round, Error: msg})
}

// Close closes the rows file without writing a status: the run stays incomplete and can be
// resumed. Closing a finished writer does nothing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return w.releaseClaim()
	}
	w.finished = true
	return errors.Join(w.f.Close(), w.releaseClaim())
}
