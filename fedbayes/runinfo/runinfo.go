// Package runinfo records what a result was computed with: fedbayes's release and build, Go and
// GoMLX versions, the git commit of the checkout, the backend and the machine. Every results directory
// stores one Info.
package runinfo

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// ModulePath is fedbayes's Go module path.
const ModulePath = "fedbayes.dev"

// Version is fedbayes's release: the version of the newest release heading of CHANGELOG.md
// ("## v0.1.0 (2026-11-27)"), which this source tree is or follows (the changes since are listed under
// "## Unreleased"). It is raised with each release's heading, and a test checks that the two agree.
// Every build reports it (Info.Fedbayes), whatever git knows: a clone without tags, a tarball and a
// -trimpath binary report the same release. Build says which commit a build is.
const Version = "v0.1.0"

// Build returns what the build's version control says of it (Info.Build), beside Version: the
// version Go stamped into the build (Go 1.24 and later stamp the main module's version from its VCS
// tag: v0.1.0 at the tag, v0.1.1-0.DATE-COMMIT after it, +dirty when modified, untracked files
// included), or the version of fedbayes a user's module requires (not replaced); else, asked once
// per process, `git describe --tags --match v[0-9]* --dirty` in fedbayes's checkout (v0.1.0,
// v0.1.0-3-gabc1234 three commits after the tag, -dirty when tracked files are modified); else ""
// (no tag reachable, or no checkout). docs/user-guide.md ("Versions and releases") lists the cases.
func Build() string {
	buildOnce.Do(func() { build = findBuild() })
	return build
}

var (
	buildOnce sync.Once
	build     string
)

// findBuild computes Build.
func findBuild() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path == ModulePath && taggedVersion(bi.Main.Version) {
			return bi.Main.Version
		}
		for _, m := range bi.Deps {
			// A replaced module's version is only what the require line says; its checkout knows better.
			if m.Path == ModulePath && m.Replace == nil && taggedVersion(m.Version) {
				return m.Version
			}
		}
	}
	if dir := checkoutDir(); dir != "" {
		out, err := exec.Command("git", "-C", dir, "describe", "--tags", "--match", "v[0-9]*", "--dirty").Output()
		if v := strings.TrimSpace(string(out)); err == nil && v != "" {
			return v
		}
	}
	return ""
}

// taggedVersion reports whether v is a module version derived from a release tag: not empty, not
// "(devel)", and not the v0.0.0 pseudo-version of a commit with no tag before it.
func taggedVersion(v string) bool {
	return v != "" && v != "(devel)" && !strings.HasPrefix(v, "v0.0.0-")
}

// checkoutDir returns the top of the git checkout that holds fedbayes's source: the one this file
// was compiled from when it is still there, else the working directory's, provided its go.mod
// declares ModulePath; "" when there is none (a binary built with -trimpath run elsewhere).
func checkoutDir() string {
	var candidates []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		candidates = append(candidates, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, wd)
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		out, err := exec.Command("git", "-C", c, "rev-parse", "--show-toplevel").Output()
		if err != nil {
			continue
		}
		top := strings.TrimSpace(string(out))
		if ModuleOf(filepath.Join(top, "go.mod")) == ModulePath {
			return top
		}
	}
	return ""
}

// ModuleOf returns the module path that the go.mod file at path declares, or "".
func ModuleOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Info is the provenance of a run.
type Info struct {
	// Fedbayes is fedbayes's release, Version (v0.1.0), the newest release of CHANGELOG.md that the
	// source is or follows.
	Fedbayes string `json:"fedbayes"`
	// Build is what version control says of the build (Build): v0.1.0 at that tag; after it, Go's
	// pseudo-version v0.1.1-0.DATE-HASH for a build Go stamped, or git describe's v0.1.0-3-gabc1234
	// for one it did not; +dirty or -dirty (the same two ways) for a modified tree; "" when no tag is
	// reachable.
	Build     string            `json:"build,omitempty"`
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
// VCS stamping, else from `git` in fedbayes's checkout (checkoutDir); "unknown" if neither is
// available.
func Collect(backend string) Info {
	host, _ := os.Hostname()
	info := Info{
		Fedbayes: Version,
		Build:    Build(),
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

// gitCommit asks git for the commit of fedbayes's checkout (checkoutDir).
func gitCommit() (commit string, dirty bool) {
	dir := checkoutDir()
	if dir == "" {
		return "unknown", false
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown", false
	}
	commit = strings.TrimSpace(string(out))
	st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return commit, err == nil && len(strings.TrimSpace(string(st))) > 0
}
