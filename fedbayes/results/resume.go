package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// ResumePoint says where a resumed run continues.
type ResumePoint struct {
	// HasCheckpoint is false when the run had no valid checkpoint: it restarts from the beginning
	// (all rows were dropped).
	HasCheckpoint bool
	// Checkpoint is the newest valid checkpoint; the engine restores its Blob and continues with
	// round Checkpoint.Round+1.
	Checkpoint Checkpoint
	// DroppedRows is the number of complete rows removed because they came after the checkpoint.
	DroppedRows int
	// TornBytes is the length of the incomplete last line that was removed (0 if none).
	TornBytes int
	// LastRow is the last row kept (nil when none): the latest evaluation before the resumed rounds.
	LastRow *Row
	// Notes lists what was repaired: skipped invalid checkpoints, a removed failed status, older
	// checkpoints left by a kill between saving a checkpoint and pruning the previous one.
	Notes []string
}

// ReadMeta reads run.json of the run in dir.
func ReadMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return Meta{}, fmt.Errorf("results: %w", err)
	}
	return ParseMeta(path, data)
}

// ParseMeta reads raw, the content of a run.json (path names it in the errors), as ReadMeta does:
// strictly (strictjson.DecodeFile), refusing a newer schema and a Meta that fails Validate.
func ParseMeta(path string, raw []byte) (Meta, error) {
	// The schema first: a newer fedbayes may have added fields, which the strict decoder refuses.
	var schema struct {
		Schema int `json:"schema"`
	}
	if json.Unmarshal(raw, &schema) == nil && schema.Schema > SchemaVersion {
		return Meta{}, fmt.Errorf("results: %s: schema %d is newer than this fedbayes (%d)", path, schema.Schema, SchemaVersion)
	}
	var m Meta
	if err := strictjson.DecodeFile(path, raw, &m); err != nil {
		return Meta{}, fmt.Errorf("results: %w", err)
	}
	if err := m.Validate(); err != nil {
		return Meta{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return m, nil
}

// Resume reopens the interrupted run in dir. If expect is not nil, the stored setting, seed,
// labels and spec must equal it (so a run is never continued with a different experiment).
// A completed or diverged run cannot be resumed; a failed one can (its status is removed).
//
// Resume removes stale temporary files and invalid checkpoints, drops a torn last row, and
// truncates rounds.jsonl to the rows up to the newest valid checkpoint, after checking that none
// of the rows the checkpoint recorded are missing. The engine then restores the checkpoint's blob
// and continues: appending the same rows as an uninterrupted run.
//
// All of this happens under the claim on dir, which Resume takes (ClaimRun) for the Writer, as
// Create does: a run that another live process is writing, or one this process has claimed, is a
// *ClaimedError, and its temporary files and rows are left alone. A caller that holds the claim
// already uses Claim.Resume.
func Resume(dir string, expect *Meta) (*Writer, ResumePoint, error) {
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil {
		return nil, ResumePoint{}, fmt.Errorf("results: %w", err)
	}
	claim, err := ClaimRun(dir)
	if err != nil {
		return nil, ResumePoint{}, err
	}
	w, rp, err := resume(dir, expect)
	w, err = withClaim(w, err, claim, true)
	return w, rp, err
}

// Resume reopens the interrupted run in the claimed directory, as the function Resume does, under
// this claim: the Writer checks the claim before every write and leaves it to its holder, who
// releases it.
func (c *Claim) Resume(expect *Meta) (*Writer, ResumePoint, error) {
	if _, err := os.Stat(filepath.Join(c.dir, MetaFile)); err != nil {
		return nil, ResumePoint{}, fmt.Errorf("results: %w", err)
	}
	if err := c.usable(); err != nil {
		return nil, ResumePoint{}, err
	}
	w, rp, err := resume(c.dir, expect)
	w, err = withClaim(w, err, c, false)
	return w, rp, err
}

// resume is Resume under the claim.
func resume(dir string, expect *Meta) (*Writer, ResumePoint, error) {
	var rp ResumePoint
	meta, err := ReadMeta(dir)
	if err != nil {
		return nil, rp, err
	}
	if expect != nil {
		if why := sameRun(meta, *expect); why != "" {
			return nil, rp, fmt.Errorf("results: cannot resume %s with a different experiment: %s", dir, why)
		}
	}
	st, ok, err := readStatus(dir)
	if err != nil {
		return nil, rp, err
	}
	if ok {
		if st.State != Failed {
			return nil, rp, fmt.Errorf("results: run %s is already %s; nothing to resume", dir, st)
		}
		if err := os.Remove(filepath.Join(dir, StatusFile)); err != nil {
			return nil, rp, fmt.Errorf("results: %w", err)
		}
		rp.Notes = append(rp.Notes, "removed the status of the earlier attempt: "+st.String())
	}
	if err := removeStaleTemps(dir); err != nil {
		return nil, rp, err
	}
	if _, err := os.Stat(filepath.Join(dir, CheckpointsDir)); err == nil {
		if err := removeStaleTemps(filepath.Join(dir, CheckpointsDir)); err != nil {
			return nil, rp, err
		}
	}
	rf, err := readRows(dir)
	if err != nil {
		return nil, rp, err
	}
	rows := rf.rows
	rp.TornBytes = rf.torn
	ckpt, has, skipped, err := LatestCheckpoint(dir)
	if err != nil {
		return nil, rp, err
	}
	rp.Notes = append(rp.Notes, skipped...)
	if err := removeCheckpointsAfter(dir, ckpt.Round, has); err != nil {
		return nil, rp, err
	}
	keep := 0
	lastCkpt := -1
	if has {
		rp.HasCheckpoint, rp.Checkpoint, lastCkpt = true, ckpt, ckpt.Round
		for keep < len(rows) && rows[keep].Round <= ckpt.Round {
			keep++
		}
		last := -1
		if keep > 0 {
			last = rows[keep-1].Round
		}
		if keep != ckpt.Rows || last != ckpt.LastRowRound {
			return nil, rp, fmt.Errorf("results: run %s: %s holds %d rows up to round %d, but the checkpoint of round %d recorded %d rows up to round %d; the rows file lost data",
				dir, RowsFile, keep, last, ckpt.Round, ckpt.Rows, ckpt.LastRowRound)
		}
	}
	rp.DroppedRows = len(rows) - keep
	rows = rows[:keep]
	for i, r := range rows {
		if err := r.CheckValues(); err != nil {
			return nil, rp, fmt.Errorf("results: run %s: %s line %d: %w; the rows file is corrupt", dir, RowsFile, i+1, err)
		}
	}
	// An unterminated last row that is kept gets its newline back before rows are appended.
	if rp.DroppedRows > 0 || rp.TornBytes > 0 || rf.unterminated {
		data, err := encodeRows(rows)
		if err != nil {
			return nil, rp, err
		}
		if err := WriteFileAtomic(filepath.Join(dir, RowsFile), data, 0o644); err != nil {
			return nil, rp, err
		}
	}
	if keep > 0 {
		rp.LastRow = &rows[keep-1]
	}
	w, err := openWriter(dir, meta, rows, lastCkpt)
	if err != nil {
		return nil, rp, err
	}
	pruned, err := w.prune()
	if err != nil {
		_ = w.Close()
		return nil, rp, err
	}
	if pruned > 0 {
		rp.Notes = append(rp.Notes, fmt.Sprintf("removed %d older checkpoint(s) that a kill before pruning left behind", pruned))
	}
	return w, rp, nil
}

// removeCheckpointsAfter deletes the checkpoint files newer than the chosen one (all of them when
// there is none): they failed verification in LatestCheckpoint.
func removeCheckpointsAfter(dir string, round int, has bool) error {
	rounds, err := listCheckpoints(dir)
	if err != nil {
		return err
	}
	for _, r := range rounds {
		if !has || r > round {
			if err := os.Remove(filepath.Join(dir, CheckpointsDir, checkpointName(r))); err != nil {
				return fmt.Errorf("results: removing invalid checkpoint: %w", err)
			}
		}
	}
	return nil
}

// Repairs describes in words what Resume repaired, one sentence each, for a note to the user
// (nothing when the run simply continues): each of Notes, a torn last line removed, and a run that
// restarts from round 1 because no checkpoint was valid although it had progressed (rows dropped
// or checkpoints skipped). Rows dropped after a valid checkpoint are the normal resume and are not
// listed.
func (rp ResumePoint) Repairs() []string {
	out := append([]string(nil), rp.Notes...)
	if rp.TornBytes > 0 {
		out = append(out, fmt.Sprintf("removed a torn last line of %s (%d bytes that were not a complete row)", RowsFile, rp.TornBytes))
	}
	if !rp.HasCheckpoint && (rp.DroppedRows > 0 || len(rp.Notes) > 0) {
		out = append(out, fmt.Sprintf("no valid checkpoint is left: the run restarts from round 1 (%d row(s) dropped)", rp.DroppedRows))
	}
	return out
}
