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
// bytes, whatever its name). A truncated or corrupt gzip stream is an error, never a shorter result.
func readAllMaybeGzip(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(raw, gzipMagic) {
		return raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
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
	buf := bytes.NewBuffer(make([]byte, 0, capHint))
	if _, err := buf.ReadFrom(zr); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fileErrorf(path, "truncated gzip stream (%d compressed bytes read)", len(raw))
		}
		return nil, fileErrorf(path, "corrupt gzip stream: %v", err)
	}
	return buf.Bytes(), nil
}

// openMaybeGzip opens a file for streaming, decompressing it when it is gzip. Closing the returned
// reader closes the file.
func openMaybeGzip(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	head, _ := br.Peek(2)
	if !bytes.Equal(head, gzipMagic) {
		return struct {
			io.Reader
			io.Closer
		}{br, f}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, fileErrorf(path, "corrupt gzip header: %v", err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, f}, nil
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
