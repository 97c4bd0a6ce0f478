package data

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// scipyX is the value SciPy wrote at X[i, j, k, l] in testdata/svhn_like_*.mat (see gen_mat.py).
func scipyX(i, j, k, l int) float64 { return float64((((i*3+j)*3+k)*2 + l) * 7 % 256) }

// TestReadMATSciPyFiles reads files written by SciPy's savemat, plain and zlib-compressed.
func TestReadMATSciPyFiles(t *testing.T) {
	for _, file := range []string{"svhn_like_plain.mat", "svhn_like_zlib.mat"} {
		t.Run(file, func(t *testing.T) {
			vars, err := ReadMAT(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := vars["note"]; ok {
				t.Error("the char array 'note' should be skipped")
			}
			x := vars["X"]
			if x == nil || x.Class != "uint8" || !slices.Equal(x.Dims, []int{4, 3, 3, 2}) || x.Bytes() == nil {
				t.Fatalf("X = %+v", x)
			}
			for l := 0; l < 2; l++ {
				for k := 0; k < 3; k++ {
					for j := 0; j < 3; j++ {
						for i := 0; i < 4; i++ {
							if got, want := x.At(i+4*(j+3*(k+3*l))), scipyX(i, j, k, l); got != want {
								t.Fatalf("X(%d,%d,%d,%d) = %g, want %g", i, j, k, l, got, want)
							}
						}
					}
				}
			}
			tests := []struct {
				name  string
				class string
				dims  []int
				want  []float64 // column-major
			}{
				{"y", "double", []int{2, 1}, []float64{10, 3}},
				{"m", "double", []int{2, 3}, []float64{1.5, 4, -2, 5.5, 3.25, -6.75}},
				{"i16", "int16", []int{1, 3}, []float64{-3, 0, 300}},
			}
			for _, tc := range tests {
				v := vars[tc.name]
				if v == nil || v.Class != tc.class || !slices.Equal(v.Dims, tc.dims) || v.Len() != len(tc.want) {
					t.Fatalf("%s = %+v, want class %s dims %v", tc.name, v, tc.class, tc.dims)
				}
				for i, w := range tc.want {
					if v.At(i) != w {
						t.Fatalf("%s[%d] = %g, want %g", tc.name, i, v.At(i), w)
					}
				}
			}
			// Asking for some variables decodes only those.
			only, err := ReadMAT(filepath.Join("testdata", file), "y")
			if err != nil || len(only) != 1 || only["y"] == nil {
				t.Fatalf("ReadMAT(y) = %v, %v", only, err)
			}
		})
	}
}

func TestReadSVHNMatSciPy(t *testing.T) {
	ds, err := ReadSVHNMat(filepath.Join("testdata", "svhn_like_zlib.mat"), "svhn-like")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds.Shape, []int{4, 3, 3}) || !slices.Equal(ds.Labels, []int32{0, 3}) {
		t.Fatalf("shape %v labels %v", ds.Shape, ds.Labels)
	}
	for e := 0; e < 2; e++ {
		for r := 0; r < 4; r++ {
			for c := 0; c < 3; c++ {
				for ch := 0; ch < 3; ch++ {
					got := ds.X[((e*4+r)*3+c)*3+ch]
					if want := float32(scipyX(r, c, ch, e)) / 255; got != want {
						t.Fatalf("image %d (%d,%d,%d) = %g, want %g", e, r, c, ch, got, want)
					}
				}
			}
		}
	}
}

// TestReadMATOwnWriter checks both byte orders and compression on files from the test writer.
func TestReadMATOwnWriter(t *testing.T) {
	hwc := testImages(3, cifarImageBytes)
	x, y := svhnVars(hwc, []int{0, 7, 9})
	for _, tc := range []struct {
		name     string
		order    binary.ByteOrder
		compress bool
	}{{"little", binary.LittleEndian, false}, {"big", binary.BigEndian, false}, {"little-zlib", binary.LittleEndian, true}, {"big-zlib", binary.BigEndian, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "svhn")
			long := matVar{name: "a_longer_name", class: 6, dims: []int{1, 2}, f64: []float64{-1, 2}}
			// MATLAB may store a double array with whole values as bytes: the test split does.
			yBytes := matVar{name: "y", class: 6, dims: y.dims, u8: []byte{10, 7, 9}}
			writeFile(t, filepath.Join(dir, "train_32x32.mat"), matFile(t, tc.order, tc.compress, long, x, y))
			writeFile(t, filepath.Join(dir, "test_32x32.mat"), matFile(t, tc.order, tc.compress, yBytes, x))
			train, test, err := LoadSVHN(filepath.Dir(dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, ds := range []*Dataset{train, test} {
				if !slices.Equal(ds.Labels, []int32{0, 7, 9}) || !slices.Equal(ds.Shape, []int{32, 32, 3}) {
					t.Fatalf("%s: labels %v shape %v", ds.Name, ds.Labels, ds.Shape)
				}
				for i, b := range hwc {
					if ds.X[i] != float32(b)/255 {
						t.Fatalf("%s: X[%d] = %g, want %g", ds.Name, i, ds.X[i], float32(b)/255)
					}
				}
			}
			vars, err := ReadMAT(filepath.Join(dir, "train_32x32.mat"))
			if err != nil || vars["a_longer_name"] == nil || vars["a_longer_name"].At(0) != -1 {
				t.Fatalf("long name: %v %v", vars, err)
			}
		})
	}
}

