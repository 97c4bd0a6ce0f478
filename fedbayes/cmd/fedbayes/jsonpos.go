package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
)

// unknownFieldRE extracts the field name from encoding/json's unknown-field error.
var unknownFieldRE = regexp.MustCompile(`unknown field "((?:[^"\\]|\\.)*)"`)

// withJSONPosition adds "line L, column C (byte offset O)" to an error from decoding the JSON file
// at path, when the error tells where: a syntax error or a value of the wrong type (the last byte
// read, the offending character or the end of the offending value),
// an unexpected end of the file (its end), or an unknown field (the first place the name is used
// as a key). Other errors, and errors for a file that cannot be read again, are returned as they are.
func withJSONPosition(path string, err error) error {
	if err == nil {
		return nil
	}
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		return err
	}
	offset := int64(-1)
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn): // Offset counts the bytes read, the offending one included
		offset = syn.Offset - 1
	case errors.As(err, &typ):
		offset = typ.Offset - 1
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = int64(len(data))
	default:
		if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
			if i := keyOffset(data, m[1]); i >= 0 {
				offset = int64(i)
			}
		}
	}
	if offset < 0 || offset > int64(len(data)) {
		return err
	}
	line, col := lineColumn(data, int(offset))
	return fmt.Errorf("%w (%s: line %d, column %d, byte offset %d)", err, path, line, col, offset)
}

// keyOffset returns the offset of the first `"name"` followed by a colon in data, or -1.
func keyOffset(data []byte, name string) int {
	quoted := []byte(`"` + name + `"`)
	for from := 0; ; {
		i := bytes.Index(data[from:], quoted)
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(data[at+len(quoted):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + len(quoted)
	}
}

// lineColumn converts a byte offset into a 1-based line and column (columns count bytes).
func lineColumn(data []byte, offset int) (line, col int) {
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = offset - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
