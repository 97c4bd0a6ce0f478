package data

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReadBoundRequired checks that a read with no positive bound is an error, not an unbounded
// read.
func TestReadBoundRequired(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "x.csv"), []byte("a,b\n1,2\n"))
	for _, max := range []int64{0, -1, -1 << 62} {
		if got, err := readAllMaybeGzipMax(p, max); err == nil || !strings.Contains(err.Error(), "no positive bound") {
			t.Errorf("max %d: got %d bytes, error %v; want a refusal", max, len(got), err)
		}
	}
}

// TestTableReadBound checks that LoadCSV and LoadSklearn refuse a table whose content is longer
// than MaxDataMemory / TableMemoryFactor, raw (by its size) or gzip (a small stream that inflates
// beyond the bound), naming the file and the bound, without allocating the inflated size.
func TestTableReadBound(t *testing.T) {
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	const bound = 1 << 20 // bytes of content
	MaxDataMemory = bound * TableMemoryFactor
	// 32 MiB of table rows, about 100 KiB compressed.
	rows := bytes.Repeat([]byte("1,2,3,4,0\n"), 32<<20/10)
	csvBody := append([]byte("a,b,c,d,t\n"), rows...)
	irisBody := append([]byte("3355443,4,setosa,versicolor,virginica\n"), rows...)
	dir := t.TempDir()
	tests := []struct {
		name, path string
		load       func(path string) error
		want       string
	}{
		{"csv gzip", writeFile(t, filepath.Join(dir, "bomb.csv.gz"), gzipBytes(t, csvBody)),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t"}); return err },
			"content is more than 1.0 MiB, the bound on a table (data.MaxDataMemory / 20)"},
		{"csv raw", writeFile(t, filepath.Join(dir, "big.csv"), csvBody[:2<<20]),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t"}); return err },
			"content is more than 1.0 MiB, the bound on a table (data.MaxDataMemory / 20)"},
		{"sklearn gzip", writeFile(t, filepath.Join(dir, "gz", SklearnDir, "iris.csv.gz"), gzipBytes(t, irisBody)),
			func(string) error { _, err := LoadSklearn("iris", filepath.Join(dir, "gz")); return err },
			"content is more than 1.0 MiB, the bound on a table"},
		{"sklearn raw", writeFile(t, filepath.Join(dir, "raw", SklearnDir, "iris.csv"), irisBody[:2<<20]),
			func(string) error { _, err := LoadSklearn("iris", filepath.Join(dir, "raw")); return err },
			"content is more than 1.0 MiB, the bound on a table"},
	}
	rows, csvBody, irisBody = nil, nil, nil
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tc.load(tc.path)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("error %v, want one naming %s with %q", err, tc.path, tc.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 4*bound {
				t.Errorf("allocated %d bytes before refusing (bound %d)", got, bound)
			}
		})
	}
}

// TestCIFARMemoryBound checks that ReadCIFARBinary refuses, before reading it, a file whose bytes
// would take more memory once loaded than MaxDataMemory allows, and reads it under a bound that
// allows it.
func TestCIFARMemoryBound(t *testing.T) {
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	p := writeFile(t, filepath.Join(t.TempDir(), "data_batch_1.bin"), cifarBytes([][]byte{{3}, {9}}, testImages(2, cifarImageBytes)))
	tests := []struct {
		bound int64
		want  string // "": it loads
	}{
		{16 << 30, ""},
		{DataMemoryFactor * 6000, p + ": its 2 CIFAR records declare 6.0 KiB of values"},
	}
	for _, tc := range tests {
		MaxDataMemory = tc.bound
		x, _, err := ReadCIFARBinary(CIFARFile{Path: p, LabelBytes: 1, NumClasses: 10})
		if tc.want == "" && (err != nil || len(x) != 2*cifarImageBytes) {
			t.Errorf("bound %d: %d values, %v", tc.bound, len(x), err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("bound %d: error %v, want %q", tc.bound, err, tc.want)
		}
	}
}
