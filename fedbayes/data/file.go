package data

import (
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
	buf := bytes.NewBuffer(make([]byte, 0, capHint))
	for member := 1; ; member++ {
		zr.Multistream(false)
		if _, err := buf.ReadFrom(zr); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fileErrorf(path, "truncated gzip stream (member %d ends early; %d compressed bytes)", member, len(raw))
			}
			return nil, fileErrorf(path, "corrupt gzip stream (member %d): %v", member, err)
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
