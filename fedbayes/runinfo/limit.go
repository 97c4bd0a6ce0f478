package runinfo

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
)

// unlimitedBytes is the smallest limit read as "no limit": cgroup v1 writes 2^63 rounded down to a
// page for none, and no machine has 2^62 bytes.
const unlimitedBytes = int64(1) << 62

// A memorySource is one limit on the process's memory, in bytes, and where it comes from.
type memorySource struct {
	bytes int64
	from  string
}

var (
	limitOnce sync.Once
	limit     memorySource
)

// MemoryLimit returns the memory the process may use, in bytes, and where that figure comes from:
// the smallest of its cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes, of its own cgroup
// and its ancestors), its address-space limit (RLIMIT_AS, ulimit -v), Slurm's SLURM_MEM_PER_NODE
// (megabytes, or a number with a K, M, G or T suffix), and the machine's memory (MemoryTotal); 0
// and "" where none is known. It is read once per process; the data loaders and the engine bound
// what they load and allocate by it.
func MemoryLimit() (int64, string) {
	limitOnce.Do(func() {
		limit = smallestLimit(memorySources(os.ReadFile, os.Getenv, addressSpaceLimit(), MemoryTotal()))
	})
	return limit.bytes, limit.from
}

// memorySources gathers the limits that apply, reading files with read and the environment with
// env; rlimit is RLIMIT_AS's soft limit (0 or unlimitedBytes and above: none) and total the
// machine's memory (0: unknown).
func memorySources(read func(string) ([]byte, error), env func(string) string, rlimit, total int64) []memorySource {
	var out []memorySource
	if total > 0 {
		out = append(out, memorySource{total, "this machine's memory"})
	}
	if b, err := read("/proc/self/cgroup"); err == nil {
		out = append(out, cgroupLimits(string(b), read)...)
	}
	if rlimit > 0 && rlimit < unlimitedBytes {
		out = append(out, memorySource{rlimit, "the process's address-space limit (RLIMIT_AS, ulimit -v)"})
	}
	if v := env("SLURM_MEM_PER_NODE"); v != "" {
		if b, err := parseSlurmMem(v); err == nil && b > 0 {
			out = append(out, memorySource{b, "Slurm's SLURM_MEM_PER_NODE=" + v})
		}
	}
	return out
}

// smallestLimit returns the smallest of sources (the first of equals); none: the zero source.
func smallestLimit(sources []memorySource) memorySource {
	var best memorySource
	for _, s := range sources {
		if s.bytes > 0 && (best.bytes == 0 || s.bytes < best.bytes) {
			best = s
		}
	}
	return best
}

// cgroupLimits returns the memory limits of the cgroups that /proc/self/cgroup's content self
// names, read through read: for cgroup v2 (the "0::PATH" line) memory.max under /sys/fs/cgroup, for
// v1 (the line whose controllers include memory) memory.limit_in_bytes under
// /sys/fs/cgroup/memory, of PATH and each ancestor up to the mount's root (inside a container the
// mount's root is the container's own cgroup, which PATH may not exist under).
func cgroupLimits(self string, read func(string) ([]byte, error)) []memorySource {
	var out []memorySource
	for _, line := range strings.Split(self, "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case hasController(parts[1], "memory"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := path.Clean("/" + parts[2]); ; dir = path.Dir(dir) {
			name := path.Join(root, dir, file)
			if b, err := read(name); err == nil {
				if v, ok := parseCgroupLimit(string(b)); ok {
					out = append(out, memorySource{v, "the cgroup's limit (" + name + ")"})
				}
			}
			if dir == "/" {
				break
			}
		}
	}
	return out
}

// hasController reports whether the comma-separated controller list has c.
func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}

// parseCgroupLimit reads a cgroup memory limit file's content: a byte count (v1 and v2), or "max"
// (v2) for none. It reports false for none, for a count at or above unlimitedBytes (v1's none) and
// for anything else.
func parseCgroupLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 || v >= unlimitedBytes {
		return 0, false
	}
	return v, true
}

// parseSlurmMem reads a Slurm memory size as SLURM_MEM_PER_NODE gives it: a whole number of
// megabytes, or with a K, M, G or T suffix (binary units, as sbatch --mem reads them).
func parseSlurmMem(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1 << 20)
	if n := len(s); n > 0 {
		switch strings.ToUpper(s[n-1:]) {
		case "K":
			mult, s = 1<<10, s[:n-1]
		case "M":
			mult, s = 1<<20, s[:n-1]
		case "G":
			mult, s = 1<<30, s[:n-1]
		case "T":
			mult, s = 1<<40, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("runinfo: SLURM_MEM_PER_NODE %q is not a memory size", s)
	}
	if v > unlimitedBytes/mult {
		return 0, fmt.Errorf("runinfo: SLURM_MEM_PER_NODE %q is implausibly large", s)
	}
	return v * mult, nil
}
