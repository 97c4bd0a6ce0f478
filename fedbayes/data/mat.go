package data

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// MAT-file level 5 data types and array classes (MathWorks, "MAT-File Format", Tables 1-2 and 1-3).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15
)

// matClassNames names the numeric array classes (mxDOUBLE_CLASS = 6 ... mxUINT64_CLASS = 15).
var matClassNames = map[byte]string{
	6: "double", 7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16",
	12: "int32", 13: "uint32", 14: "int64", 15: "uint64",
}

// matClassBytes is the byte size of a value of each numeric array class: the widest data type its
// real part may be stored in (MATLAB stores a class's values in its own type or a narrower one).
var matClassBytes = map[byte]int{6: 8, 7: 4, 8: 1, 9: 1, 10: 2, 11: 2, 12: 4, 13: 4, 14: 8, 15: 8}

// matReadBytes returns the most bytes ReadMAT holds per declared value of an array of the given
// class while reading it: a uint8 array keeps its stored bytes (1); any other class reads its real
// part (at most matClassBytes a value) and converts it to float64 (8 more) unless it is stored as
// uint8.
func matReadBytes(class byte) int {
	if class == 9 {
		return 1
	}
	return matClassBytes[class] + 8
}

// matMaxValues is the most values a MAT variable may declare (2^40), whatever the memory bound.
const matMaxValues = 1 << 40

// matTypeSizes is the byte size of each numeric data type.
var matTypeSizes = map[uint32]int{
	miINT8: 1, miUINT8: 1, miINT16: 2, miUINT16: 2, miINT32: 4, miUINT32: 4,
	miSINGLE: 4, miDOUBLE: 8, miINT64: 8, miUINT64: 8,
}

// MATArray is a real numeric array read from a MAT file. Values are in MATLAB's column-major
// order: element (i0, i1, ...) is at i0 + Dims[0]*(i1 + Dims[1]*(...)).
type MATArray struct {
	// Name is the variable name.
	Name string
	// Class is the MATLAB class: "double", "single", "uint8", "int16", ...
	Class string
	// Dims are the MATLAB dimensions (at least two).
	Dims []int
	// u8 holds the values when they were stored as unsigned bytes (SVHN's images), f64 otherwise.
	u8  []byte
	f64 []float64
}

// Len is the number of elements.
func (a *MATArray) Len() int {
	if a.u8 != nil {
		return len(a.u8)
	}
	return len(a.f64)
}

// At returns element i in column-major order.
func (a *MATArray) At(i int) float64 {
	if a.u8 != nil {
		return float64(a.u8[i])
	}
	return a.f64[i]
}

// Bytes returns the values when the file stored them as unsigned bytes, else nil.
func (a *MATArray) Bytes() []byte { return a.u8 }

// ReadMAT reads the real numeric arrays of a MATLAB level-5 MAT file (as MATLAB's save -v6/-v7 and
// SciPy's savemat write it), including zlib-compressed elements, in either byte order. When names
// are given only those variables are decoded. Cells, structs, objects, sparse and character arrays
// are skipped; a complex array, a MAT v4 or v7.3 (HDF5) file, or a truncated or corrupt element is
// an error naming the file.
func ReadMAT(path string, names ...string) (map[string]*MATArray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	var header [128]byte
	if _, err := io.ReadFull(br, header[:]); err != nil {
		return nil, fileErrorf(path, "too short for a MAT v5 file (the header alone takes 128 bytes)")
	}
	text := string(header[:116])
	switch {
	case bytes.HasPrefix(header[:], []byte("MATLAB 7.3")):
		return nil, fileErrorf(path, "MAT v7.3 (HDF5) files are not supported: re-save with save(..., '-v7') or scipy.io.savemat")
	case !bytes.HasPrefix(header[:], []byte("MATLAB 5.0 MAT-file")):
		return nil, fileErrorf(path, "not a MAT v5 file: header starts %q", firstChars(text, 20))
	}
	m := &matReader{path: path, want: names}
	switch string(header[126:128]) {
	case "IM":
		m.order = binary.LittleEndian
	case "MI":
		m.order = binary.BigEndian
	default:
		return nil, fileErrorf(path, "bad MAT endian indicator %q (want \"IM\" or \"MI\")", header[126:128])
	}
	if v := m.order.Uint16(header[124:126]); v != 0x0100 {
		return nil, fileErrorf(path, "MAT version 0x%04x, want 0x0100", v)
	}
	out := map[string]*MATArray{}
	for element := 0; ; element++ {
		arr, err := m.readTopElement(br)
		if err == io.EOF {
			return out, nil
		}
		if fe := (*FileError)(nil); errors.As(err, &fe) {
			return nil, err // names the file already (the memory bound)
		}
		if err != nil {
			return nil, fileErrorf(path, "element %d: %v", element, err)
		}
		if arr != nil {
			out[arr.Name] = arr
		}
	}
}

