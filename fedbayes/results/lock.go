package results

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// ClaimFile is the name of the claim a process holds on a run directory while it writes the run.
// It is created with link(2), which is atomic on local and network file systems (NFS included),
// and its modification time is the owner's heartbeat.
const ClaimFile = ".claim"

// claimGuard is created (also with link(2)) by a process taking over a stale claim, so that two
// processes never take the same stale claim at once.
const claimGuard = ".claim-takeover"

// claimTempPrefix starts the name of the file a claim is written to before it is linked.
const claimTempPrefix = ".claim-new-"

// Claim timings. A heartbeat touches the claim every claimHeartbeat; a claim whose heartbeat is
// older than claimStale is stale and may be taken over (a dead owner on this host is detected at
// once). The stale bound allows for NFS attribute caching (actimeo up to 60 s) and small clock
// differences between hosts. Tests shorten them.
var (
	claimHeartbeat = 20 * time.Second
	claimStale     = 2 * time.Minute
	claimGuardAge  = 30 * time.Second
)

// ClaimOwner identifies the process that holds a claim.
type ClaimOwner struct {
	// Host is the owner's host name; BootID tells two boots of the same host apart.
	Host   string `json:"host"`
	BootID string `json:"boot_id,omitempty"`
	// PID is the owner's process id; Start its start time in clock ticks after boot (from
	// /proc/PID/stat), which tells a reused pid apart.
	PID   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
	// Since is when the claim was taken (RFC 3339, UTC).
	Since string `json:"since"`
	// Token is random; it tells this claim apart from a later one by the same process.
	Token string `json:"token"`
	// Job is the Slurm job and array task of the owner, when it runs under Slurm.
	Job string `json:"job,omitempty"`
}

// String describes the owner, e.g. "pid 4711 on host node3 (Slurm job 12_3), since 2026-...".
func (o ClaimOwner) String() string {
	s := fmt.Sprintf("pid %d on host %s", o.PID, o.Host)
	if o.Job != "" {
		s += " (Slurm job " + o.Job + ")"
	}
	if o.Since != "" {
		s += ", since " + o.Since
	}
	return s
}

// ClaimedError is returned when another live process holds the claim on a run directory.
type ClaimedError struct {
	// Dir is the run directory.
	Dir string
	// Owner is the process holding it; Heartbeat how long ago it last showed it is alive.
	Owner     ClaimOwner
	Heartbeat time.Duration
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("results: run %s is being written by %s (heartbeat %s ago); not touching it. "+
		"If that process is gone, its claim is taken over after %s without a heartbeat, or remove %s",
		e.Dir, e.Owner, e.Heartbeat.Round(time.Second), claimStale, filepath.Join(e.Dir, ClaimFile))
}

// Claim is this process's exclusive claim on a run directory: only the holder writes the run or
// resumes it (Resume deletes temporary files and truncates rows, which must never happen under a
// live writer). A heartbeat goroutine keeps the claim fresh and checks it is still ours. The
// holder writes the run through the claim (Claim.Create, Claim.Resume), which hands the claim to
// the Writer explicitly; the package keeps no record of the claims a process holds.
type Claim struct {
	dir   string
	owner ClaimOwner
	// TookOver describes the stale claim this one replaced ("" if none).
	TookOver string

	mu       sync.Mutex
	lost     error
	stop     chan struct{}
	done     chan struct{}
	released bool
}

// ClaimRun takes the claim on the run directory dir (created if missing). If a live process holds
// it (this one included: a directory is claimed once), the error is a *ClaimedError naming the run
// and the owner. A stale claim (its owner is dead on this host, or its heartbeat is older than the
// stale bound) is taken over and described in Claim.TookOver. Write the run with Claim.Create or
// Claim.Resume, and Release the claim when the run is written.
func ClaimRun(dir string) (*Claim, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: claim %s: %w", dir, err)
	}
	owner := selfOwner()
	c := &Claim{dir: dir, owner: owner}
	path := filepath.Join(dir, ClaimFile)
	for attempt := 0; ; attempt++ {
		ok, err := linkNew(dir, path, owner)
		if err != nil {
			return nil, fmt.Errorf("results: claim %s: %w", dir, err)
		}
		if ok {
			break
		}
		prev, age, readErr := readClaim(dir)
		if errors.Is(readErr, os.ErrNotExist) && attempt < 3 {
			continue // released between our link and our read
		}
		why := staleReason(prev, age, readErr)
		if why == "" {
			return nil, &ClaimedError{Dir: dir, Owner: prev, Heartbeat: age}
		}
		if attempt >= 3 {
			return nil, fmt.Errorf("results: claim %s: could not take over the stale claim (%s) after %d attempts", dir, why, attempt)
		}
		took, err := takeOver(dir, prev, readErr, owner)
		if err != nil {
			return nil, err
		}
		if took {
			c.TookOver = fmt.Sprintf("took over the stale claim on %s of %s: %s", dir, prev, why)
			break
		}
	}
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.heartbeat()
	return c, nil
}

