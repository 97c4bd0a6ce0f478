package doctor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoDirFromSubfolder(t *testing.T) {
	t.Setenv("FEDBAYES_REPO", "")
	repo := RepoDir() // the test runs in fedbayes/doctor
	if repo == "" {
		t.Fatal("RepoDir() found no checkout from the package folder")
	}
	if _, err := os.Stat(filepath.Join(repo, "fedbayes", "doctor", "doctor.go")); err != nil {
		t.Errorf("RepoDir() = %q is not the checkout: %v", repo, err)
	}
}

func TestRunOutsideCheckout(t *testing.T) {
	t.Setenv("FEDBAYES_REPO", "")
	t.Chdir(t.TempDir())
	cs := Run()
	if len(cs) != 1 || cs[0].Name != "checkout" || cs[0].OK || !strings.Contains(cs[0].Fix, "FEDBAYES_REPO") {
		t.Fatalf("Run() outside a checkout = %+v, want one failed checkout check that names FEDBAYES_REPO", cs)
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

func TestBackendCheckComputes(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "go")
	for _, c := range checkBackend("") {
		if c.Name == "backend" && !c.OK {
			t.Fatalf("backend check failed on the pure-Go backend: %+v", c)
		}
	}
}

func TestWriteAndFailed(t *testing.T) {
	cs := []Check{
		{Name: "a", OK: true, Detail: "fine"},
		{Name: "b", Detail: "gone", Fix: "make b"},
		{Name: "c", Optional: true, Detail: "absent", Fix: "maybe c"},
	}
	if f := Failed(cs); len(f) != 1 || f[0].Name != "b" {
		t.Errorf("Failed = %+v, want only b", f)
	}
	var buf bytes.Buffer
	Write(&buf, cs)
	out := buf.String()
	for _, want := range []string{"MISSING", "optional", "To fix:", "b: make b", "c (optional): maybe c"} {
		if !strings.Contains(out, want) {
			t.Errorf("Write output lacks %q:\n%s", want, out)
		}
	}
}