func TestMATAndSVHNErrors(t *testing.T) {
	hwc := testImages(2, cifarImageBytes)
	x, y := svhnVars(hwc, []int{1, 2})
	le := binary.LittleEndian
	good := matFile(t, le, true, x, y)
	badLabel := y
	badLabel.f64 = []float64{1, 11}
	short := y
	short.dims, short.f64 = []int{1, 1}, []float64{1}
	complexX := x
	complexX.class = 9
	complexFile := matFile(t, le, false, complexX, y)
	complexFile[128+8+8+1] |= 0x08 // array-flags word, byte 1: complex bit 0x0800
	// 2^17 * 2^17 * 2^30 = 2^64: a product that wraps to 0, matching an empty real part.
	wrapX := x
	wrapX.dims, wrapX.u8 = []int{1 << 17, 1 << 17, 1 << 30, 1}, nil
	notMAT := append([]byte("MATLAB 4? no"), make([]byte, 200)...)
	v73 := append([]byte("MATLAB 7.3 MAT-file"), make([]byte, 200)...)
	flipped := append([]byte{}, good...)
	flipped[len(flipped)/2] ^= 0xff
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"truncated compressed", good[:len(good)-40], "truncated"},
		{"corrupt compressed", flipped, "element"},
		{"label 11", matFile(t, le, false, x, badLabel), "want an integer in 1..10"},
		{"label count", matFile(t, le, false, x, short), "one label per image"},
		{"missing y", matFile(t, le, true, x), "must hold variables X and y"},
		{"complex", complexFile, "complex"},
		{"dimensions whose product overflows", matFile(t, le, false, wrapX, y), "dimensions [131072 131072 1073741824] are implausibly large"},
		{"not MAT v5", notMAT, "not a MAT v5 file"},
		{"v7.3", v73, "HDF5"},
		{"header only", good[:100], "too short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "train_32x32.mat"), tc.content)
			_, err := ReadSVHNMat(p, "svhn")
			var fe *FileError
			if err == nil || !errors.As(err, &fe) || fe.Path != p || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a FileError for %s containing %q", err, p, tc.want)
			}
		})
	}
}

// TestReadMATEveryTruncation cuts files at every length: ReadMAT must return an error or only
// variables that are complete and correct, and never panic.
func TestReadMATEveryTruncation(t *testing.T) {
	for _, file := range []string{"svhn_like_plain.mat", "svhn_like_zlib.mat"} {
		full, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		want, err := ReadMAT(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for n := 0; n < len(full); n++ {
			p := writeFile(t, filepath.Join(dir, "cut.mat"), full[:n])
			got, err := ReadMAT(p)
			if err != nil {
				continue
			}
			if len(got) >= len(want) {
				t.Fatalf("%s cut at %d of %d bytes: no error and all %d variables", file, n, len(full), len(got))
			}
			for name, v := range got {
				w := want[name]
				if v.Len() != w.Len() {
					t.Fatalf("%s cut at %d: variable %s has %d values, want %d", file, n, name, v.Len(), w.Len())
				}
			}
		}
	}
}

// TestMATMemoryBound checks that ReadMAT refuses a variable whose declared values would take more
// memory once loaded than MaxDataMemory allows, naming the file, the variable and its dimensions,
// and reads it under a bound that allows it.
func TestMATMemoryBound(t *testing.T) {
	old := MaxDataMemory
	defer func() { MaxDataMemory = old }()
	x, y := svhnVars(testImages(2, cifarImageBytes), []int{1, 2})
	p := writeFile(t, filepath.Join(t.TempDir(), "train_32x32.mat"), matFile(t, binary.LittleEndian, true, x, y))
	tests := []struct {
		bound int64
		want  string // "": it loads
	}{
		{16 << 30, ""},
		{DataMemoryFactor * 1000, p + `: MAT variable "X" dimensions [32 32 3 2] of class uint8 (1 bytes a value as read) declare 6.0 KiB of values`},
	}
	for _, tc := range tests {
		MaxDataMemory = tc.bound
		_, err := ReadMAT(p, "X", "y")
		if tc.want == "" && err != nil {
			t.Errorf("bound %d: %v", tc.bound, err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("bound %d: error %v, want %q", tc.bound, err, tc.want)
		}
	}
}
