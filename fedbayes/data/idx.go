package data

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// IDX is an unsigned-byte array read from an IDX file, the format of MNIST, Fashion-MNIST and EMNIST
// (LeCun et al., "THE MNIST DATABASE of handwritten digits": magic 0x00 0x00 type ndims, then ndims
// big-endian int32 dimensions, then the values in row-major order).
type IDX struct {
	// Dims are the array dimensions, the first one being the number of items.
	Dims []int
	// Data holds prod(Dims) values in row-major order.
	Data []byte
}

// idxTypeUint8 is the IDX element-type code of unsigned bytes, the only one image and label files use.
const idxTypeUint8 = 0x08

// ReadIDX reads an IDX file of unsigned bytes, raw or gzip-compressed. A wrong magic number, an
// element type other than unsigned byte, a truncated file or bytes left after the data are errors.
// The header is read first: dimensions whose values would take more memory once loaded than the
// bound allows (checkDataMemory: DataMemoryFactor times their bytes against MaxDataMemory) are
// refused before any data is read (as are dimensions whose product exceeds 2^40), and no more than
// the header's declared bytes (plus one) are ever decompressed or allocated.
func ReadIDX(path string) (*IDX, error) {
	head, readErr, err := readPrefixMaybeGzip(path, idxMaxHeader)
	if err != nil {
		return nil, err
	}
	dims, header, total, err := parseIDXHeader(path, head)
	if err != nil {
		if readErr != nil && (len(head) < 4 || len(head) < 4+4*int(head[3])) {
			return nil, fileErrorf(path, "corrupt or truncated gzip stream within the IDX header: %v", readErr)
		}
		return nil, err
	}
	if err := checkDataMemory(path, fmt.Sprintf("IDX dimensions %v", dims), int64(total)); err != nil {
		return nil, err
	}
	raw, err := readAllMaybeGzipMax(path, int64(header+total))
	if le := (*longerError)(nil); errors.As(err, &le) {
		if le.Exact {
			return nil, fileErrorf(path, "%d unexpected bytes after the %d bytes of data for dimensions %v", le.Extra, total, dims)
		}
		return nil, fileErrorf(path, "unexpected bytes after the %d bytes of data for dimensions %v (the stream holds more; not decompressed further)", total, dims)
	}
	if err != nil {
		return nil, err
	}
	return parseIDX(path, raw)
}

// idxMaxHeader is the longest IDX header: the magic number and 255 dimensions.
const idxMaxHeader = 4 + 4*255

// idxMaxValues is the most values an IDX header may declare (2^40), whatever the memory bound.
const idxMaxValues = 1 << 40

// parseIDXHeader reads the magic number and dimensions from the start of an IDX file's content:
// the header's length in bytes and the number of values it declares.
func parseIDXHeader(path string, raw []byte) (dims []int, header, total int, err error) {
	if len(raw) < 4 {
		return nil, 0, 0, fileErrorf(path, "too short for an IDX file (%d bytes, the magic number alone takes 4)", len(raw))
	}
	magic := binary.BigEndian.Uint32(raw)
	if raw[0] != 0 || raw[1] != 0 {
		return nil, 0, 0, fileErrorf(path, "wrong magic number 0x%08x: not an IDX file (want 0x0000TTDD)", magic)
	}
	if raw[2] != idxTypeUint8 {
		return nil, 0, 0, fileErrorf(path, "IDX element type 0x%02x (magic 0x%08x) is not supported: only unsigned bytes (0x08)", raw[2], magic)
	}
	ndims := int(raw[3])
	if ndims == 0 {
		return nil, 0, 0, fileErrorf(path, "IDX magic 0x%08x declares 0 dimensions", magic)
	}
	header = 4 + 4*ndims
	if len(raw) < header {
		return nil, 0, 0, fileErrorf(path, "truncated IDX header: %d dimensions need %d bytes, file has %d", ndims, header, len(raw))
	}
	dims = make([]int, ndims)
	total = 1
	for i := range dims {
		d := int(binary.BigEndian.Uint32(raw[4+4*i:]))
		if d <= 0 || d > 1<<31-1 {
			return nil, 0, 0, fileErrorf(path, "IDX dimension %d is %d", i, d)
		}
		dims[i] = d
		if total > idxMaxValues/d { // checked before multiplying, so the product cannot overflow
			return nil, 0, 0, fileErrorf(path, "IDX dimensions %v are implausibly large (more than 2^40 values)", dims[:i+1])
		}
		total *= d
	}
	return dims, header, total, nil
}

func parseIDX(path string, raw []byte) (*IDX, error) {
	dims, header, total, err := parseIDXHeader(path, raw)
	if err != nil {
		return nil, err
	}
	got := len(raw) - header
	if got < total {
		return nil, fileErrorf(path, "truncated: dimensions %v need %d bytes of data, file has %d", dims, total, got)
	}
	if got > total {
		return nil, fileErrorf(path, "%d unexpected bytes after the %d bytes of data for dimensions %v", got-total, total, dims)
	}
	return &IDX{Dims: dims, Data: raw[header:]}, nil
}

