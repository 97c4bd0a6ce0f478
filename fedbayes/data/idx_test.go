package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestLoadIDXRawAndGzip(t *testing.T) {
	const n, h, w = 5, 4, 3
	pixels := testImages(n, h*w)
	labels := []byte{3, 0, 9, 1, 3}
	for _, gz := range []bool{false, true} {
		dir := t.TempDir()
		img, lab := idxBytes([]int{n, h, w}, pixels), idxBytes([]int{n}, labels)
		if gz {
			img, lab = gzipBytes(t, img), gzipBytes(t, lab)
		}
		ip := writeFile(t, filepath.Join(dir, "img"), img)
		lp := writeFile(t, filepath.Join(dir, "lab"), lab)
		ds, err := LoadIDX(ip, lp, IDXOptions{Name: "t", NumClasses: 10})
		if err != nil {
			t.Fatalf("gzip=%v: %v", gz, err)
		}
		if ds.Len() != n || !slices.Equal(ds.Shape, []int{h, w, 1}) {
			t.Fatalf("gzip=%v: len %d shape %v", gz, ds.Len(), ds.Shape)
		}
		for i, p := range pixels {
			if want := float32(p) / 255; ds.X[i] != want {
				t.Fatalf("gzip=%v: X[%d] = %g, want %g", gz, i, ds.X[i], want)
			}
		}
		for i, l := range labels {
			if ds.Labels[i] != int32(l) {
				t.Fatalf("gzip=%v: label %d = %d, want %d", gz, i, ds.Labels[i], l)
			}
		}
	}
}

func TestLoadIDXTransposeAndOffset(t *testing.T) {
	// One 2x3 image stored column by column (EMNIST): stored rows are the image's columns.
	stored := []byte{1, 2, 3, 4, 5, 6} // stored [3][2]... declared as [N=1, H=2, W=3]
	dir := t.TempDir()
	ip := writeFile(t, filepath.Join(dir, "i"), idxBytes([]int{1, 2, 3}, stored))
	lp := writeFile(t, filepath.Join(dir, "l"), idxBytes([]int{1}, []byte{26}))
	ds, err := LoadIDX(ip, lp, IDXOptions{NumClasses: 26, LabelOffset: 1, Transpose: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Shape, []int{3, 2, 1}) || ds.Labels[0] != 25 {
		t.Fatalf("shape %v label %d, want [3 2 1] and 25", ds.Shape, ds.Labels[0])
	}
	// Transposed 3x2: row r, column c holds stored[c][r] = stored[c*3+r].
	want := []byte{1, 4, 2, 5, 3, 6}
	for i, b := range want {
		if ds.X[i] != float32(b)/255 {
			t.Fatalf("X[%d] = %g, want %g", i, ds.X[i]*255, float32(b))
		}
	}
}

func TestIDXErrors(t *testing.T) {
	good := idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	labels := idxBytes([]int{2}, []byte{0, 1})
	gz := gzipBytes(t, good)
	tests := []struct {
		name           string
		images, labels []byte
		classes        int
		want           string // substring of the error
		inLabels       bool   // the error names the labels file
	}{
		{"wrong magic", append([]byte{0x1f, 0x00}, good[2:]...), labels, 10, "wrong magic number", false},
		{"not bytes", append([]byte{0, 0, 0x0D, 3}, good[4:]...), labels, 10, "element type 0x0d", false},
		{"short", []byte{0, 0}, labels, 10, "too short", false},
		{"truncated header", good[:9], labels, 10, "truncated IDX header", false},
		{"truncated data", good[:len(good)-1], labels, 10, "truncated: dimensions [2 2 2] need 8 bytes of data, file has 7", false},
		{"extra bytes", append(append([]byte{}, good...), 9), labels, 10, "1 unexpected bytes", false},
		{"truncated gzip", gz[:len(gz)-6], labels, 10, "truncated gzip", false},
		{"corrupt gzip", corruptGzip(gz), labels, 10, "gzip", false},
		{"count mismatch", good, idxBytes([]int{3}, []byte{0, 1, 2}), 10, "has 3 labels but images file", true},
		{"label out of range", good, idxBytes([]int{2}, []byte{0, 10}), 10, "label 10 of item 1 is not a class", true},
		{"labels rank", good, idxBytes([]int{1, 2}, []byte{0, 1}), 10, "want [N]", true},
		{"images rank", idxBytes([]int{8}, make([]byte, 8)), labels, 10, "want [N, H, W]", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ip := writeFile(t, filepath.Join(dir, "images.idx"), tc.images)
			lp := writeFile(t, filepath.Join(dir, "labels.idx"), tc.labels)
			ds, err := LoadIDX(ip, lp, IDXOptions{NumClasses: tc.classes})
			if err == nil {
				t.Fatalf("no error, got %d examples", ds.Len())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q is not a *FileError", err)
			}
			wantPath := ip
			if tc.inLabels {
				wantPath = lp
			}
			if fe.Path != wantPath {
				t.Fatalf("error names %s, want %s", fe.Path, wantPath)
			}
		})
	}
}

