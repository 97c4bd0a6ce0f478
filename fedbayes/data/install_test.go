package data

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeDebs builds small .deb files, with dpkg-deb, that hold the data files of debSources at their
// real paths (with content written by the format writers), and returns them by package name.
func fakeDebs(t *testing.T) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not available")
	}
	base := t.TempDir()
	debs := map[string]string{}
	for _, src := range debSources {
		root := filepath.Join(base, src.pkg)
		control := fmt.Sprintf("Package: %s\nVersion: 9.9-test\nArchitecture: all\nMaintainer: fedbayes tests <t@example.org>\nDescription: fake\n", src.pkg)
		writeFile(t, filepath.Join(root, "DEBIAN", "control"), []byte(control))
		if src.folder == "fashion-mnist" {
			writeMNISTDir(t, filepath.Join(root, src.prefix), 3, 2, []byte{0, 1, 9}, []byte{2, 3})
		} else {
			writeSklearnDir(t, filepath.Join(root, "sk"))
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, src.prefix)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(root, "sk", SklearnDir), filepath.Join(root, src.prefix)); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(root, "sk"))
			writeFile(t, filepath.Join(root, src.prefix, "__init__.py"), nil) // not copied
		}
		deb := filepath.Join(base, src.pkg+"_9.9-test_all.deb")
		if out, err := exec.Command("dpkg-deb", "--build", root, deb).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb --build: %v: %s", err, out)
		}
		debs[src.pkg] = deb
	}
	return debs
}

// fakeInstaller downloads from the fake debs and counts downloads; fail makes a package fail.
func fakeInstaller(debs map[string]string, calls *int, fail string) installer {
	return installer{download: func(pkg, folder string, log io.Writer) (string, error) {
		*calls++
		if pkg == fail {
			return "", errors.New("network unreachable")
		}
		raw, err := os.ReadFile(debs[pkg])
		if err != nil {
			return "", err
		}
		dst := filepath.Join(folder, filepath.Base(debs[pkg]))
		return dst, os.WriteFile(dst, raw, 0o644)
	}}
}

