package runinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestCollect(t *testing.T) {
	info := Collect("go")
	if info.Fedbayes != Version || info.Build != Build() || info.Backend != "go" || info.Go != runtime.Version() {
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

// TestBuildFromTag builds a program that prints Collect's Fedbayes and Build from a temporary git
// repository of module fedbayes.dev (this package's source and a main) tagged v0.3.1, and runs it
// from another folder: the release is Version in every case, tag or none; the build is the tag from
// the build info for a build at the tag with VCS stamping (even after a further commit), git
// describe in its checkout for one without stamping (v0.3.1-1-gHASH, and -dirty with a modified
// file), and nothing for one without a tag.
func TestBuildFromTag(t *testing.T) {
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	repo, elsewhere, bin := t.TempDir(), t.TempDir(), t.TempDir()
	srcs, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range srcs {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeTo(t, filepath.Join(repo, "fedbayes", "runinfo", f), string(b))
	}
	writeTo(t, filepath.Join(repo, "go.mod"), "module "+ModulePath+"\n\ngo 1.26.0\n")
	writeTo(t, filepath.Join(repo, "cmd", "release", "main.go"), `package main

import (
	"fmt"

	"fedbayes.dev/fedbayes/runinfo"
)

func main() {
	info := runinfo.Collect("test")
	fmt.Printf("%s build=%s\n", info.Fedbayes, info.Build)
}
`)
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
		"GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	build := func(name, buildvcs string) string {
		exe := filepath.Join(bin, name)
		run(repo, "go", "build", "-buildvcs="+buildvcs, "-o", exe, "./cmd/release")
		return run(elsewhere, exe)
	}
	check := func(what, got, wantBuild string) {
		t.Helper()
		if !regexp.MustCompile("^" + regexp.QuoteMeta(Version) + " build=" + wantBuild + "$").MatchString(got) {
			t.Errorf("%s: %q, want %q and the build %s", what, got, Version, wantBuild)
		}
	}
	run(repo, "git", "init", "-q")
	run(repo, "git", "add", ".")
	run(repo, "git", "commit", "-q", "-m", "first")
	check("untagged", build("untagged", "false"), "")
	run(repo, "git", "tag", "v0.3.1")
	check("stamped at the tag", build("stamped", "true"), `v0\.3\.1`)
	writeTo(t, filepath.Join(repo, "NEWS"), "after the tag\n")
	run(repo, "git", "add", "NEWS")
	run(repo, "git", "commit", "-q", "-m", "second")
	check("stamped at the tag, run after a further commit", run(elsewhere, filepath.Join(bin, "stamped")), `v0\.3\.1`)
	check("a commit after the tag", build("after", "false"), `v0\.3\.1-1-g[0-9a-f]+`)
	writeTo(t, filepath.Join(repo, "NEWS"), "modified\n")
	check("a modified checkout", build("dirty", "false"), `v0\.3\.1-1-g[0-9a-f]+-dirty`)
}

func writeTo(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
