package runinfo

import (
	"os"
	"testing"
)

// TestMemoryTotal checks the machine's memory against /proc/meminfo where it exists: at least 64 MiB
// and the same on a second call; 0 where the file is absent.
func TestMemoryTotal(t *testing.T) {
	m := MemoryTotal()
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		if m != 0 {
			t.Errorf("no /proc/meminfo, MemoryTotal %d", m)
		}
		return
	}
	if m < 64<<20 || MemoryTotal() != m {
		t.Errorf("MemoryTotal %d (then %d), want at least 64 MiB and the same each call", m, MemoryTotal())
	}
}
