package doctor

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/backend"
)

// TestRepoDirFromSubfolder finds the checkout from the package's folder, and from a folder outside
// it, where the binary's or the source's folder leads to it (fedbayes doctor run elsewhere).
func TestRepoDirFromSubfolder(t *testing.T) {
	t.Setenv("FEDBAYES_REPO", "")
	repo := RepoDir() // the test runs in fedbayes/doctor
	if repo == "" {
		t.Fatal("RepoDir() found no checkout from the package folder")
	}
	if _, err := os.Stat(filepath.Join(repo, "fedbayes", "doctor", "doctor.go")); err != nil {
		t.Errorf("RepoDir() = %q is not the checkout: %v", repo, err)
	}
	t.Chdir(t.TempDir())
	if got := RepoDir(); got != repo {
		t.Errorf("RepoDir() from outside the checkout = %q, want %q", got, repo)
	}
}

// TestFindRepo checks where RepoDir looks for the checkout: in each starting folder (the working
// directory, the binary's folder, the source's) and its parents, taking the first go.mod of module
// fedbayes.dev; a binary linked from elsewhere is found through its link.
func TestFindRepo(t *testing.T) {
	root := t.TempDir()
	clone, other, outside := filepath.Join(root, "clone"), filepath.Join(root, "other"), filepath.Join(root, "outside")
	writeFile(t, filepath.Join(clone, "go.mod"), "module fedbayes.dev\n\ngo 1.26.0\n")
	writeFile(t, filepath.Join(clone, ".build", "bin", "fedbayes"), "binary")
	writeFile(t, filepath.Join(other, "go.mod"), "module example.com/mystudy\n")
	writeFile(t, filepath.Join(other, "sub", "x"), "")
	writeFile(t, filepath.Join(root, "quoted", "go.mod"), "// a comment\nmodule \"fedbayes.dev\"\n")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "fedbayes")
	if err := os.Symlink(filepath.Join(clone, ".build", "bin", "fedbayes"), link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		starts []string
		want   string
	}{
		{"in the checkout's folder", []string{filepath.Join(clone, ".build")}, clone},
		{"outside, the checkout's binary", []string{outside, filepath.Join(clone, ".build", "bin")}, clone},
		{"outside, a link to the checkout's binary", []string{outside, binaryDir(link)}, clone},
		{"another module, then the checkout", []string{filepath.Join(other, "sub"), clone}, clone},
		{"a quoted module path", []string{filepath.Join(root, "quoted")}, filepath.Join(root, "quoted")},
		{"no checkout", []string{outside, filepath.Join(other, "sub")}, ""},
		{"nothing to start from", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := findRepo(tc.starts); got != tc.want {
				t.Errorf("findRepo(%q) = %q, want %q", tc.starts, got, tc.want)
			}
		})
	}
}

