package data

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestIDXMemoryBound checks that ReadIDX refuses, before reading any data, a file whose header
// declares more values than the memory bound allows once loaded (issue 36: a 6.1 MB gzipped IDX file
// declaring 8M images killed the process), naming the file, the dimensions and the bound; that a file
// within the bound loads; and that content beyond the declared size is refused without
// decompressing it, also when the declared dimensions' product would overflow.
func TestIDXMemoryBound(t *testing.T) {
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	MaxDataMemory = 16 << 30
	dir := t.TempDir()
	huge := writeFile(t, filepath.Join(dir, "huge-images-idx3-ubyte.gz"), gzipBytes(t, idxBytes([]int{8_000_000, 28, 28}, make([]byte, 1000))))
	good := writeFile(t, filepath.Join(dir, "good.gz"), gzipBytes(t, idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8})))
	bomb := writeFile(t, filepath.Join(dir, "bomb.gz"), gzipBytes(t, idxBytes([]int{2, 2, 2}, make([]byte, 64<<20))))
	long := writeFile(t, filepath.Join(dir, "long"), idxBytes([]int{2, 2, 2}, make([]byte, 8+1000)))
	// 2^20 * 2^20 * 2^23 = 2^63 wraps a signed 64-bit product negative; the file holds 64 MiB of
	// zeros (64 KiB compressed) that an unbounded read would inflate.
	wrap := writeFile(t, filepath.Join(dir, "wrap.gz"), gzipBytes(t, idxBytes([]int{1 << 20, 1 << 20, 1 << 23}, make([]byte, 64<<20))))
	tests := []struct {
		name, path string
		bound      int64
		want       []string // fragments of the error; none: it loads
	}{
		{"8M images", huge, 16 << 30, []string{huge + ": IDX dimensions [8000000 28 28] declare 5.8 GiB of values",
			"about 87.6 GiB of memory once loaded (15x the raw bytes), more than 16.0 GiB (data.MaxDataMemory)", "the data is not read"}},
		{"within the bound", good, 16 << 30, nil},
		{"a small bound", good, 15 * 7, []string{good + ": IDX dimensions [2 2 2] declare 8 B of values", "more than 105 B"}},
		{"more than declared, gzip", bomb, 16 << 30, []string{bomb + ": unexpected bytes after the 8 bytes of data for dimensions [2 2 2] (the stream holds more; not decompressed further)"}},
		{"dimensions whose product overflows", wrap, 16 << 30, []string{wrap + ": IDX dimensions [1048576 1048576 8388608] are implausibly large"}},
		{"more than declared, raw", long, 16 << 30, []string{long + ": 1000 unexpected bytes after the 8 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			MaxDataMemory = tc.bound
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			idx, err := ReadIDX(tc.path)
			runtime.ReadMemStats(&after)
			if tc.want == nil {
				if err != nil || len(idx.Data) != 8 {
					t.Fatalf("ReadIDX: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
				t.Errorf("allocated %d bytes before refusing", got)
			}
		})
	}
}
