//go:build !race

package runinfo

// raceEnabled says the test binary runs under the race detector, whose shadow memory does not fit
// under a small ulimit -v.
const raceEnabled = false
