//go:build unix

package runinfo

import "syscall"

// addressSpaceLimit returns RLIMIT_AS's soft limit in bytes, 0 where there is none (RLIM_INFINITY
// is above unlimitedBytes) or it cannot be read.
func addressSpaceLimit() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur >= uint64(unlimitedBytes) {
		return 0
	}
	return int64(r.Cur)
}
