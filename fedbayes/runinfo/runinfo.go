// Package runinfo records what a result was computed with: fedbayes, Go and GoMLX versions, the git
// commit of the checkout, the backend and the machine. Every results directory stores one Info.
package runinfo

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the fedbayes version.
const Version = "0.1.0-dev"

// Info is the provenance of a run.
type Info struct {
	Fedbayes  string            `json:"fedbayes"`
	GitCommit string            `json:"git_commit"`
	GitDirty  bool              `json:"git_dirty"`
	Go        string            `json:"go"`
	Modules   map[string]string `json:"modules"`
	Backend   string            `json:"backend"`
	// Kernels says which CPU kernels the backend used (OpenBLAS or SimpleGo's own; see
	// backend.Kernels): the same spec runs several times faster, to other rounding, on one or the other.
	Kernels string `json:"kernels,omitempty"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	CPUs    int    `json:"cpus"`
	Host    string `json:"host"`
	Time    string `json:"time"`
}

// Collect gathers the provenance of this process. backend is the backend configuration in use
// (see package backend). The git commit is read from the build info when the binary was built with
// VCS stamping, else from `git` in the working directory; "unknown" if neither is available.
func Collect(backend string) Info {
	host, _ := os.Hostname()
	info := Info{
		Fedbayes: Version,
		Go:       runtime.Version(),
		Modules:  map[string]string{},
		Backend:  backend,
		OS:       runtime.GOOS,
		Arch:     runtime.GOARCH,
		CPUs:     runtime.NumCPU(),
		Host:     host,
		Time:     time.Now().UTC().Format(time.RFC3339),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			switch m.Path {
			case "github.com/gomlx/gomlx", "github.com/gomlx/go-xla", "github.com/janpfeifer/gonb",
				"github.com/go-echarts/go-echarts/v2":
				info.Modules[m.Path] = m.Version
			}
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.GitCommit = s.Value
			case "vcs.modified":
				info.GitDirty = s.Value == "true"
			}
		}
	}
	if info.GitCommit == "" {
		info.GitCommit, info.GitDirty = gitCommit()
	}
	return info
}

// gitCommit asks git for the commit of the working directory's checkout.
func gitCommit() (commit string, dirty bool) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	commit = strings.TrimSpace(string(out))
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return commit, err == nil && len(strings.TrimSpace(string(st))) > 0
}