// pixelScale maps a byte to [0, 1] (pixel / 255), the image scaling of every loader (docs/data.md).
var pixelScale = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return
}()

// IDXOptions says how LoadIDX reads an image/label pair.
type IDXOptions struct {
	// Name of the resulting dataset.
	Name string
	// NumClasses is the number of classes; 0 infers max(label)+1 after LabelOffset.
	NumClasses int
	// ClassNames names the classes (optional).
	ClassNames []string
	// LabelOffset is subtracted from every stored label (1 for EMNIST letters, stored 1..26).
	LabelOffset int
	// Transpose transposes each image (EMNIST stores images column by column).
	Transpose bool
}

// LoadIDX reads an images file ([N, H, W] or [N, H, W, C] unsigned bytes) and a labels file ([N]
// unsigned bytes) in IDX format, raw or gzip-compressed. Pixels are scaled to [0, 1]. Images and
// labels must agree in count and every label must be a class.
func LoadIDX(imagesPath, labelsPath string, opts IDXOptions) (*Dataset, error) {
	var images, labels *IDX
	var errImages, errLabels error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); images, errImages = ReadIDX(imagesPath) }()
	labels, errLabels = ReadIDX(labelsPath)
	wg.Wait()
	if errImages != nil {
		return nil, errImages
	}
	if errLabels != nil {
		return nil, errLabels
	}
	if r := len(images.Dims); r != 3 && r != 4 {
		return nil, fileErrorf(imagesPath, "images file has dimensions %v: want [N, H, W] or [N, H, W, C]", images.Dims)
	}
	if len(labels.Dims) != 1 {
		return nil, fileErrorf(labelsPath, "labels file has dimensions %v: want [N]", labels.Dims)
	}
	n := images.Dims[0]
	if labels.Dims[0] != n {
		return nil, fileErrorf(labelsPath, "has %d labels but images file %s has %d images", labels.Dims[0], imagesPath, n)
	}
	shape := []int{images.Dims[1], images.Dims[2], 1}
	if len(images.Dims) == 4 {
		shape[2] = images.Dims[3]
	}
	if opts.Transpose && len(images.Dims) == 4 {
		return nil, fileErrorf(imagesPath, "transposing is only supported for single-channel [N, H, W] images, not %v", images.Dims)
	}
	ds := &Dataset{Name: opts.Name, Shape: shape, NumClasses: opts.NumClasses, ClassNames: opts.ClassNames}
	ds.Labels = make([]int32, n)
	maxLabel := -1
	for i, b := range labels.Data {
		l := int(b) - opts.LabelOffset
		if l < 0 || (opts.NumClasses > 0 && l >= opts.NumClasses) {
			return nil, fileErrorf(labelsPath, "label %d of item %d is not a class (stored value %d, offset %d, %d classes)",
				l, i, b, opts.LabelOffset, opts.NumClasses)
		}
		maxLabel = max(maxLabel, l)
		ds.Labels[i] = int32(l)
	}
	if ds.NumClasses == 0 {
		ds.NumClasses = maxLabel + 1
	}
	ds.X = make([]float32, len(images.Data))
	if opts.Transpose {
		h, w := shape[0], shape[1]
		shape[0], shape[1] = w, h
		for e := 0; e < n; e++ {
			src := images.Data[e*h*w : (e+1)*h*w]
			dst := ds.X[e*h*w : (e+1)*h*w]
			for r := 0; r < h; r++ {
				for c := 0; c < w; c++ {
					dst[c*h+r] = pixelScale[src[r*w+c]]
				}
			}
		}
	} else {
		scaleBytes(ds.X, images.Data)
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return ds, nil
}

// scaleBytes writes pixelScale of src into dst, on two goroutines for large inputs.
func scaleBytes(dst []float32, src []byte) {
	const chunk = 1 << 22
	if len(src) < 2*chunk {
		for i, b := range src {
			dst[i] = pixelScale[b]
		}
		return
	}
	var wg sync.WaitGroup
	for start := 0; start < len(src); start += chunk {
		end := min(start+chunk, len(src))
		wg.Add(1)
		go func(in []byte, out []float32) {
			defer wg.Done()
			for i, b := range in {
				out[i] = pixelScale[b]
			}
		}(src[start:end], dst[start:end])
	}
	wg.Wait()
}

// FashionMNISTClasses are the Fashion-MNIST class names (Xiao et al. 2017), indexed by label.
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// digitNames are the class names "0".."9".
var digitNames = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// mnistFormatFiles are the standard names of the four IDX files of MNIST and Fashion-MNIST (some
// copies use a dot before "idx").
var mnistFormatFiles = [4][]string{
	{"train-images-idx3-ubyte", "train-images.idx3-ubyte"},
	{"train-labels-idx1-ubyte", "train-labels.idx1-ubyte"},
	{"t10k-images-idx3-ubyte", "t10k-images.idx3-ubyte"},
	{"t10k-labels-idx1-ubyte", "t10k-labels.idx1-ubyte"},
}

