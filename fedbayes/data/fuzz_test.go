package data

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The loaders' fuzz targets: any bytes give a dataset that passes its own checks or an error naming
// the file; never a panic, a hang or an allocation beyond the input's size. Seeds are valid files
// written by the tests' writers; crashers found are kept in testdata/fuzz as regression cases.
// Run one with: go test -run '^$' -fuzz FuzzReadIDX -fuzztime 15s ./fedbayes/data/

// fuzzFile writes content to a fresh file named name and returns its path.
func fuzzFile(t *testing.T, name string, content []byte) string {
	return writeFile(t, filepath.Join(t.TempDir(), name), content)
}

// checkNamed fails unless err names path.
func checkNamed(t *testing.T, err error, path string) {
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name the file %s", err, path)
	}
}

func FuzzReadIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(idxBytes([]int{3}, []byte{0, 1, 9}))
	f.Add(gzipBytes(f, idxBytes([]int{1, 28, 28}, testImages(1, 784))))
	f.Add(idxBytes([]int{1 << 30, 1 << 30}, nil))
	// Dimensions whose product wraps a signed 64-bit integer negative, over 64 MiB of zeros.
	f.Add(gzipBytes(f, idxBytes([]int{1 << 20, 1 << 20, 1 << 23}, make([]byte, 64<<20))))
	// A low memory bound, so that the allocation check below catches a read that ignores it.
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	const contentBound = 16 << 20
	MaxDataMemory = contentBound * DataMemoryFactor
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := fuzzFile(t, "x-idx3-ubyte", raw)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		idx, err := ReadIDX(p)
		runtime.ReadMemStats(&after)
		// ReadIDX allocates about the content it accepts, never more than the memory bound allows.
		if got := after.TotalAlloc - before.TotalAlloc; got > 3*contentBound+1<<20 {
			t.Fatalf("ReadIDX allocated %d bytes (error: %v); the bound allows %d bytes of content", got, err, contentBound)
		}
		if err != nil {
			checkNamed(t, err, p)
			return
		}
		n := 1
		for _, d := range idx.Dims {
			n *= d
		}
		if n != len(idx.Data) {
			t.Fatalf("dims %v but %d values", idx.Dims, len(idx.Data))
		}
	})
}

func FuzzReadCIFARBinary(f *testing.F) {
	f.Add(cifarBytes([][]byte{{3}, {9}}, testImages(2, cifarImageBytes)), 1)
	f.Add(cifarBytes([][]byte{{1, 42}}, testImages(1, cifarImageBytes)), 2)
	f.Add([]byte{0}, 1)
	f.Fuzz(func(t *testing.T, raw []byte, labelBytes int) {
		if labelBytes != 2 {
			labelBytes = 1
		}
		p := fuzzFile(t, "data_batch_1.bin", raw)
		x, labels, err := ReadCIFARBinary(CIFARFile{Path: p, LabelBytes: labelBytes, LabelIndex: labelBytes - 1, NumClasses: 10})
		if err != nil {
			checkNamed(t, err, p)
			return
		}
		if len(x) != len(labels)*cifarImageBytes {
			t.Fatalf("%d values for %d labels", len(x), len(labels))
		}
		for _, l := range labels {
			if l < 0 || l >= 10 {
				t.Fatalf("label %d accepted", l)
			}
		}
	})
}

func FuzzReadMAT(f *testing.F) {
	// Small arrays, so that the fuzzer mutates and minimises quickly.
	xv := matVar{name: "X", class: 9, dims: []int{2, 2, 3, 1}, u8: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	yv := matVar{name: "y", class: 6, dims: []int{1, 1}, f64: []float64{10}}
	f.Add(matFile(f, binary.LittleEndian, false, xv, yv))
	f.Add(matFile(f, binary.LittleEndian, true, xv, yv))
	f.Add(matFile(f, binary.BigEndian, false, yv))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := fuzzFile(t, "x.mat", raw)
		arrays, err := ReadMAT(p, "X", "y")
		if err != nil {
			checkNamed(t, err, p)
			return
		}
		for name, a := range arrays {
			n := 1
			for _, d := range a.Dims {
				n *= d
			}
			if n != a.Len() {
				t.Fatalf("%s: dims %v but %d values", name, a.Dims, a.Len())
			}
		}
	})
}

func FuzzLoadCSV(f *testing.F) {
	f.Add([]byte("x,y,t\n1,2,3\n4,5,6\n"), false)
	f.Add([]byte("a;b\n1;x\n2;y\n"), true)
	f.Add(gzipBytes(f, []byte("x,t\n1e3,-2\n")), false)
	f.Add([]byte("x,t\nNaN,1\n"), false)
	f.Fuzz(func(t *testing.T, raw []byte, classification bool) {
		p := fuzzFile(t, "table.csv", raw)
		ds, err := LoadCSV(p, CSVOptions{Target: "t", Classification: classification})
		if err != nil {
			checkNamed(t, err, p)
			return
		}
		if err := ds.Validate(); err != nil {
			t.Fatalf("LoadCSV returned an invalid dataset: %v", err)
		}
		for i, v := range ds.X {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("X[%d] = %v accepted", i, v)
			}
		}
	})
}