// corruptGzip flips bits in the middle of the deflate data (the CRC or the decoder catches it).
func corruptGzip(gz []byte) []byte {
	out := append([]byte{}, gz...)
	for i := 12; i < len(out)-8; i++ {
		out[i] ^= 0x5a
	}
	return out
}

// writeMNISTDir writes the four standard IDX files (gzipped) into dir.
func writeMNISTDir(t testing.TB, dir string, nTrain, nTest int, trainLabels, testLabels []byte) {
	t.Helper()
	for _, s := range []struct {
		prefix string
		n      int
		labels []byte
	}{{"train", nTrain, trainLabels}, {"t10k", nTest, testLabels}} {
		writeFile(t, filepath.Join(dir, s.prefix+"-images-idx3-ubyte.gz"), gzipBytes(t, idxBytes([]int{s.n, 28, 28}, testImages(s.n, 784))))
		writeFile(t, filepath.Join(dir, s.prefix+"-labels-idx1-ubyte.gz"), gzipBytes(t, idxBytes([]int{s.n}, s.labels)))
	}
}

func TestLoadFashionMNISTAndMNISTLayouts(t *testing.T) {
	dir := t.TempDir()
	writeMNISTDir(t, filepath.Join(dir, "fashion-mnist"), 4, 2, []byte{0, 9, 4, 4}, []byte{1, 2})
	train, test, err := LoadFashionMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 4 || test.Len() != 2 || train.NumClasses != 10 || train.ClassNames[9] != "Ankle boot" {
		t.Fatalf("train %d test %d classes %d names %v", train.Len(), test.Len(), train.NumClasses, train.ClassNames)
	}
	if train.Name != "fashion-mnist/train" || test.Labels[1] != 2 {
		t.Fatalf("name %q test labels %v", train.Name, test.Labels)
	}
	// MNIST pointed straight at the folder holding the files.
	if _, _, err := LoadMNIST(filepath.Join(dir, "fashion-mnist")); err != nil {
		t.Fatal(err)
	}
	// A missing file says which and where.
	if _, _, err := LoadMNIST(dir); err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte[.gz]") {
		t.Fatalf("missing files: error %v", err)
	}
}

func TestLoadEMNISTLetters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "emnist", "gzip")
	for _, s := range []string{"train", "test"} {
		writeFile(t, filepath.Join(dir, "emnist-letters-"+s+"-images-idx3-ubyte.gz"), gzipBytes(t, idxBytes([]int{2, 28, 28}, testImages(2, 784))))
		writeFile(t, filepath.Join(dir, "emnist-letters-"+s+"-labels-idx1-ubyte.gz"), gzipBytes(t, idxBytes([]int{2}, []byte{1, 26})))
	}
	var mapping strings.Builder
	for i := 1; i <= 26; i++ {
		mapping.WriteString(strings.Join([]string{strconv.Itoa(i), strconv.Itoa(64 + i), strconv.Itoa(96 + i)}, " ") + "\n")
	}
	writeFile(t, filepath.Join(dir, "emnist-letters-mapping.txt"), []byte(mapping.String()))
	train, _, err := LoadEMNIST(filepath.Dir(filepath.Dir(dir)), "letters")
	if err != nil {
		t.Fatal(err)
	}
	if train.NumClasses != 26 || train.Labels[0] != 0 || train.Labels[1] != 25 || train.ClassNames[25] != "Zz" {
		t.Fatalf("classes %d labels %v names %v", train.NumClasses, train.Labels, train.ClassNames)
	}
	// The stored image is transposed: X[r][c] = stored[c][r].
	img := testImages(2, 784)
	if got, want := train.X[1*28+2], float32(img[2*28+1])/255; got != want {
		t.Fatalf("transposed pixel (1,2) = %g, want %g", got, want)
	}
	if _, _, err := LoadEMNIST(t.TempDir(), "nosuch"); err == nil {
		t.Fatal("unknown split: no error")
	}
}