func TestInstall(t *testing.T) {
	debs := fakeDebs(t)
	dir := filepath.Join(t.TempDir(), "data")
	calls := 0
	var log bytes.Buffer
	if err := fakeInstaller(debs, &calls, "").install(dir, &log); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || !strings.Contains(log.String(), "installed in") {
		t.Fatalf("calls %d, log:\n%s", calls, log.String())
	}
	// The data load, and the manifest records versions and digests.
	if train, test, err := Load("fashion-mnist", dir); err != nil || train.Len() != 3 || test.Len() != 2 {
		t.Fatalf("fashion-mnist after install: %v", err)
	}
	if _, _, err := Load("diabetes", dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, SklearnDir, "__init__.py")); err == nil {
		t.Fatal("copied a file that is not data")
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := m.Folders["sklearn"]
	if e.Package != "python3-sklearn" || e.Version != "9.9-test" || len(e.Files) != 7 || len(e.Files[0].SHA256) != 64 {
		t.Fatalf("manifest entry %+v", e)
	}
	// A second run downloads nothing.
	log.Reset()
	if err := fakeInstaller(debs, &calls, "").install(dir, &log); err != nil || calls != 2 {
		t.Fatalf("second install: %v, calls %d", err, calls)
	}
	if strings.Count(log.String(), "already installed") != 2 {
		t.Fatalf("log:\n%s", log.String())
	}
	// A damaged folder is re-installed; the other one is left alone.
	if err := os.WriteFile(filepath.Join(dir, "fashion-mnist", "t10k-labels-idx1-ubyte.gz"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fakeInstaller(debs, &calls, "").install(dir, io.Discard); err != nil || calls != 3 {
		t.Fatalf("repair: %v, calls %d", err, calls)
	}
	if _, _, err := Load("fashion-mnist", dir); err != nil {
		t.Fatalf("after repair: %v", err)
	}
	// A file changed in place with the same size (caught by its SHA-256) is re-installed too.
	iris := filepath.Join(dir, SklearnDir, "iris.csv")
	raw, err := os.ReadFile(iris)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-2] ^= 1
	if err := os.WriteFile(iris, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(iris, later, later); err != nil {
		t.Fatal(err)
	}
	if err := fakeInstaller(debs, &calls, "").install(dir, io.Discard); err != nil || calls != 4 {
		t.Fatalf("same-size repair: %v, calls %d", err, calls)
	}
	// No temporary folders remain.
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
}

func TestInstallFailureLeavesNoHalfDataset(t *testing.T) {
	debs := fakeDebs(t)
	dir := t.TempDir()
	calls := 0
	err := fakeInstaller(debs, &calls, "python3-sklearn").install(dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sklearn") || !strings.Contains(err.Error(), "network unreachable") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, SklearnDir)); err == nil {
		t.Fatal("a failed install left a sklearn folder")
	}
	// The package installed before the failure is complete and recorded.
	m, _ := ReadManifest(dir)
	if _, ok := m.Folders["fashion-mnist"]; !ok {
		t.Fatal("fashion-mnist not recorded")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".install-*")); len(left) != 0 {
		t.Fatalf("left behind: %v", left)
	}
	// A package without the expected files is an error naming the missing path.
	broken := map[string]string{"dataset-fashion-mnist": debs["python3-sklearn"], "python3-sklearn": debs["python3-sklearn"]}
	err = fakeInstaller(broken, &calls, "").install(t.TempDir(), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") {
		t.Fatalf("package without the data: %v", err)
	}
}

func TestStatus(t *testing.T) {
	dir := t.TempDir()
	st := Status(dir)
	if len(st) != len(Names()) {
		t.Fatalf("%d entries for %d names", len(st), len(Names()))
	}
	byName := map[string]Availability{}
	for _, a := range st {
		byName[a.Name] = a
		if a.Present || a.Install == "" || a.Source == "" || len(a.Missing) == 0 {
			t.Fatalf("empty folder: %+v", a)
		}
	}
	if got := byName["iris"].Install; got != "fedbayes data install -dir "+dir {
		t.Fatalf("iris install command %q", got)
	}
	if got := byName["cifar10"].Install; !strings.Contains(got, "cannot be downloaded") || !strings.Contains(got, filepath.Join(dir, "cifar-10-batches-bin")) {
		t.Fatalf("cifar10 install text %q", got)
	}
	writeSklearnDir(t, dir)
	writeMNISTDir(t, filepath.Join(dir, "fashion-mnist"), 1, 1, []byte{0}, []byte{0})
	for _, a := range Status(dir) {
		wantPresent := a.Name == "fashion-mnist" || strings.HasPrefix(a.Source, "Debian package python3-sklearn")
		if a.Present != wantPresent {
			t.Errorf("%s: present %v, want %v (%+v)", a.Name, a.Present, wantPresent, a)
		}
	}
	t.Setenv(DirEnv, dir)
	if got := Status(dir)[0].Install; got != "fedbayes data install" {
		t.Fatalf("install command for the default folder %q", got)
	}
}

// TestAptDownload runs aptDownload against a fake apt-get on PATH that knows the package only
// after `apt-get update`, as on a fresh machine.
func TestAptDownload(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the update path runs only as root")
	}
	bin := t.TempDir()
	state := filepath.Join(bin, "updated")
	script := `#!/bin/sh
case "$1" in
update) touch ` + state + ` ;;
download) if [ -e ` + state + ` ]; then touch "$2_1.0-1_all.deb"; else echo "E: Unable to locate package $2" >&2; exit 100; fi ;;
esac
`
	writeFile(t, filepath.Join(bin, "apt-get"), []byte(script))
	if err := os.Chmod(filepath.Join(bin, "apt-get"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	folder := t.TempDir()
	var log bytes.Buffer
	deb, err := aptDownload("some-pkg", folder, &log)
	if err != nil {
		t.Fatal(err)
	}
	if deb != filepath.Join(folder, "some-pkg_1.0-1_all.deb") || !strings.Contains(log.String(), "running apt-get update") {
		t.Fatalf("deb %s, log %q", deb, log.String())
	}
	// A package apt never knows: the error quotes apt.
	os.Remove(state)
	writeFile(t, filepath.Join(bin, "apt-get"), []byte("#!/bin/sh\n[ \"$1\" = update ] && exit 0\necho \"E: Unable to locate package $2\" >&2\nexit 100\n"))
	if _, err := aptDownload("nosuch", t.TempDir(), io.Discard); err == nil || !strings.Contains(err.Error(), "Unable to locate package nosuch") {
		t.Fatalf("unknown package: %v", err)
	}
}