func firstChars(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// matReader holds what every element of one file shares.
type matReader struct {
	path  string
	order binary.ByteOrder
	want  []string
}

// tag is a data-element tag: its type, its byte count, and the data when it is a small element.
type tag struct {
	typ   uint32
	n     int
	small []byte
}

// errTruncated reports data that ended before an element did.
var errTruncated = errors.New("truncated: the file ends inside a data element")

// readTag reads an 8-byte tag; io.EOF only if the stream ends exactly before it.
func (m *matReader) readTag(r io.Reader) (tag, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if err == io.EOF {
			return tag{}, io.EOF
		}
		return tag{}, truncated(err)
	}
	first := m.order.Uint32(b[:4])
	if first>>16 != 0 { // small data element: type and size share the first word, data in the second
		n := int(first >> 16)
		if n > 4 {
			return tag{}, fmt.Errorf("small data element declares %d bytes (at most 4)", n)
		}
		return tag{typ: first & 0xffff, n: n, small: slices.Clone(b[4 : 4+n])}, nil
	}
	return tag{typ: first, n: int(m.order.Uint32(b[4:]))}, nil
}

// truncated turns a premature end of data into errTruncated.
func truncated(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// readTopElement reads one top-level element: a matrix, possibly inside a compressed element.
// It returns nil for elements it skips.
func (m *matReader) readTopElement(r io.Reader) (*MATArray, error) {
	t, err := m.readTag(r)
	if err != nil {
		return nil, err
	}
	switch t.typ {
	case miCOMPRESSED:
		lr := &io.LimitedReader{R: r, N: int64(t.n)}
		zr, err := zlib.NewReader(lr)
		if err != nil {
			return nil, fmt.Errorf("compressed element of %d bytes: bad zlib header: %v", t.n, truncated(err))
		}
		inner, err := m.readTag(zr)
		if err != nil {
			return nil, fmt.Errorf("compressed element: %v", zlibError(err))
		}
		if inner.typ != miMATRIX {
			return nil, fmt.Errorf("compressed element holds data type %d, want a matrix (%d)", inner.typ, miMATRIX)
		}
		arr, err := m.readMatrix(&io.LimitedReader{R: zr, N: int64(inner.n)}, inner.n)
		if err != nil {
			return nil, zlibError(err)
		}
		if arr == nil { // skipped: drop the rest of the compressed bytes unread
			if _, err := io.Copy(io.Discard, lr); err != nil || lr.N != 0 {
				return nil, errTruncated
			}
			return nil, nil
		}
		// Read to the end of the zlib stream so that its checksum is verified.
		if rest, err := io.Copy(io.Discard, zr); err != nil {
			return nil, fmt.Errorf("variable %q: %v", arr.Name, zlibError(err))
		} else if rest != 0 {
			return nil, fmt.Errorf("variable %q: %d unexpected bytes after the matrix in its compressed element", arr.Name, rest)
		}
		if lr.N != 0 {
			return nil, fmt.Errorf("variable %q: %d unexpected bytes after the zlib stream in its compressed element", arr.Name, lr.N)
		}
		return arr, nil
	case miMATRIX:
		lr := &io.LimitedReader{R: r, N: int64(t.n)}
		arr, err := m.readMatrix(lr, t.n)
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(io.Discard, lr); err != nil { // skipped parts of the matrix
			return nil, truncated(err)
		}
		if lr.N != 0 {
			return nil, errTruncated
		}
		return arr, skipPadding(r, t.n)
	default:
		if t.small != nil {
			return nil, nil
		}
		if _, err := io.CopyN(io.Discard, r, int64(t.n)); err != nil {
			return nil, truncated(err)
		}
		return nil, skipPadding(r, t.n)
	}
}

// zlibError names a corrupt or truncated compressed stream; other errors pass unchanged.
func zlibError(err error) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, errTruncated) || errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF:
		return errors.New("truncated compressed (zlib) element")
	case errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrHeader) || errors.As(err, &corrupt):
		return fmt.Errorf("corrupt compressed (zlib) element: %v", err)
	}
	return err
}

// skipPadding skips the bytes that align an element of n bytes to 8 bytes.
func skipPadding(r io.Reader, n int) error {
	if pad := (8 - n%8) % 8; pad > 0 {
		if _, err := io.CopyN(io.Discard, r, int64(pad)); err != nil {
			return truncated(err)
		}
	}
	return nil
}

// readSub reads a sub-element of a matrix (tag, data and padding); maxBytes bounds its size.
func (m *matReader) readSub(r io.Reader, what string, maxBytes int) (tag, []byte, error) {
	t, err := m.readTag(r)
	if err != nil {
		return t, nil, fmt.Errorf("%s: %w", what, truncated(err))
	}
	if t.small != nil {
		return t, t.small, nil
	}
	if t.n > maxBytes {
		return t, nil, fmt.Errorf("%s declares %d bytes, more than the %d left in its matrix", what, t.n, maxBytes)
	}
	data, err := readN(r, t.n)
	if err != nil {
		return t, nil, fmt.Errorf("%s: %w", what, err)
	}
	return t, data, skipPadding(r, t.n)
}