// TestNoCheckoutIsNotAFailure checks the checks that use the checkout when there is none (a user of
// the binary alone): the checkout, gonb, goimports, Jupyter and the kernel are optional, and no fix
// says to cd into an empty path; the datasets' fix is fedbayes data install.
func TestNoCheckoutIsNotAFailure(t *testing.T) {
	t.Setenv("FEDBAYES_DATA", t.TempDir())
	cs := []Check{checkCheckout("")}
	for _, fn := range []func(string) []Check{checkTools, checkJupyter, checkKernel, checkData, checkCharts} {
		cs = append(cs, fn("")...)
	}
	for _, c := range cs {
		if strings.HasPrefix(c.Fix, "cd ") {
			t.Errorf("%s: fix %q changes into a checkout there is none of", c.Name, c.Fix)
		}
		switch {
		case c.Name == "checkout" || c.Name == "gonb" || c.Name == "goimports" || c.Name == "kernel" || c.Name == "jupyter":
			if !c.OK && !c.Optional {
				t.Errorf("%s without a checkout is a required failure: %+v", c.Name, c)
			}
		case strings.HasPrefix(c.Name, "data: ") && !c.Optional:
			if c.OK || c.Fix != "fedbayes data install" {
				t.Errorf("%s in an empty data folder without a checkout: %+v, want fixed by fedbayes data install", c.Name, c)
			}
		}
	}
	if c := checkCheckout(""); c.OK || !c.Optional || !strings.Contains(c.Fix, "FEDBAYES_REPO") {
		t.Errorf("checkCheckout(\"\") = %+v, want optional, naming FEDBAYES_REPO", c)
	}
	if c := checkCheckout("/repo"); !c.OK || c.Detail != "/repo" {
		t.Errorf("checkCheckout(/repo) = %+v", c)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMissingKernelSaysWhatToRun(t *testing.T) {
	repo := t.TempDir()
	cs := checkKernel(repo)
	if cs[0].OK || !strings.Contains(cs[0].Fix, "make kernel") {
		t.Errorf("checkKernel on an empty folder = %+v, want a failure whose fix runs make kernel", cs[0])
	}
	tools := checkTools(repo)
	for _, c := range tools {
		if c.OK || !strings.Contains(c.Fix, "make tools") {
			t.Errorf("checkTools on an empty folder: %+v", c)
		}
	}
}

func TestMissingDataSaysWhatToRun(t *testing.T) {
	t.Setenv("FEDBAYES_DATA", t.TempDir())
	var required int
	for _, c := range checkData("/repo") {
		if c.Optional {
			continue
		}
		required++
		if c.OK || c.Fix != "cd /repo && make data" {
			t.Errorf("empty data folder: %+v, want a failure fixed by make data", c)
		}
	}
	if required < 2 {
		t.Errorf("checked %d installable datasets, want fashion-mnist and the scikit-learn tables", required)
	}
}

// TestBackendCheckWithoutPlugin: on the pure-Go backend with no plugin installed, the backend
// computes, the speed check trains LeNet, and the missing plugin is optional with the install command.
func TestBackendCheckWithoutPlugin(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	t.Setenv(backend.DirEnv, t.TempDir())
	if len(backend.Plugins()) > 0 {
		t.Skipf("an XLA plugin is installed on this machine: %v", backend.Plugins())
	}
	byName := map[string]Check{}
	for _, c := range checkBackend("") {
		byName[c.Name] = c
	}
	if c := byName["backend"]; !c.OK {
		t.Errorf("backend check failed on the pure-Go backend: %+v", c)
	}
	if c := byName["xla plugin"]; c.OK || !c.Optional || !strings.Contains(c.Fix, "fedbayes backend install cpu") {
		t.Errorf("xla plugin check = %+v, want optional, fixed by `fedbayes backend install cpu`", c)
	}
	if c := byName["speed: pure Go"]; !c.OK || c.Optional || !strings.Contains(c.Detail, "examples/s") {
		t.Errorf("speed check = %+v, want a required, passing LeNet step", c)
	}
}

// TestBackendCheckReportsBrokenPluginFiles: a file named like a plugin that is not one is an optional
// problem with a fix, and the pure-Go backend is still chosen.
func TestBackendCheckReportsBrokenPluginFiles(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	dir := t.TempDir()
	t.Setenv(backend.DirEnv, dir)
	if err := os.WriteFile(filepath.Join(dir, "pjrt_c_api_cpu_plugin.so"), []byte("truncated"), 0o644); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range checkBackend("") {
		if c.Name == "xla plugin files" {
			found = true
			if c.OK || !c.Optional || !strings.Contains(c.Detail, "not a loadable shared library") || !strings.Contains(c.Fix, "backend install") {
				t.Errorf("xla plugin files check = %+v", c)
			}
		}
		if c.Name == "backend" && !c.OK {
			t.Errorf("backend check failed: %+v", c)
		}
	}
	if !found {
		t.Error("no check reports the broken plugin file")
	}
}

func TestSpeedCheckTrains(t *testing.T) {
	be, err := backend.New(backend.PureGo)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	s, err := SpeedCheck(be, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Step <= 0 || s.Setup <= 0 || s.Steps != 2 || s.ExamplesPerSecond() <= 0 {
		t.Errorf("SpeedCheck = %+v", s)
	}
	if !strings.HasPrefix(s.String(), "LeNet step (Bayesian, batch 32): ") {
		t.Errorf("String() = %q", s.String())
	}
}

// TestSpeedCheckRefusesNegativeSteps: a negative step count is refused before anything is built.
func TestSpeedCheckRefusesNegativeSteps(t *testing.T) {
	be, err := backend.New(backend.PureGo)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	if _, err := SpeedCheck(be, -1); err == nil || !strings.Contains(err.Error(), "-1 steps") {
		t.Errorf("SpeedCheck(-1): error %v; want one naming the -1 steps", err)
	}
}

func TestWriteAndFailed(t *testing.T) {
	required := Check{Name: "b", Detail: "gone", Fix: "make b"}
	optional := Check{Name: "c", Optional: true, Detail: "absent", Fix: "maybe c"}
	fine := Check{Name: "a", OK: true, Detail: "fine"}
	if f := Failed([]Check{fine, required, optional}); len(f) != 1 || f[0].Name != "b" {
		t.Errorf("Failed = %+v, want only b", f)
	}
	tests := []struct {
		name         string
		checks       []Check
		want, reject []string
	}{
		{"required and optional", []Check{fine, required, optional},
			[]string{"MISSING", "optional", "To fix:\n  b: make b\n", "Optional:\n  c: maybe c\n"},
			[]string{"Everything fedbayes needs", "To fix:\n  c"}},
		{"only optional", []Check{fine, optional},
			[]string{"Optional:\n  c: maybe c\n", "Everything fedbayes needs is in place; the items under \"Optional\""},
			[]string{"To fix", "MISSING"}},
		{"all fine", []Check{fine},
			[]string{"Everything fedbayes needs is in place.\n"},
			[]string{"To fix", "Optional:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			Write(&buf, tc.checks)
			out := buf.String()
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("Write output lacks %q:\n%s", want, out)
				}
			}
			for _, bad := range tc.reject {
				if strings.Contains(out, bad) {
					t.Errorf("Write output has %q:\n%s", bad, out)
				}
			}
		})
	}
}

func TestWriteBackends(t *testing.T) {
	t.Setenv(backend.DirEnv, t.TempDir())
	pure := BackendReport{Name: "pure Go", Config: backend.PureGo, Chosen: true, Devices: []string{"device#0"},
		Speed: Speed{Step: 40 * time.Millisecond, Steps: 5, Batch: 32}}
	cpu := BackendReport{Name: "XLA cpu", Config: "xla:/p/pjrt_c_api_cpu_plugin.so,shared_buffers",
		Plugin:  &backend.Plugin{Name: "cpu", Path: "/p/pjrt_c_api_cpu_plugin.so", Where: "fedbayes folder /p"},
		APINote: "PJRT API 0.83, as go-xla v0.1.4 expects", Err: errors.New("boom")}
	tests := []struct {
		name         string
		reports      []BackendReport
		want, reject []string
	}{
		{"pure Go only", []BackendReport{pure},
			[]string{"* pure Go: simplegoplus", "devices: device#0", "speed: LeNet step (Bayesian, batch 32): 40.0 ms, 800 examples/s",
				"No XLA plugin found. To install one: `fedbayes backend install cpu`"}, nil},
		{"with a plugin", []BackendReport{pure, cpu},
			[]string{"  XLA cpu: xla:/p/", "plugin: /p/pjrt_c_api_cpu_plugin.so (fedbayes folder /p)", "PJRT API 0.83, as go-xla", "FAILED: boom"},
			[]string{"No XLA plugin found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			WriteBackends(&buf, tc.reports)
			for _, want := range tc.want {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, buf.String())
				}
			}
			for _, bad := range tc.reject {
				if strings.Contains(buf.String(), bad) {
					t.Errorf("output has %q:\n%s", bad, buf.String())
				}
			}
		})
	}
}
