//go:build !unix

package runinfo

// addressSpaceLimit returns 0: the platform has no RLIMIT_AS.
func addressSpaceLimit() int64 { return 0 }