// loadMNISTFormat loads the train and test IDX pairs with the standard names from the first folder
// that has them, reading the two splits concurrently.
func loadMNISTFormat(name string, folders []string, numClasses int, classNames []string) (train, test *Dataset, err error) {
	var paths [4]string
	for i, names := range mnistFormatFiles {
		if paths[i], err = findFile(folders, names...); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	var errTrain error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		train, errTrain = LoadIDX(paths[0], paths[1], IDXOptions{Name: name + "/train", NumClasses: numClasses, ClassNames: classNames})
	}()
	test, err = LoadIDX(paths[2], paths[3], IDXOptions{Name: name + "/test", NumClasses: numClasses, ClassNames: classNames})
	wg.Wait()
	if errTrain != nil {
		return nil, nil, errTrain
	}
	if err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// LoadFashionMNIST loads Fashion-MNIST (60,000 training and 10,000 test 28x28 grey images, 10
// classes) from dir/fashion-mnist (where Install puts it) or from dir itself, with the standard IDX
// file names, raw or gzip. Shape [28, 28, 1], pixels in [0, 1].
func LoadFashionMNIST(dir string) (train, test *Dataset, err error) {
	return loadMNISTFormat("fashion-mnist", dataFolders(dir, "fashion-mnist"), 10, FashionMNISTClasses)
}

// LoadMNIST loads MNIST from dir/mnist or dir, with the standard IDX file names, raw or gzip.
// Shape [28, 28, 1], pixels in [0, 1].
func LoadMNIST(dir string) (train, test *Dataset, err error) {
	return loadMNISTFormat("mnist", dataFolders(dir, "mnist"), 10, digitNames)
}

// EMNISTSplits gives the number of classes of each EMNIST split (Cohen et al. 2017).
var EMNISTSplits = map[string]int{"byclass": 62, "bymerge": 47, "balanced": 47, "letters": 26, "digits": 10, "mnist": 10}

// LoadEMNIST loads one EMNIST split ("balanced", "byclass", "bymerge", "digits", "letters" or
// "mnist") from the files emnist-SPLIT-{train,test}-{images-idx3,labels-idx1}-ubyte[.gz] in
// dir/emnist/gzip, dir/emnist, dir/gzip or dir. Images are transposed to upright; the letters
// split's labels 1..26 become 0..25. Class names come from emnist-SPLIT-mapping.txt when present.
func LoadEMNIST(dir, split string) (train, test *Dataset, err error) {
	numClasses, ok := EMNISTSplits[split]
	if !ok {
		return nil, nil, fmt.Errorf("emnist: unknown split %q (known: balanced, byclass, bymerge, digits, letters, mnist)", split)
	}
	folders := dataFolders(dir, filepath.Join("emnist", "gzip"), "emnist", "gzip")
	offset := 0
	if split == "letters" {
		offset = 1
	}
	prefix := "emnist-" + split + "-"
	var paths [4]string
	for i, suffix := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "test-images-idx3-ubyte", "test-labels-idx1-ubyte"} {
		if paths[i], err = findFile(folders, prefix+suffix); err != nil {
			return nil, nil, fmt.Errorf("emnist-%s: %w", split, err)
		}
	}
	names := emnistClassNames(filepath.Dir(paths[0]), prefix, numClasses, offset)
	if names == nil && numClasses == 10 {
		names = digitNames
	}
	name := "emnist-" + split
	opts := IDXOptions{NumClasses: numClasses, ClassNames: names, LabelOffset: offset, Transpose: true}
	opts.Name = name + "/train"
	if train, err = LoadIDX(paths[0], paths[1], opts); err != nil {
		return nil, nil, err
	}
	opts.Name = name + "/test"
	if test, err = LoadIDX(paths[2], paths[3], opts); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// emnistClassNames reads emnist-SPLIT-mapping.txt ("label code [code]" per line, codes in ASCII)
// when it exists and is consistent; otherwise it returns nil.
func emnistClassNames(folder, prefix string, numClasses, offset int) []string {
	raw, err := readAllMaybeGzipMax(filepath.Join(folder, prefix+"mapping.txt"), labelNamesBound)
	if err != nil {
		return nil
	}
	names := make([]string, numClasses)
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil
		}
		label, err := strconv.Atoi(f[0])
		if err != nil || label-offset < 0 || label-offset >= numClasses {
			return nil
		}
		var b strings.Builder
		for _, code := range f[1:] {
			c, err := strconv.Atoi(code)
			if err != nil || c <= 0 || c > 0x10ffff {
				return nil
			}
			b.WriteRune(rune(c))
		}
		names[label-offset] = b.String()
	}
	for _, n := range names {
		if n == "" {
			return nil
		}
	}
	return names
}
