package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileError is the error of a loader: the file and what is wrong with it.
type FileError struct {
	// Path is the file that could not be read.
	Path string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// fileErrorf returns a *FileError for path with a formatted message.
func fileErrorf(path, format string, args ...any) error {
	return &FileError{Path: path, Err: fmt.Errorf(format, args...)}
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// longerError is readAllMaybeGzipMax's error for a file whose content is longer than its bound: by
// Extra bytes exactly (a raw file, whose size says), or by at least Extra (a gzip stream, which is
// not decompressed further).
type longerError struct {
	Extra int64
	Exact bool
}

func (e *longerError) Error() string {
	if e.Exact {
		return fmt.Sprintf("%d bytes longer than expected", e.Extra)
	}
	return fmt.Sprintf("at least %d bytes longer than expected", e.Extra)
}

// readAllMaybeGzipMax reads a whole file, decompressing it when it is gzip (recognised by its magic
// bytes, whatever its name), and reads (and allocates) at most limit bytes of content, limit > 0: a
// raw file larger than limit is a *longerError before anything is read, and a gzip stream that
// decompresses to more is a *longerError once limit+1 bytes are out, not decompressed further. The
// file is streamed from disk: the compressed bytes are never held whole. Concatenated gzip members
// are read in turn. A truncated or corrupt gzip stream is an error, never a shorter result; bytes
// after the last member that are not another member are reported as trailing data (not as
// truncation). A limit of 0 or less is an error: every read has a bound.
func readAllMaybeGzipMax(path string, limit int64) ([]byte, error) {
	if limit <= 0 {
		return nil, fileErrorf(path, "internal error: read with no positive bound (limit %d bytes)", limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	cr := &countingReader{r: f}
	br := bufio.NewReaderSize(cr, 1<<16) // a ByteReader: gzip reads no further than each member's end
	if head, _ := br.Peek(2); !bytes.HasPrefix(head, gzipMagic) {
		if size > limit {
			return nil, &longerError{Extra: size - limit, Exact: true}
		}
		buf := make([]byte, size+1) // one more, to see a file that grew since Stat
		n, err := io.ReadFull(br, buf)
		switch {
		case err == nil:
			return nil, fileErrorf(path, "grew while being read (more than %d bytes)", size)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return buf[:n], nil
		default:
			return nil, err
		}
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fileErrorf(path, "corrupt gzip header: %v", err)
	}
	// The gzip trailer stores the uncompressed size modulo 2^32: a good capacity hint.
	var capHint int64
	var trailer [4]byte
	if size >= 4 {
		if _, err := f.ReadAt(trailer[:], size-4); err == nil {
			capHint = int64(binary.LittleEndian.Uint32(trailer[:]))
			if capHint > 64*size+1<<20 { // implausible ratio: a corrupt trailer, ignore the hint
				capHint = 0
			}
		}
	}
	buf := make([]byte, 0, min(max(capHint, 64<<10), limit+1))
	for member := 1; ; member++ {
		zr.Multistream(false)
		var err error
		if buf, err = readUpTo(zr, buf, limit+1); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fileErrorf(path, "truncated gzip stream (member %d ends early; %d compressed bytes)", member, size)
			}
			return nil, fileErrorf(path, "corrupt gzip stream (member %d): %v", member, err)
		}
		if int64(len(buf)) > limit {
			return nil, &longerError{Extra: int64(len(buf)) - limit}
		}
		next, err := br.Peek(2)
		if len(next) == 0 && errors.Is(err, io.EOF) {
			return buf, nil
		}
		at := cr.n - int64(br.Buffered())
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if !bytes.HasPrefix(next, gzipMagic) {
			return nil, fileErrorf(path, "%d bytes of trailing data after the gzip stream (at byte %d); the file is damaged", size-at, at)
		}
		if err := zr.Reset(br); err != nil {
			return nil, fileErrorf(path, "corrupt gzip header of member %d at byte %d: %v", member+1, at, err)
		}
	}
}

// readUpTo appends what r holds to buf until r ends or buf holds limit bytes, growing buf by
// doubling but never beyond a capacity of limit.
func readUpTo(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(max(2*int64(cap(buf)), 64<<10), limit))
			copy(grown, buf)
			buf = grown
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// readTable reads a whole text table (LoadCSV, LoadSklearn), raw or gzip, bounded by tableBound: a
// longer content is refused, naming the file and the bound, with no more than the bound decompressed.
func readTable(path string) ([]byte, error) {
	limit, from := tableBound()
	raw, err := readAllMaybeGzipMax(path, limit)
	if le := (*longerError)(nil); errors.As(err, &le) {
		return nil, fileErrorf(path, "content is more than %s, the bound on a table (%s / %d); use a smaller file (not read further)",
			byteSize(limit), from, TableMemoryFactor)
	}
	return raw, err
}

// tableBound returns the most bytes of content a table file may have, and where the bound comes
// from: the memory bound divided by TableMemoryFactor, what the readers allocate per byte of content.
func tableBound() (int64, string) {
	bound, from := dataMemoryBound()
	return max(bound/TableMemoryFactor, 1), from
}

// readPrefixMaybeGzip returns the first n bytes of a file's content, decompressed when it is gzip
// (fewer if the content is shorter), reading no further. readErr is the error of a gzip stream that
// ended or broke within those bytes (nil otherwise): the caller reports it if the bytes read do
// not suffice.
func readPrefixMaybeGzip(path string, n int) (head []byte, readErr error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	var r io.Reader = br
	if bytes.HasPrefix(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fileErrorf(path, "corrupt gzip header: %v", err)
		}
		r = zr
	}
	buf := make([]byte, n)
	k := 0
	for k < n {
		m, rerr := r.Read(buf[k:])
		k += m
		if errors.Is(rerr, io.EOF) {
			break // the content is shorter than n
		}
		if rerr != nil {
			return buf[:k], rerr, nil
		}
	}
	return buf[:k], nil, nil
}

// findFile returns the first of the candidate names that exists in one of the folders, trying each
// name with and without a ".gz" suffix. The error says what was looked for, and where.
func findFile(folders []string, names ...string) (string, error) {
	for _, dir := range folders {
		for _, name := range names {
			for _, cand := range []string{name, name + ".gz"} {
				p := filepath.Join(dir, cand)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s[.gz] not found in %s", strings.Join(names, "[.gz] or "), strings.Join(folders, " or "))
}

// dataFolders returns the folders where a dataset's files are looked for: dir/sub for each sub, then
// dir itself (so a user may point straight at the folder holding the files).
func dataFolders(dir string, subs ...string) []string {
	out := make([]string, 0, len(subs)+1)
	for _, s := range subs {
		out = append(out, filepath.Join(dir, s))
	}
	return append(out, dir)
}
