package runinfo

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	memOnce  sync.Once
	memTotal int64
)

// MemoryTotal returns the machine's total memory in bytes (MemTotal in /proc/meminfo), 0 where it
// is unknown. It is read once per process; the data loaders and the engine bound what they load and
// allocate by it.
func MemoryTotal() int64 {
	memOnce.Do(func() {
		f, err := os.Open("/proc/meminfo")
		if err != nil {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
					memTotal = kb * 1024
				}
			}
		}
	})
	return memTotal
}
