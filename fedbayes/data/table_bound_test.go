package data

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc, an upper bound on what it
// holds at once), after a collection.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTableMemoryFactor measures what the table readers allocate per byte of content on their
// worst cases, one value a line ("0\n", the shortest line: the most values and rows per byte) for
// readRows and two a line ("0,0\n", and "0,a\n" as classes) for LoadCSV, raw and gzip, and checks it against
// TableMemoryFactor, the factor tableBound divides the memory bound by.
func TestTableMemoryFactor(t *testing.T) {
	const lines = 1 << 20
	dir := t.TempDir()
	one := bytes.Repeat([]byte("0\n"), lines)
	two := append([]byte("a,t\n"), bytes.Repeat([]byte("0,0\n"), lines)...)
	classes := append([]byte("a,t\n"), bytes.Repeat([]byte("0,a\n"), lines)...)
	tests := []struct {
		name, path string
		size       int
		read       func(path string) error
	}{
		{"readRows raw", writeFile(t, filepath.Join(dir, "one.txt"), one), len(one),
			func(p string) error { _, err := readRows(p, 0, "", 1, 0); return err }},
		{"readRows gzip", writeFile(t, filepath.Join(dir, "one.txt.gz"), gzipBytes(t, one)), len(one),
			func(p string) error { _, err := readRows(p, 0, ",", 1, 0); return err }},
		{"LoadCSV raw", writeFile(t, filepath.Join(dir, "two.csv"), two), len(two),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t"}); return err }},
		{"LoadCSV gzip", writeFile(t, filepath.Join(dir, "two.csv.gz"), gzipBytes(t, two)), len(two),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t"}); return err }},
		{"LoadCSV classes raw", writeFile(t, filepath.Join(dir, "classes.csv"), classes), len(classes),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t", Classification: true}); return err }},
		{"LoadCSV classes gzip", writeFile(t, filepath.Join(dir, "classes.csv.gz"), gzipBytes(t, classes)), len(classes),
			func(p string) error { _, err := LoadCSV(p, CSVOptions{Target: "t", Classification: true}); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			got := allocated(func() { err = tc.read(tc.path) })
			if err != nil {
				t.Fatal(err)
			}
			per := float64(got) / float64(tc.size)
			t.Logf("%s: %d bytes of content, %d allocated: %.1f per byte", tc.name, tc.size, got, per)
			if per > TableMemoryFactor {
				t.Errorf("%.1f bytes allocated per byte of content, more than TableMemoryFactor %d", per, TableMemoryFactor)
			}
		})
	}
}

// TestDiabetesTargetsRowBound checks that a small gzip'd one-column targets file of millions of
// lines (16 MiB of "0\n", 16 KiB compressed) is refused, naming the file, having decompressed no
// more than 442 rows of one number can take (the diabetes loader knows its 442 rows), allocating
// less than 1 MiB; the reader before this bound allocated about 45 times the content (720 MiB)
// before it compared the row count. The same lines within the byte bound (a short file of too many
// rows) are refused by their count before any is parsed.
func TestDiabetesTargetsRowBound(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("1 2 3 4 5 6 7 8 9 10\n"), 442)
	writeFile(t, filepath.Join(dir, SklearnDir, "diabetes_data_raw.csv.gz"), gzipBytes(t, data))
	target := writeFile(t, filepath.Join(dir, SklearnDir, "diabetes_target.csv.gz"), gzipBytes(t, bytes.Repeat([]byte("0\n"), 8<<20)))
	var err error
	got := allocated(func() { _, err = LoadSklearn("diabetes", dir) })
	want := target + ": content is more than 27.6 KiB, the most that 442 rows of 1 numbers take (64 bytes a number)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if got > 1<<20 {
		t.Errorf("allocated %d bytes before refusing, more than 1 MiB", got)
	}
	writeFile(t, target, gzipBytes(t, bytes.Repeat([]byte("0\n"), 443)))
	want = target + ": has 443 data lines, more than the 442 it should have (not parsed)"
	if _, err := LoadSklearn("diabetes", dir); err == nil || err.Error() != want {
		t.Errorf("443 lines: %v, want %q", err, want)
	}
}

// TestMATDeclaredClassBound checks that a variable declared as doubles is bounded at the 16 bytes a
// value that reading it takes (its 8-byte real part and the float64 values), not at one byte a
// value: X double [32 32 3 100] (2.3 MiB compressed to a few KiB) is refused under a bound of 2 MiB
// of raw values, allocating less than 1 MiB; and that a real part wider than its class is refused.
func TestMATDeclaredClassBound(t *testing.T) {
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	dir := t.TempDir()
	x := matVar{name: "X", class: 6, dims: []int{32, 32, 3, 100}, f64: make([]float64, 32*32*3*100)}
	y := matVar{name: "y", class: 6, dims: []int{100, 1}, f64: make([]float64, 100)}
	doubles := writeFile(t, filepath.Join(dir, "doubles.mat"), matFile(t, binary.LittleEndian, true, x, y))
	wide := writeFile(t, filepath.Join(dir, "wide.mat"), matFile(t, binary.LittleEndian, false,
		matVar{name: "X", class: 9, dims: []int{2, 1}, f64: []float64{1, 2}}))
	MaxDataMemory = DataMemoryFactor * 2 << 20
	var err error
	got := allocated(func() { _, err = ReadMAT(doubles, "X", "y") })
	want := doubles + `: MAT variable "X" dimensions [32 32 3 100] of class double (16 bytes a value as read) declare 4.7 MiB of values`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
	if got > 1<<20 {
		t.Errorf("allocated %d bytes before refusing", got)
	}
	MaxDataMemory = 16 << 30
	if _, err := ReadMAT(doubles, "X", "y"); err != nil {
		t.Errorf("under 16 GiB: %v", err)
	}
	if _, err := ReadMAT(wide, "X"); err == nil || !strings.Contains(err.Error(), `variable "X" real part declares 16 bytes, more than the 2 left in its matrix`) {
		t.Errorf("a double real part of a uint8 variable: %v", err)
	}
}

// TestLoadCSVRowCountPrecheck feeds LoadCSV hostile tables whose row count no header states and
// measures what it allocates (runtime.MemStats.TotalAlloc) per byte of content, which must stay
// within TableMemoryFactor: a quoted cell of a million line ends under a header of 4,096 columns
// (sized by its lines alone, the values would take 4,096 a line: 16 GiB; the text bounds them),
// refused for its empty cell; a class column of a million one-letter names and then distinct names
// past MaxTableClasses, refused at the first one past; and the million one-letter names alone, read
// (the reader that kept one string a row took 29.5 bytes a byte of them).
func TestLoadCSVRowCountPrecheck(t *testing.T) {
	dir := t.TempDir()
	var wide bytes.Buffer
	for i := range 4096 {
		fmt.Fprintf(&wide, "c%d,", i)
	}
	wide.WriteString("t\n\"")
	wide.Write(bytes.Repeat([]byte("\n"), 1<<20))
	wide.WriteString("\"")
	wide.Write(bytes.Repeat([]byte(",0"), 4096))
	wide.WriteString("\n")
	var distinct bytes.Buffer
	distinct.WriteString("a,t\n")
	distinct.Write(bytes.Repeat([]byte("0,a\n"), 1<<20))
	for i := range MaxTableClasses {
		fmt.Fprintf(&distinct, "0,class%d\n", i)
	}
	classes := append([]byte("a,t\n"), bytes.Repeat([]byte("0,a\n"), 1<<20)...)
	tests := []struct {
		name    string
		content []byte
		want    string // a fragment of the error; "" reads
	}{
		{"a quoted cell of a million line ends", wide.Bytes(), `line 2, column "c0": empty cell`},
		{"more distinct classes than MaxTableClasses", distinct.Bytes(), fmt.Sprintf("line %d, target column \"t\": more than %d classes", 1<<20+MaxTableClasses+1, MaxTableClasses)},
		{"one-letter classes", classes, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, gz := range []bool{false, true} {
				path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".csv")
				file := tc.content
				if gz {
					path += ".gz"
					file = gzipBytes(t, tc.content)
				}
				writeFile(t, path, file)
				var err error
				got := allocated(func() { _, err = LoadCSV(path, CSVOptions{Target: "t", Classification: true}) })
				per := float64(got) / float64(len(tc.content))
				t.Logf("gzip %v: %d bytes of content, %d allocated (%.1f a byte): %v", gz, len(tc.content), got, per, err)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("gzip %v: %v", gz, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("gzip %v: %v; want an error naming %s and %q", gz, err, path, tc.want)
				}
				if per > TableMemoryFactor {
					t.Errorf("gzip %v: %.1f bytes allocated a byte of content, more than TableMemoryFactor %d", gz, per, TableMemoryFactor)
				}
			}
		})
	}
}
