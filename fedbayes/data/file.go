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

// readAllMaybeGzip reads a whole file, decompressing it when it is gzip (recognised by its magic
// bytes, whatever its name). Concatenated gzip members are read in turn. A truncated or corrupt gzip
// stream is an error, never a shorter result; bytes after the last member that are not another
// member are reported as trailing data (not as truncation).
func readAllMaybeGzip(path string) ([]byte, error) {
	return readAllMaybeGzipMax(path, -1)
}

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

// readAllMaybeGzipMax is readAllMaybeGzip that reads (and allocates) at most max bytes of content
// (max < 0: no bound): a raw file larger than max, or a gzip stream that decompresses to more, is a
// *longerError before more than max+1 bytes are allocated.
func readAllMaybeGzipMax(path string, max int64) ([]byte, error) {
	if max >= 0 {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		head, err := readPrefix(path, 2)
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(head, gzipMagic) && fi.Size() > max {
			return nil, &longerError{Extra: fi.Size() - max, Exact: true}
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(raw, gzipMagic) {
		return raw, nil
	}
	src := bytes.NewReader(raw) // a ByteReader: gzip reads no further than each member's end
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, fileErrorf(path, "corrupt gzip header: %v", err)
	}
	// The gzip trailer stores the uncompressed size modulo 2^32: a good capacity hint.
	capHint := 0
	if len(raw) >= 4 {
		capHint = int(binary.LittleEndian.Uint32(raw[len(raw)-4:]))
		if capHint > 64*len(raw)+1<<20 { // implausible ratio: a corrupt trailer, ignore the hint
			capHint = 0
		}
	}
	if max >= 0 && int64(capHint) > max+1 {
		capHint = int(max + 1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, capHint))
	for member := 1; ; member++ {
		zr.Multistream(false)
		var from io.Reader = zr
		if max >= 0 {
			from = io.LimitReader(zr, max+1-int64(buf.Len()))
		}
		if _, err := buf.ReadFrom(from); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fileErrorf(path, "truncated gzip stream (member %d ends early; %d compressed bytes)", member, len(raw))
			}
			return nil, fileErrorf(path, "corrupt gzip stream (member %d): %v", member, err)
		}
		if max >= 0 && int64(buf.Len()) > max {
			return nil, &longerError{Extra: int64(buf.Len()) - max}
		}
		rest := src.Len()
		if rest == 0 {
			return buf.Bytes(), nil
		}
		at := len(raw) - rest
		if !bytes.HasPrefix(raw[at:], gzipMagic) {
			return nil, fileErrorf(path, "%d bytes of trailing data after the gzip stream (at byte %d); the file is damaged", rest, at)
		}
		if err := zr.Reset(src); err != nil {
			return nil, fileErrorf(path, "corrupt gzip header of member %d at byte %d: %v", member+1, at, err)
		}
	}
}

// readPrefix returns the first n bytes of a file (fewer if it is shorter).
func readPrefix(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:k], nil
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
