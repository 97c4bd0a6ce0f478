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
	if info.Fedbayes != Release() || info.Fedbayes == "" || info.Backend != "go" || info.Go != runtime.Version() {
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

// TestReleaseFromTag builds a program that prints Collect's Fedbayes from a temporary git
// repository of module fedbayes.dev (this package's source and a main) tagged v0.3.1, and runs it
// from another folder: a build at the tag with VCS stamping reports the tag from the build info
// (even after a further commit), one without stamping asks git in its checkout (v0.3.1-1-gHASH, and
// -dirty with a modified file), and one without a tag reports Version.
func TestReleaseFromTag(t *testing.T) {
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

func main() { fmt.Println(runinfo.Collect("test").Fedbayes) }
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
	run(repo, "git", "init", "-q")
	run(repo, "git", "add", ".")
	run(repo, "git", "commit", "-q", "-m", "first")
	if got := build("untagged", "false"); got != Version {
		t.Errorf("untagged: %q, want %q", got, Version)
	}
	run(repo, "git", "tag", "v0.3.1")
	if got := build("stamped", "true"); got != "v0.3.1" {
		t.Errorf("stamped at the tag: %q, want v0.3.1", got)
	}
	writeTo(t, filepath.Join(repo, "NEWS"), "after the tag\n")
	run(repo, "git", "add", "NEWS")
	run(repo, "git", "commit", "-q", "-m", "second")
	if got := run(elsewhere, filepath.Join(bin, "stamped")); got != "v0.3.1" {
		t.Errorf("stamped at the tag, run after a further commit: %q, want v0.3.1", got)
	}
	after := regexp.MustCompile(`^v0\.3\.1-1-g[0-9a-f]+$`)
	if got := build("after", "false"); !after.MatchString(got) {
		t.Errorf("a commit after the tag: %q, want v0.3.1-1-gHASH", got)
	}
	writeTo(t, filepath.Join(repo, "NEWS"), "modified\n")
	if got := build("dirty", "false"); !regexp.MustCompile(`^v0\.3\.1-1-g[0-9a-f]+-dirty$`).MatchString(got) {
		t.Errorf("a modified checkout: %q, want v0.3.1-1-gHASH-dirty", got)
	}
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
