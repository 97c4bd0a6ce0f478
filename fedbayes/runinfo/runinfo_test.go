package runinfo

import (
	"os/exec"
	"regexp"
	"runtime"
	"testing"
)

func TestCollect(t *testing.T) {
	info := Collect("go")
	if info.Fedbayes != Version || info.Backend != "go" || info.Go != runtime.Version() {
		t.Errorf("Collect = %+v", info)
	}
	if info.CPUs < 1 || info.OS == "" || info.Time == "" {
		t.Errorf("machine fields missing: %+v", info)
	}
	// Tests run inside the checkout: with git available, the commit is a full hash.
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && len(out) > 0 {
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(info.GitCommit) {
				t.Errorf("GitCommit = %q, want a 40-hex-digit hash", info.GitCommit)
			}
		}
	}
}
