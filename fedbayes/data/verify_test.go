package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// installedFashionMNIST writes a small Fashion-MNIST folder into dir with a manifest that records its
// digests, as `fedbayes data install` does, and returns the training images' path.
func installedFashionMNIST(t *testing.T, dir string) string {
	t.Helper()
	folder := filepath.Join(dir, "fashion-mnist")
	writeMNISTDir(t, folder, 3, 2, []byte{0, 1, 9}, []byte{2, 3})
	entries, err := os.ReadDir(folder)
	if err != nil {
		t.Fatal(err)
	}
	e := ManifestEntry{Package: "dataset-fashion-mnist", Version: "test"}
	images := ""
	for _, de := range entries {
		f, err := fileDigest(filepath.Join(folder, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		e.Files = append(e.Files, f)
		if strings.HasPrefix(de.Name(), "train-images") {
			images = filepath.Join(folder, de.Name())
		}
	}
	m := &Manifest{Folders: map[string]ManifestEntry{"fashion-mnist": e}}
	if err := m.write(dir); err != nil {
		t.Fatal(err)
	}
	return images
}

func TestVerifyDataset(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"intact", func(*testing.T, string) {}, ""},
		{"truncated to 100 bytes", func(t *testing.T, p string) {
			if err := os.Truncate(p, 100); err != nil {
				t.Fatal(err)
			}
		}, "corrupt (truncated): 100 bytes"},
		{"one byte changed", func(t *testing.T, p string) {
			raw, _ := os.ReadFile(p)
			raw[len(raw)/2] ^= 0xff
			writeFile(t, p, raw)
		}, "corrupt: SHA-256"},
		{"removed", func(t *testing.T, p string) { os.Remove(p) }, "cannot be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			images := installedFashionMNIST(t, dir)
			tc.damage(t, images)
			_, _, err := Load("fashion-mnist", dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("intact data: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), images) {
				t.Fatalf("Load: %v, want an error naming %s with %q", err, images, tc.want)
			}
			for _, a := range Status(dir) {
				if a.Name == "fashion-mnist" && a.Present {
					t.Errorf("Status reports damaged data as present (corrupt %q)", a.Corrupt)
				}
				if a.Name == "fashion-mnist" && tc.name != "removed" && !strings.Contains(a.Corrupt, images) {
					t.Errorf("Status.Corrupt = %q, want it to name %s", a.Corrupt, images)
				}
			}
		})
	}
}

func TestVerifyCachedBySizeAndMtime(t *testing.T) {
	dir := t.TempDir()
	images := installedFashionMNIST(t, dir)
	if err := VerifyDataset("fashion-mnist", dir); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(images)
	if _, ok := verified.Load(verifiedKey{images, st.Size(), st.ModTime()}); !ok {
		t.Fatal("the digest is not cached")
	}
	// Same size, new content, new mtime: hashed again and refused.
	raw, _ := os.ReadFile(images)
	raw[len(raw)-1] ^= 1
	writeFile(t, images, raw)
	later := st.ModTime().Add(2e9)
	if err := os.Chtimes(images, later, later); err != nil {
		t.Fatal(err)
	}
	if err := VerifyDataset("fashion-mnist", dir); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("changed file: %v", err)
	}
}

func TestGzipTrailingData(t *testing.T) {
	dir := t.TempDir()
	body := []byte("a,b\n1,2\n")
	gz := gzipBytes(t, body)
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"two members", append(append([]byte{}, gz...), gz...), ""},
		{"trailing junk", append(append([]byte{}, gz...), []byte("junk!")...), "5 bytes of trailing data after the gzip stream"},
		{"trailing zero", append(append([]byte{}, gz...), 0), "1 bytes of trailing data"},
		{"truncated", gz[:len(gz)-6], "truncated gzip stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(dir, tc.name+".gz"), tc.content)
			got, err := readTable(p)
			if tc.want == "" {
				if err != nil || string(got) != string(body)+string(body) {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming %s with %q", err, p, tc.want)
			}
		})
	}
}

func TestNonFiniteCells(t *testing.T) {
	tests := []struct{ name, file, content, want string }{
		{"iris", "iris.csv", "2,4,a,b,c\n1,2,3,4,0\n1,NaN,3,4,1\n", `line 3, field 2: "NaN" is not a finite number`},
		{"iris", "iris.csv", "2,4,a,b,c\n1,2,3,4,0\n1,2,Inf,4,1\n", `line 3, field 3: "Inf" is not a finite number`},
		{"iris", "iris.csv", "2,4,a,b,c\n1,2,3,1e999,0\n1,2,3,4,1\n", `line 2, field 4: "1e999" is not a finite number`},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		p := writeFile(t, filepath.Join(dir, SklearnDir, tc.file), []byte(tc.content))
		_, err := LoadSklearn(tc.name, dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want one naming %s with %q", tc.content, err, p, tc.want)
		}
	}
	p := writeFile(t, filepath.Join(t.TempDir(), "t.csv"), []byte("x,y\n1,2\nNaN,3\n"))
	if _, err := LoadCSV(p, CSVOptions{Target: "y"}); err == nil || !strings.Contains(err.Error(), `line 3, column "x"`) {
		t.Errorf("CSV NaN: %v", err)
	}
}
