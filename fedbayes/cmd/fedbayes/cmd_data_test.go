package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

func TestDataCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args       []string
		status     int
		wantOut    string
		wantStderr string
	}{
		{[]string{"data", "path", "-dir", dir}, 0, dir + "\n", ""},
		{[]string{"data", "path", "-dir", dir, "iris"}, 0, filepath.Join(dir, "sklearn") + "\n", ""},
		{[]string{"data", "path", "-dir", dir, "nosuch"}, 2, "", "unknown dataset \"nosuch\""},
		{[]string{"data", "list", "-dir", dir}, 0, "copy train_32x32.mat, test_32x32.mat into " + filepath.Join(dir, "svhn"), ""},
		{[]string{"data"}, 2, "", "usage: fedbayes data install|list|path"},
		{[]string{"data", "remove"}, 2, "", "unknown sub-command \"remove\""},
		{[]string{"data", "list", "extra"}, 2, "", "unexpected arguments"},
		{[]string{"data", "help"}, 0, "install  fetch Fashion-MNIST", ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := runMain(tc.args, &out, &errOut)
			if status != tc.status || !strings.Contains(out.String(), tc.wantOut) || !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Fatalf("status %d (want %d)\nstdout: %s\nstderr: %s", status, tc.status, out.String(), errOut.String())
			}
		})
	}
}

func TestDataListJSON(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if status := runMain([]string{"data", "list", "-json", "-dir", dir}, &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	var got []data.Availability
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(data.Names()) || got[0].Name != "fashion-mnist" || got[0].Present {
		t.Fatalf("%+v", got)
	}
}

// TestDataInstallAlreadyDone runs `data install` on a folder whose manifest says everything is
// there: nothing is downloaded and the command says so.
func TestDataInstallAlreadyDone(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]string{
		"fashion-mnist": {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"},
		"sklearn": {"digits.csv.gz", "iris.csv", "wine_data.csv", "breast_cancer.csv", "boston_house_prices.csv",
			"diabetes_data_raw.csv.gz", "diabetes_target.csv.gz"},
	}
	pkgs := map[string]string{"fashion-mnist": "dataset-fashion-mnist", "sklearn": "python3-sklearn"}
	m := data.Manifest{Folders: map[string]data.ManifestEntry{}}
	for folder, names := range files {
		e := data.ManifestEntry{Package: pkgs[folder], Version: "1"}
		for _, n := range names {
			if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, folder, n), []byte("abc"), 0o644); err != nil {
				t.Fatal(err)
			}
			// SHA-256 of "abc": install checks the digests, not only the sizes.
			e.Files = append(e.Files, data.ManifestFileEntry{Name: n, Size: 3,
				SHA256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"})
		}
		m.Folders[folder] = e
	}
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, data.ManifestFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if status := runMain([]string{"data", "install", "-dir", dir}, &out, &errOut); status != 0 {
		t.Fatalf("status %d: %s", status, errOut.String())
	}
	if strings.Count(out.String(), "already installed") != 2 {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestDataListCorrupt(t *testing.T) {
	dir := t.TempDir()
	iris := filepath.Join(dir, "sklearn", "iris.csv")
	if err := os.MkdirAll(filepath.Dir(iris), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(iris, []byte("150,4,a,b,c\n"), 0o644); err != nil { // truncated
		t.Fatal(err)
	}
	m := data.Manifest{Folders: map[string]data.ManifestEntry{"sklearn": {Package: "python3-sklearn",
		Files: []data.ManifestFileEntry{{Name: "iris.csv", Size: 4000, SHA256: strings.Repeat("ab", 32)}}}}}
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, data.ManifestFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	status := runMain([]string{"data", "list", "-dir", dir}, &out, &errOut)
	if status == 0 || !strings.Contains(out.String(), "CORRUPT") || !strings.Contains(out.String(), iris+": corrupt (truncated)") ||
		!strings.Contains(errOut.String(), "corrupt: iris") {
		t.Fatalf("status %d\nstdout: %s\nstderr: %s", status, out.String(), errOut.String())
	}
}
