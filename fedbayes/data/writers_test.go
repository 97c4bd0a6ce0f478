package data

// Writers of the standard file formats, used by the tests to produce small files exactly as the
// real datasets store them.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// idxBytes encodes an unsigned-byte IDX array.
func idxBytes(dims []int, values []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, idxTypeUint8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(values)
	return b.Bytes()
}

func gzipBytes(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t testing.TB, path string, content []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// testImages returns n images of h x w x c bytes whose value encodes (example, position).
func testImages(n, size int) []byte {
	out := make([]byte, n*size)
	for i := range out {
		out[i] = byte((i*7 + i/size*13) % 256)
	}
	return out
}

// cifarBytes encodes CIFAR binary records: label bytes then planar R, G, B (each row-major 32x32)
// from channels-last images hwc (n x 32 x 32 x 3 bytes).
func cifarBytes(labels [][]byte, hwc []byte) []byte {
	var b bytes.Buffer
	for i, l := range labels {
		b.Write(l)
		img := hwc[i*cifarImageBytes : (i+1)*cifarImageBytes]
		for ch := 0; ch < 3; ch++ {
			for p := 0; p < cifarPlane; p++ {
				b.WriteByte(img[3*p+ch])
			}
		}
	}
	return b.Bytes()
}

// matVar is one variable for writeMAT: column-major values of a real numeric array.
type matVar struct {
	name  string
	class byte   // 6 double, 9 uint8
	dims  []int  // MATLAB dims
	u8    []byte // values when stored as miUINT8
	f64   []float64
}

// matElement encodes one miMATRIX element (tag included) in byte order o.
func matElement(o binary.ByteOrder, v matVar) []byte {
	var sub bytes.Buffer
	pad := func() {
		for sub.Len()%8 != 0 {
			sub.WriteByte(0)
		}
	}
	put32 := func(x uint32) { var b [4]byte; o.PutUint32(b[:], x); sub.Write(b[:]) }
	// array flags
	put32(miUINT32)
	put32(8)
	put32(uint32(v.class))
	put32(0)
	// dimensions
	put32(miINT32)
	put32(uint32(4 * len(v.dims)))
	for _, d := range v.dims {
		put32(uint32(d))
	}
	pad()
	// name: small element format when it fits in 4 bytes
	if len(v.name) <= 4 {
		put32(uint32(len(v.name))<<16 | miINT8)
		var b [4]byte
		copy(b[:], v.name)
		sub.Write(b[:])
	} else {
		put32(miINT8)
		put32(uint32(len(v.name)))
		sub.WriteString(v.name)
		pad()
	}
	// real part
	if v.u8 != nil {
		put32(miUINT8)
		put32(uint32(len(v.u8)))
		sub.Write(v.u8)
	} else {
		put32(miDOUBLE)
		put32(uint32(8 * len(v.f64)))
		for _, f := range v.f64 {
			var b [8]byte
			o.PutUint64(b[:], math.Float64bits(f))
			sub.Write(b[:])
		}
	}
	pad()
	var out bytes.Buffer
	var tag [8]byte
	o.PutUint32(tag[:4], miMATRIX)
	o.PutUint32(tag[4:], uint32(sub.Len()))
	out.Write(tag[:])
	out.Write(sub.Bytes())
	return out.Bytes()
}

// matFile encodes a MAT v5 file with the given variables, optionally each in a miCOMPRESSED element.
func matFile(t testing.TB, o binary.ByteOrder, compress bool, vars ...matVar) []byte {
	t.Helper()
	var out bytes.Buffer
	header := make([]byte, 128)
	copy(header, "MATLAB 5.0 MAT-file, written by fedbayes tests")
	for i := 47; i < 116; i++ {
		header[i] = ' '
	}
	o.PutUint16(header[124:], 0x0100)
	o.PutUint16(header[126:], 'M'<<8|'I')
	out.Write(header)
	for _, v := range vars {
		el := matElement(o, v)
		if !compress {
			out.Write(el)
			continue
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(el)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		var tag [8]byte
		o.PutUint32(tag[:4], miCOMPRESSED)
		o.PutUint32(tag[4:], uint32(z.Len()))
		out.Write(tag[:])
		out.Write(z.Bytes())
	}
	return out.Bytes()
}

// svhnVars returns X (uint8 [32, 32, 3, n], column-major, from channels-last images hwc) and y
// (double [n, 1]) in SVHN's layout, with label 10 for the digit 0.
func svhnVars(hwc []byte, digits []int) (matVar, matVar) {
	n := len(digits)
	x := make([]byte, len(hwc))
	for e := 0; e < n; e++ {
		for r := 0; r < 32; r++ {
			for c := 0; c < 32; c++ {
				for ch := 0; ch < 3; ch++ {
					x[r+32*(c+32*(ch+3*e))] = hwc[((e*32+r)*32+c)*3+ch]
				}
			}
		}
	}
	y := make([]float64, n)
	for i, d := range digits {
		y[i] = float64(d)
		if d == 0 {
			y[i] = 10
		}
	}
	return matVar{name: "X", class: 9, dims: []int{32, 32, 3, n}, u8: x},
		matVar{name: "y", class: 6, dims: []int{n, 1}, f64: y}
}
