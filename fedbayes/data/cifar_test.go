package data

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallCIFARCounts makes every official CIFAR file hold n records during a test.
func smallCIFARCounts(t *testing.T, n int) {
	saved := cifarRecordsPerFile
	cifarRecordsPerFile = map[string]int{}
	for k := range saved {
		cifarRecordsPerFile[k] = n
	}
	t.Cleanup(func() { cifarRecordsPerFile = saved })
}

func TestLoadCIFAR10(t *testing.T) {
	smallCIFARCounts(t, 2)
	dir := filepath.Join(t.TempDir(), "cifar-10-batches-bin")
	img := testImages(2, cifarImageBytes)
	for i := 1; i <= 5; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)), cifarBytes([][]byte{{byte(i)}, {byte(9 - i)}}, img))
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarBytes([][]byte{{7}, {0}}, img))
	writeFile(t, filepath.Join(dir, "batches.meta.txt"), []byte("a\nb\nc\nd\ne\nf\ng\nHORSE\ni\nj\n\n"))
	train, test, err := LoadCIFAR10(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 10 || test.Len() != 2 || train.ClassNames[7] != "HORSE" {
		t.Fatalf("train %d test %d names %v", train.Len(), test.Len(), train.ClassNames)
	}
	if got := train.Labels; got[0] != 1 || got[1] != 8 || got[8] != 5 || got[9] != 4 {
		t.Fatalf("train labels %v", got)
	}
	// Channels-last values equal the images the records were written from (planar on disk).
	for e := 0; e < 2; e++ {
		for i := 0; i < cifarImageBytes; i++ {
			if got, want := test.X[e*cifarImageBytes+i], float32(img[e*cifarImageBytes+i])/255; got != want {
				t.Fatalf("test image %d value %d = %g, want %g", e, i, got, want)
			}
		}
	}
	if !slices.Equal(train.Shape, []int{32, 32, 3}) {
		t.Fatalf("shape %v", train.Shape)
	}
}

func TestLoadCIFAR100FineAndCoarse(t *testing.T) {
	smallCIFARCounts(t, 3)
	dir := filepath.Join(t.TempDir(), "cifar-100-binary")
	img := testImages(3, cifarImageBytes)
	labels := [][]byte{{19, 99}, {0, 0}, {5, 42}}
	writeFile(t, filepath.Join(dir, "train.bin"), cifarBytes(labels, img))
	writeFile(t, filepath.Join(dir, "test.bin"), cifarBytes(labels, img))
	for _, tc := range []struct {
		coarse  bool
		classes int
		want    []int32
	}{{false, 100, []int32{99, 0, 42}}, {true, 20, []int32{19, 0, 5}}} {
		train, _, err := LoadCIFAR100(filepath.Dir(dir), tc.coarse)
		if err != nil {
			t.Fatal(err)
		}
		if train.NumClasses != tc.classes || !slices.Equal(train.Labels, tc.want) {
			t.Fatalf("coarse=%v: classes %d labels %v, want %d %v", tc.coarse, train.NumClasses, train.Labels, tc.classes, tc.want)
		}
	}
}

func TestCIFARErrors(t *testing.T) {
	img := testImages(2, cifarImageBytes)
	good := cifarBytes([][]byte{{1}, {2}}, img)
	tests := []struct {
		name    string
		content []byte
		records int
		want    string
	}{
		{"truncated record", good[:len(good)-1], 0, "not a whole number of 3073-byte records"},
		{"empty", nil, 0, "not a whole number"},
		{"fewer records than official", good, 3, "holds 2 records, the official file holds 3"},
		{"label out of range", cifarBytes([][]byte{{1}, {10}}, img), 0, "record 1 has label 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "data_batch_1.bin"), tc.content)
			_, _, err := ReadCIFARBinary(CIFARFile{Path: p, LabelBytes: 1, NumClasses: 10, Records: tc.records})
			var fe *FileError
			if err == nil || !errors.As(err, &fe) || fe.Path != p || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a FileError for %s containing %q", err, p, tc.want)
			}
		})
	}
	// A missing batch in the folder is named.
	smallCIFARCounts(t, 2)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "test_batch.bin"), good)
	if _, _, err := LoadCIFAR10(dir); err == nil || !strings.Contains(err.Error(), "data_batch_1.bin") {
		t.Fatalf("missing batch: error %v", err)
	}
}
