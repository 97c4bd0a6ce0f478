package runinfo

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestParseCgroupLimit covers the contents of cgroup v1 and v2 limit files.
func TestParseCgroupLimit(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"4294967296\n", 4 << 30, true},
		{"  536870912  ", 512 << 20, true},
		{"9223372036854771712\n", 0, false}, // v1's "no limit"
		{"0", 0, false},
		{"-1", 0, false},
		{"", 0, false},
		{"4G", 0, false},
		{"99999999999999999999", 0, false},
	}
	for _, tc := range tests {
		if got, ok := parseCgroupLimit(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("parseCgroupLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestParseSlurmMem covers SLURM_MEM_PER_NODE's forms: megabytes, suffixed sizes, and refusals.
func TestParseSlurmMem(t *testing.T) {
	tests := []struct {
		in   string
		want int64 // -1: an error
	}{
		{"4000", 4000 << 20},
		{"512K", 512 << 10},
		{"16G", 16 << 30},
		{"16g", 16 << 30},
		{"2T", 2 << 40},
		{"100M", 100 << 20},
		{"0", 0},
		{"", -1},
		{"G", -1},
		{"-5", -1},
		{"4.5G", -1},
		{"9223372036854775807", -1},
		{"5000000000T", -1},
	}
	for _, tc := range tests {
		got, err := parseSlurmMem(tc.in)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("parseSlurmMem(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseSlurmMem(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// TestMemorySources checks that the smallest of the limits that apply is chosen, with its source:
// cgroup v2 (the process's cgroup, an ancestor, or the mount's root), cgroup v1, RLIMIT_AS, Slurm
// and the machine's memory.
func TestMemorySources(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name   string
		files  map[string]string
		env    map[string]string
		rlimit int64
		total  int64
		want   int64
		from   string // a fragment
	}{
		{"machine only", nil, nil, 0, 64 * gib, 64 * gib, "this machine's memory"},
		{"nothing known", nil, nil, 0, 0, 0, ""},
		{"cgroup v2 own", map[string]string{"/proc/self/cgroup": "0::/user/job\n", "/sys/fs/cgroup/user/job/memory.max": "4294967296\n"},
			nil, 0, 64 * gib, 4 * gib, "/sys/fs/cgroup/user/job/memory.max"},
		{"cgroup v2 max, ancestor limited", map[string]string{"/proc/self/cgroup": "0::/user/job\n",
			"/sys/fs/cgroup/user/job/memory.max": "max\n", "/sys/fs/cgroup/user/memory.max": "2147483648\n"},
			nil, 0, 64 * gib, 2 * gib, "/sys/fs/cgroup/user/memory.max"},
		{"cgroup v2 in a container (the mount's root)", map[string]string{"/proc/self/cgroup": "0::/kubepods/pod1\n",
			"/sys/fs/cgroup/memory.max": "1073741824\n"}, nil, 0, 64 * gib, gib, "/sys/fs/cgroup/memory.max"},
		{"cgroup v1", map[string]string{"/proc/self/cgroup": "5:devices:/\n4:memory:/slurm/uid_1/job_7\n0::/\n",
			"/sys/fs/cgroup/memory/slurm/uid_1/job_7/memory.limit_in_bytes": "8589934592\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes":                   "9223372036854771712\n"},
			nil, 0, 64 * gib, 8 * gib, "memory.limit_in_bytes"},
		{"cgroup v1 combined controllers", map[string]string{"/proc/self/cgroup": "3:cpu,memory:/a\n",
			"/sys/fs/cgroup/memory/a/memory.limit_in_bytes": "3221225472"}, nil, 0, 64 * gib, 3 * gib, "/sys/fs/cgroup/memory/a/"},
		{"cgroup v1 unlimited", map[string]string{"/proc/self/cgroup": "4:memory:/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, nil, 0, 64 * gib, 64 * gib, "machine"},
		{"rlimit", nil, nil, 3 * gib, 64 * gib, 3 * gib, "RLIMIT_AS"},
		{"rlimit unlimited", nil, nil, 1 << 62, 64 * gib, 64 * gib, "machine"},
		{"slurm", nil, map[string]string{"SLURM_MEM_PER_NODE": "2048"}, 0, 64 * gib, 2 * gib, "SLURM_MEM_PER_NODE=2048"},
		{"slurm garbled", nil, map[string]string{"SLURM_MEM_PER_NODE": "lots"}, 0, 64 * gib, 64 * gib, "machine"},
		{"slurm above the machine", nil, map[string]string{"SLURM_MEM_PER_NODE": "1T"}, 0, 64 * gib, 64 * gib, "machine"},
		{"smallest wins", map[string]string{"/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "5368709120"},
			map[string]string{"SLURM_MEM_PER_NODE": "6G"}, 7 * gib, 64 * gib, 5 * gib, "cgroup"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := func(name string) ([]byte, error) {
				if s, ok := tc.files[name]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			got := smallestLimit(memorySources(read, func(k string) string { return tc.env[k] }, tc.rlimit, tc.total))
			if got.bytes != tc.want || !strings.Contains(got.from, tc.from) {
				t.Errorf("limit %d from %q; want %d from %q", got.bytes, got.from, tc.want, tc.from)
			}
		})
	}
}

// TestMemoryLimit checks the process's own limit: positive, at most the machine's memory and the
// same on every call; and that this test binary, run again under ulimit -v 3000000 (where a shell
// is at hand), reads 3000000 KiB from RLIMIT_AS where its other limits are larger.
func TestMemoryLimit(t *testing.T) {
	if os.Getenv("RUNINFO_LIMIT_CHILD") == "1" {
		b, from := MemoryLimit()
		fmt.Printf("limit %d %s\n", b, from)
		return
	}
	b, from := MemoryLimit()
	if total := MemoryTotal(); total > 0 && (b <= 0 || b > total || from == "") {
		t.Errorf("MemoryLimit %d from %q; machine %d", b, from, total)
	}
	if b2, from2 := MemoryLimit(); b2 != b || from2 != from {
		t.Errorf("MemoryLimit changed: %d %q then %d %q", b, from, b2, from2)
	}
	if _, err := exec.LookPath("sh"); err != nil || raceEnabled {
		t.Skip("no shell for ulimit, or the race detector (its shadow memory needs more than the limit)")
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 3000000 && exec "$0" -test.run '^TestMemoryLimit$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "RUNINFO_LIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child under ulimit -v: %v\n%s", err, out)
	}
	want := fmt.Sprintf("limit %d the process's address-space limit (RLIMIT_AS", int64(3000000)<<10)
	if b > 3000000<<10 && !strings.Contains(string(out), want) {
		t.Errorf("child under ulimit -v 3000000 printed %q, want %q", out, want)
	}
}
