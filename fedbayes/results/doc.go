// Package results is the on-disk record of federated runs: what the engine writes while a run
// progresses, and what tables, learning curves and reproduction reports read afterwards.
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
//
// Summaries over seeds are the mean and the standard error of the mean (sample standard
// deviation with the n-1 denominator, divided by sqrt(n)), the statistic of the tables of Ozer et
// al. (2022, Tables 1 and 3) and Hasan (2023, Tables 3.1-4.2). Tables render as Markdown or as a
// LaTeX booktabs tabular, baselines first and then the rules in the papers' order, bolding the
// cells of a column only where a difference to its best is significant (BoldSignificant).
package results
