package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CIFAR binary layout (Krizhevsky 2009, "binary version"): each record is the label byte(s) then
// 3,072 pixel bytes, the red, green and blue 32x32 planes one after the other, each row-major.
const (
	cifarSide       = 32
	cifarPlane      = cifarSide * cifarSide
	cifarImageBytes = 3 * cifarPlane
)

// cifarRecordsPerFile is the number of records in each official file: a file of the right record
// size but another count is a truncated or foreign file. Tests lower it to write small files.
var cifarRecordsPerFile = map[string]int{
	"data_batch_1.bin": 10000, "data_batch_2.bin": 10000, "data_batch_3.bin": 10000,
	"data_batch_4.bin": 10000, "data_batch_5.bin": 10000, "test_batch.bin": 10000,
	"train.bin": 50000, "test.bin": 10000,
}

// CIFAR10Classes are the CIFAR-10 class names, indexed by label.
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// CIFARFile describes one binary CIFAR file to read with ReadCIFARBinary.
type CIFARFile struct {
	// Path of the file.
	Path string
	// LabelBytes is 1 for CIFAR-10 and 2 for CIFAR-100 (coarse label, then fine label).
	LabelBytes int
	// LabelIndex picks which label byte is the class (CIFAR-100: 0 coarse, 1 fine).
	LabelIndex int
	// NumClasses bounds the labels (10, 20 coarse or 100 fine).
	NumClasses int
	// Records is the number of records the file must hold; 0 accepts any whole number.
	Records int
}

// ReadCIFARBinary reads one CIFAR binary file into images [N, 32, 32, 3] with pixels in [0, 1] and
// labels. A size that is not a whole number of records, a record count other than f.Records, or a
// label outside [0, f.NumClasses) is an error naming the file.
func ReadCIFARBinary(f CIFARFile) (x []float32, labels []int32, err error) {
	if f.LabelBytes < 1 || f.LabelIndex < 0 || f.LabelIndex >= f.LabelBytes {
		return nil, nil, fileErrorf(f.Path, "bad CIFAR layout: label index %d of %d label bytes", f.LabelIndex, f.LabelBytes)
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, nil, err
	}
	// The size is checked before anything is read (whole records, the official count, the memory
	// bound on the file's bytes), and no more than that size is read.
	if err := checkCIFARSize(f, st.Size()); err != nil {
		return nil, nil, err
	}
	raw := make([]byte, st.Size())
	if _, err := io.ReadFull(file, raw); err != nil {
		return nil, nil, fileErrorf(f.Path, "shorter than its size of %d bytes when read: %v", st.Size(), err)
	}
	rec := f.LabelBytes + cifarImageBytes
	n := len(raw) / rec
	x = make([]float32, n*cifarImageBytes)
	labels = make([]int32, n)
	for i := 0; i < n; i++ {
		r := raw[i*rec : (i+1)*rec]
		l := int(r[f.LabelIndex])
		if l >= f.NumClasses {
			return nil, nil, fileErrorf(f.Path, "record %d has label %d, outside [0, %d)", i, l, f.NumClasses)
		}
		labels[i] = int32(l)
		px := r[f.LabelBytes:]
		out := x[i*cifarImageBytes : (i+1)*cifarImageBytes]
		for p := 0; p < cifarPlane; p++ { // planar RGB -> channels-last
			out[3*p] = pixelScale[px[p]]
			out[3*p+1] = pixelScale[px[cifarPlane+p]]
			out[3*p+2] = pixelScale[px[2*cifarPlane+p]]
		}
	}
	return x, labels, nil
}

// checkCIFARSize refuses a CIFAR file of size bytes that is not a whole number of records, holds
// another count than f.Records, or whose values would take more memory than the bound allows.
func checkCIFARSize(f CIFARFile, size int64) error {
	rec := int64(f.LabelBytes + cifarImageBytes)
	if size == 0 || size%rec != 0 {
		return fileErrorf(f.Path, "size %d bytes is not a whole number of %d-byte records (%d label byte(s) + 3072 pixels): truncated, or not the CIFAR binary version",
			size, rec, f.LabelBytes)
	}
	n := size / rec
	if f.Records > 0 && n != int64(f.Records) {
		return fileErrorf(f.Path, "holds %d records, the official file holds %d: truncated or a different file", n, f.Records)
	}
	return checkDataMemory(f.Path, fmt.Sprintf("its %d CIFAR records", n), size)
}

