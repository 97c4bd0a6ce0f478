package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/runinfo"
)

// userProgram is a program of a user's own module that calls fedbayes: it aggregates two Gaussian
// clients with EAA and prints the result, fedbayes's release and what git says of its build.
const userProgram = `package main

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/runinfo"
)

func main() {
	g, err := aggregate.Scalar(aggregate.EAA, []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 2, Var: 1}}, nil, aggregate.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("mean %.3f variance %.3f fedbayes %s build=%s\n", g.Mean, g.Var, runinfo.Version, runinfo.Build())
}
`

// TestUseFromAnotherModule builds and runs a program of a module outside the repository that uses
// fedbayes, in the two ways docs/user-guide.md describes: a replace directive pointing at this
// checkout, and a go.work that uses both the user's module and the checkout. Modules come from the
// local module cache (GOFLAGS=-mod=mod; GOPROXY as set, the proxy served here when one is needed).
func TestUseFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program against the whole module (-short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go: %v", err)
	}
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(repo, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module "+runinfo.ModulePath+"\n") {
		t.Fatalf("%s is not fedbayes's checkout (%v)", repo, err)
	}
	goSum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// What the program must print as fedbayes's build, derived here and not by runinfo: fedbayes is
	// replaced by (or a workspace module at) this checkout, so no module version names a build and
	// the build is git describe's in the checkout, or nothing where no v* tag is there. "-dirty" is
	// dropped on both sides: other writers of the checkout may change it meanwhile (runinfo's
	// TestBuildFromTag checks it). The release is runinfo.Version in every case.
	wantBuild := ""
	if _, err := exec.LookPath("git"); err == nil {
		describe := exec.Command("git", "-C", repo, "describe", "--tags", "--match", "v[0-9]*", "--dirty")
		if out, err := describe.Output(); err == nil {
			wantBuild = strings.TrimSpace(string(out))
		}
	}
	wantBuild = strings.TrimSuffix(wantBuild, "-dirty")
	require := "require " + runinfo.ModulePath + " v0.0.0-00010101000000-000000000000\n"
	tests := []struct {
		name   string
		files  map[string]string // relative to the temporary folder
		module string            // the user's module folder, relative to it
	}{
		{"replace", map[string]string{
			"mystudy/go.mod":  "module example.com/mystudy\n\ngo 1.26.0\n\n" + require + "\nreplace " + runinfo.ModulePath + " => " + repo + "\n",
			"mystudy/main.go": userProgram,
		}, "mystudy"},
		{"go.work", map[string]string{
			"go.work": "go 1.26.0\n\nuse (\n\t./mystudy\n\t" + repo + "\n)\n",
			// No require: the workspace's module answers fedbayes.dev's imports.
			"mystudy/go.mod":  "module example.com/mystudy\n\ngo 1.26.0\n",
			"mystudy/main.go": userProgram,
		}, "mystudy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				writeNested(t, filepath.Join(dir, name), text)
			}
			// The checkout's sums cover fedbayes's dependencies, as a user's go mod tidy would add them.
			writeNested(t, filepath.Join(dir, tc.module, "go.sum"), string(goSum))
			exe := filepath.Join(dir, "mystudy.bin")
			env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
			if tc.name == "go.work" {
				env = append(env, "GOFLAGS=", "GOWORK="+filepath.Join(dir, "go.work"))
			} else {
				env = append(env, "GOWORK=off")
			}
			build := exec.Command("go", "build", "-o", exe, ".")
			build.Dir, build.Env = filepath.Join(dir, tc.module), env
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(exe).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", exe, err, out)
			}
			want := "mean 1.000 variance 1.000 fedbayes " + runinfo.Version + " build=" + wantBuild + "\n"
			if got := strings.Replace(string(out), "-dirty\n", "\n", 1); got != want {
				t.Errorf("the program printed %q, want %q", out, want)
			}
		})
	}
}

func writeNested(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