// readN reads exactly n bytes, growing the buffer as data arrive, so that a corrupt size cannot
// allocate more than the data actually present.
func readN(r io.Reader, n int) ([]byte, error) {
	const chunk = 1 << 24
	buf := make([]byte, 0, min(n, chunk))
	for len(buf) < n {
		k := min(n-len(buf), chunk)
		buf = slices.Grow(buf, k)
		if _, err := io.ReadFull(r, buf[len(buf):len(buf)+k]); err != nil {
			return nil, truncated(err)
		}
		buf = buf[:len(buf)+k]
	}
	return buf, nil
}

// readMatrix reads the sub-elements of a miMATRIX element of n bytes: array flags, dimensions,
// name and real part. It returns nil, nil for arrays it skips.
func (m *matReader) readMatrix(r io.Reader, n int) (*MATArray, error) {
	_, flags, err := m.readSub(r, "array flags", n)
	if err != nil {
		return nil, err
	}
	if len(flags) != 8 {
		return nil, fmt.Errorf("array flags have %d bytes, want 8", len(flags))
	}
	word := m.order.Uint32(flags)
	class := byte(word & 0xff)
	className, numeric := matClassNames[class]
	if !numeric { // cell, struct, object, char, sparse: not needed by any loader
		return nil, nil
	}
	dt, dimBytes, err := m.readSub(r, "dimensions", n)
	if err != nil {
		return nil, err
	}
	if dt.typ != miINT32 || len(dimBytes)%4 != 0 || len(dimBytes) < 8 {
		return nil, fmt.Errorf("dimensions element has type %d and %d bytes, want int32 and at least 2 dimensions", dt.typ, len(dimBytes))
	}
	dims := make([]int, len(dimBytes)/4)
	count := 1
	for i := range dims {
		d := int(int32(m.order.Uint32(dimBytes[4*i:])))
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		dims[i] = d
		if d > 0 && count > matMaxValues/d { // checked before multiplying, so the product cannot overflow
			return nil, fmt.Errorf("dimensions %v are implausibly large (more than 2^40 values)", dims[:i+1])
		}
		count *= d
	}
	_, nameBytes, err := m.readSub(r, "array name", n)
	if err != nil {
		return nil, err
	}
	arr := &MATArray{Name: string(nameBytes), Class: className, Dims: dims}
	if len(m.want) > 0 && !slices.Contains(m.want, arr.Name) {
		return nil, nil
	}
	if word&0x0800 != 0 {
		return nil, fmt.Errorf("variable %q is complex: only real arrays are supported", arr.Name)
	}
	// A variable whose declared values would take more memory, at matReadBytes a value, than the
	// bound allows is refused before its data is read, and its real part is read only up to its
	// class's width a value (a wider type is refused).
	per := matReadBytes(class)
	what := fmt.Sprintf("MAT variable %q dimensions %v of class %s (%d bytes a value as read)", arr.Name, dims, className, per)
	if err := checkDataMemory(m.path, what, int64(count)*int64(per)); err != nil {
		return nil, err
	}
	width := matClassBytes[class]
	rt, real, err := m.readSub(r, fmt.Sprintf("variable %q real part", arr.Name), min(n, width*count))
	if err != nil {
		return nil, err
	}
	size, ok := matTypeSizes[rt.typ]
	if !ok {
		return nil, fmt.Errorf("variable %q: real part has unsupported data type %d", arr.Name, rt.typ)
	}
	if len(real) != count*size {
		return nil, fmt.Errorf("variable %q: real part has %d bytes, dimensions %v need %d x %d bytes", arr.Name, len(real), dims, count, size)
	}
	if size > width {
		return nil, fmt.Errorf("variable %q of class %s: real part stored as %d-byte values, wider than its class", arr.Name, className, size)
	}
	if rt.typ == miUINT8 {
		arr.u8 = real
		return arr, nil
	}
	arr.f64 = make([]float64, count)
	o := m.order
	for i := range arr.f64 {
		var v float64
		switch rt.typ {
		case miINT8:
			v = float64(int8(real[i]))
		case miINT16:
			v = float64(int16(o.Uint16(real[2*i:])))
		case miUINT16:
			v = float64(o.Uint16(real[2*i:]))
		case miINT32:
			v = float64(int32(o.Uint32(real[4*i:])))
		case miUINT32:
			v = float64(o.Uint32(real[4*i:]))
		case miSINGLE:
			v = float64(math.Float32frombits(o.Uint32(real[4*i:])))
		case miDOUBLE:
			v = math.Float64frombits(o.Uint64(real[8*i:]))
		case miINT64:
			v = float64(int64(o.Uint64(real[8*i:])))
		case miUINT64:
			v = float64(o.Uint64(real[8*i:]))
		}
		arr.f64[i] = v
	}
	return arr, nil
}