// readCIFARFiles reads and concatenates CIFAR binary files into one dataset.
func readCIFARFiles(name string, files []CIFARFile, classNames []string) (*Dataset, error) {
	ds := &Dataset{Name: name, Shape: []int{cifarSide, cifarSide, 3}, NumClasses: files[0].NumClasses, ClassNames: classNames}
	for _, f := range files {
		x, l, err := ReadCIFARBinary(f)
		if err != nil {
			return nil, err
		}
		ds.X = append(ds.X, x...)
		ds.Labels = append(ds.Labels, l...)
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return ds, nil
}

// cifarFolder finds the folder holding the named file among the candidates.
func cifarFolder(name string, folders []string, file string) (string, error) {
	p, err := findFile(folders, file)
	if err != nil || strings.HasSuffix(p, ".gz") {
		return "", fmt.Errorf("%s: %s not found in %s (extract the binary-version tarball there)", name, file, strings.Join(folders, " or "))
	}
	return filepath.Dir(p), nil
}

// LoadCIFAR10 loads CIFAR-10's binary version (data_batch_1..5.bin, test_batch.bin) from
// dir/cifar-10-batches-bin (the tarball's folder), dir/cifar10 or dir. Images [32, 32, 3] in [0, 1].
func LoadCIFAR10(dir string) (train, test *Dataset, err error) {
	folder, err := cifarFolder("cifar10", dataFolders(dir, "cifar-10-batches-bin", "cifar10"), "test_batch.bin")
	if err != nil {
		return nil, nil, err
	}
	names := readLabelNames(filepath.Join(folder, "batches.meta.txt"), 10)
	if names == nil {
		names = CIFAR10Classes
	}
	file := func(base string) CIFARFile {
		return CIFARFile{Path: filepath.Join(folder, base), LabelBytes: 1, NumClasses: 10, Records: cifarRecordsPerFile[base]}
	}
	var trainFiles []CIFARFile
	for i := 1; i <= 5; i++ {
		trainFiles = append(trainFiles, file(fmt.Sprintf("data_batch_%d.bin", i)))
	}
	if train, err = readCIFARFiles("cifar10/train", trainFiles, names); err != nil {
		return nil, nil, err
	}
	if test, err = readCIFARFiles("cifar10/test", []CIFARFile{file("test_batch.bin")}, names); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// LoadCIFAR100 loads CIFAR-100's binary version (train.bin, test.bin) from dir/cifar-100-binary,
// dir/cifar100 or dir, with the 100 fine labels, or the 20 coarse (superclass) labels when coarse is
// true. Class names come from fine_label_names.txt / coarse_label_names.txt when present.
func LoadCIFAR100(dir string, coarse bool) (train, test *Dataset, err error) {
	name := "cifar100"
	folder, err := cifarFolder(name, dataFolders(dir, "cifar-100-binary", "cifar100"), "test.bin")
	if err != nil {
		return nil, nil, err
	}
	index, classes, namesFile := 1, 100, "fine_label_names.txt"
	if coarse {
		name, index, classes, namesFile = "cifar100-coarse", 0, 20, "coarse_label_names.txt"
	}
	names := readLabelNames(filepath.Join(folder, namesFile), classes)
	file := func(base string) []CIFARFile {
		return []CIFARFile{{Path: filepath.Join(folder, base), LabelBytes: 2, LabelIndex: index, NumClasses: classes, Records: cifarRecordsPerFile[base]}}
	}
	if train, err = readCIFARFiles(name+"/train", file("train.bin"), names); err != nil {
		return nil, nil, err
	}
	if test, err = readCIFARFiles(name+"/test", file("test.bin"), names); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// labelNamesBound is the most bytes a class-name file (CIFAR's batches.meta.txt, EMNIST's
// mapping.txt) may hold; a longer one is ignored, as a malformed one is.
const labelNamesBound = 1 << 20

// readLabelNames reads one class name per non-empty line; nil unless there are exactly n.
func readLabelNames(path string, n int) []string {
	raw, err := readAllMaybeGzipMax(path, labelNamesBound)
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(raw), "\n") {
		if s := strings.TrimSpace(line); s != "" {
			names = append(names, s)
		}
	}
	if len(names) != n {
		return nil
	}
	return names
}