// Dir returns the claimed run directory.
func (c *Claim) Dir() string { return c.dir }

// Owner returns this process's record in the claim.
func (c *Claim) Owner() ClaimOwner { return c.owner }

// Err returns an error once the claim was lost (another process took it over, or it was removed):
// the writer must then stop writing.
func (c *Claim) Err() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// check reads the claim file and records a loss.
func (c *Claim) check() error {
	cur, _, err := readClaim(c.dir)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lost != nil {
		return c.lost
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.lost = fmt.Errorf("results: run %s: our claim was removed by someone else; stopped writing", c.dir)
	case err != nil:
		// An unreadable claim (a transient NFS error) is not a loss; the next heartbeat retries.
		return nil
	case cur.Token != c.owner.Token:
		c.lost = fmt.Errorf("results: run %s: our claim was taken over by %s; stopped writing", c.dir, cur)
	}
	return c.lost
}

// heartbeat touches the claim every claimHeartbeat until Release, checking it is still ours.
func (c *Claim) heartbeat() {
	defer close(c.done)
	t := time.NewTicker(claimHeartbeat)
	defer t.Stop()
	path := filepath.Join(c.dir, ClaimFile)
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if c.check() != nil {
				return
			}
			now := time.Now()
			_ = os.Chtimes(path, now, now)
		}
	}
}

// Release gives the claim up: the claim file is removed if it is still ours. Releasing twice does
// nothing.
func (c *Claim) Release() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return nil
	}
	c.released = true
	c.mu.Unlock()
	close(c.stop)
	<-c.done
	if c.check() != nil {
		return nil // not ours any more: leave the new owner's claim alone
	}
	if err := os.Remove(filepath.Join(c.dir, ClaimFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("results: releasing the claim on %s: %w", c.dir, err)
	}
	return nil
}

// usable reports why the claim cannot be written under: it was released, or lost.
func (c *Claim) usable() error {
	c.mu.Lock()
	released := c.released
	c.mu.Unlock()
	if released {
		return fmt.Errorf("results: run %s: the claim was released; claim the run again to write it", c.dir)
	}
	return c.check()
}

// ClaimState is what ReadClaimState finds about the claim on a run directory.
type ClaimState struct {
	// Held says a claim file exists; Live that its owner is alive (not stale).
	Held, Live bool
	// Owner is the claim's owner (zero if unreadable); Heartbeat its age.
	Owner     ClaimOwner
	Heartbeat time.Duration
	// Stale says why a held claim is stale ("" if live).
	Stale string
}

// ReadClaimState reports whether a live process holds the claim on dir (fedbayes status uses it to
// count running runs). A claim that cannot be read (dir or the claim file unreadable, dir not a
// directory) is an error naming dir and the reason, not a claim: no process is known to hold it.
func ReadClaimState(dir string) (ClaimState, error) {
	o, age, err := readClaim(dir)
	if errors.Is(err, os.ErrNotExist) {
		return ClaimState{}, nil
	}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return ClaimState{}, fmt.Errorf("results: run folder %s is unreadable: %w", dir, err)
	}
	st := ClaimState{Held: true, Owner: o, Heartbeat: age}
	st.Stale = staleReason(o, age, err)
	st.Live = st.Stale == ""
	return st, nil
}

// readClaim reads the claim in dir and the age of its heartbeat. A claim that cannot be parsed
// returns its age and the parse error.
func readClaim(dir string) (ClaimOwner, time.Duration, error) {
	path := filepath.Join(dir, ClaimFile)
	fi, err := os.Stat(path)
	if err != nil {
		return ClaimOwner{}, 0, err
	}
	age := time.Since(fi.ModTime())
	if age < 0 {
		age = 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ClaimOwner{}, age, err
	}
	var o ClaimOwner
	if err := strictjson.DecodeFile(path, data, &o); err != nil {
		return ClaimOwner{}, age, fmt.Errorf("results: %w", err)
	}
	return o, age, nil
}

