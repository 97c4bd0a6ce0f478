// Package results is the on-disk record of federated runs: what the engine writes while a run
// progresses, read back and checked for the reports (package report), figures and notebooks.
//
// A results directory holds one sub-directory per run (one setting with one seed):
//
//	RESULTS/
//	  eaa-fvbwa-iid-seed1/
//	    run.json        Meta: the full spec, seed, setting name and labels, provenance (runinfo.Info)
//	    rounds.jsonl    one Row (JSON object) per evaluated round, one per line, in increasing round
//	    checkpoints/    round-000012.ckpt: opaque per-round state, verified by a SHA-256 header
//	    status.json     Status, written last: completed, diverged (reason and round) or failed
//	    .claim          while a process writes the run: its owner and heartbeat (see ClaimRun)
//
// Every file except rounds.jsonl is written atomically (temporary file in the same directory,
// fsync, rename, fsync of the directory), so a reader never sees a half-written file. Rows are
// appended as whole lines and synced; a last line without its terminating newline that is not a
// complete row (a process killed mid-write) is reported and dropped when the file is read, one that
// is a complete row is kept, and a malformed line followed by further rows is an error rather than
// a silent misreading. Readers trust a finished run only when its rows match its status and spec
// and hold possible values (Run.Check); LoadWith reports every run it leaves out, with the reason.
//
// One process writes a run at a time: Create and Resume work under the run's claim (lock.go), a
// file created with link(2), atomic on NFS too, that names the owner (host, pid, start time) and
// whose modification time is its heartbeat; a second writer gets a *ClaimedError, and a stale claim
// (dead owner, or no heartbeat for 2 minutes) is taken over.
//
// A run without status.json is incomplete: Resume continues it from its latest checkpoint and
// truncates the rows after that round, so that a resumed run ends with the same rows as one that
// was never interrupted. Load skips incomplete, failed and diverged runs with a warning each.
package results