// staleReason says why a claim may be taken over, or "" if its owner may be alive.
func staleReason(o ClaimOwner, age time.Duration, readErr error) string {
	if age > claimStale {
		return fmt.Sprintf("no heartbeat for %s (bound %s)", age.Round(time.Second), claimStale)
	}
	if readErr != nil {
		return "" // unreadable but fresh: treat as alive until the bound passes
	}
	self := selfOwner()
	if o.Host != self.Host {
		return ""
	}
	if o.BootID != "" && self.BootID != "" && o.BootID != self.BootID {
		return "its host has rebooted since"
	}
	if o.PID <= 0 {
		return "it names no process"
	}
	if err := syscall.Kill(o.PID, 0); errors.Is(err, syscall.ESRCH) {
		return fmt.Sprintf("process %d is dead", o.PID)
	}
	if o.Start != 0 {
		if start, ok := procStart(o.PID); ok && start != o.Start {
			return fmt.Sprintf("process %d is dead (its pid now belongs to another process)", o.PID)
		}
	}
	return ""
}

// takeOver replaces the stale claim prev of dir with a new one for owner, under the takeover guard.
// It returns false (and no error) when another process changed the claim meanwhile: the caller
// then looks again.
func takeOver(dir string, prev ClaimOwner, prevErr error, owner ClaimOwner) (bool, error) {
	guard := filepath.Join(dir, claimGuard)
	ok, err := linkNew(dir, guard, owner)
	if err != nil {
		return false, fmt.Errorf("results: claim %s: %w", dir, err)
	}
	if !ok {
		fi, err := os.Stat(guard)
		if err == nil && time.Since(fi.ModTime()) > claimGuardAge {
			_ = os.Remove(guard) // a taker that died half-way
			return false, nil
		}
		return false, &ClaimedError{Dir: dir, Owner: prev}
	}
	defer os.Remove(guard)
	cur, age, err := readClaim(dir)
	if errors.Is(err, os.ErrNotExist) {
		return linkNew(dir, filepath.Join(dir, ClaimFile), owner)
	}
	if cur.Token != prev.Token || (err == nil) != (prevErr == nil) || staleReason(cur, age, err) == "" {
		return false, nil
	}
	if err := os.Remove(filepath.Join(dir, ClaimFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("results: claim %s: removing the stale claim: %w", dir, err)
	}
	return linkNew(dir, filepath.Join(dir, ClaimFile), owner)
}

// linkNew writes owner to a new file in dir and links it to path; false means path exists. The
// link's success is checked by the link count too, as NFS may report an error for a link it made.
func linkNew(dir, path string, owner ClaimOwner) (bool, error) {
	data, err := json.Marshal(owner)
	if err != nil {
		return false, err
	}
	tmp := filepath.Join(dir, claimTempPrefix+owner.Token+"-"+randomHex(4))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	linkErr := os.Link(tmp, path)
	if linkErr == nil {
		syncDir(dir)
		return true, nil
	}
	if fi, err := os.Stat(tmp); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink == 2 {
			syncDir(dir)
			return true, nil
		}
	}
	if errors.Is(linkErr, os.ErrExist) {
		return false, nil
	}
	return false, linkErr
}

// isClaimFile reports whether name is one of the claim's files (ignored when a directory must be
// empty, and never deleted as a stale temporary file).
func isClaimFile(name string) bool {
	return name == ClaimFile || name == claimGuard || strings.HasPrefix(name, claimTempPrefix)
}

var (
	selfOnce sync.Once
	self     ClaimOwner
)

// selfOwner returns this process's owner record with a fresh token.
func selfOwner() ClaimOwner {
	selfOnce.Do(func() {
		host, err := os.Hostname()
		if err != nil {
			host = "unknown"
		}
		self.Host, self.PID = host, os.Getpid()
		if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
			self.BootID = string(bytes.TrimSpace(b))
		}
		if s, ok := procStart(self.PID); ok {
			self.Start = s
		}
		if j := os.Getenv("SLURM_ARRAY_JOB_ID"); j != "" {
			self.Job = j + "_" + os.Getenv("SLURM_ARRAY_TASK_ID")
		} else if j := os.Getenv("SLURM_JOB_ID"); j != "" {
			self.Job = j
		}
	})
	o := self
	o.Since = time.Now().UTC().Format(time.RFC3339)
	o.Token = randomHex(8)
	return o
}

// procStart reads the start time of process pid (field 22 of /proc/PID/stat, clock ticks after
// boot); ok is false where /proc is not available.
func procStart(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	return v, err == nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
