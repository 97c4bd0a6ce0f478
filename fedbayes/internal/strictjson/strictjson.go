// Package strictjson checks a JSON document more strictly than encoding/json before it is decoded
// into a spec: a duplicate key in an object, a number outside float64's range (1e999), and a
// non-JSON number such as NaN or Infinity are refused with the JSON path, line and column. A UTF-8
// byte-order mark at the start is skipped (StripBOM).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// bom is the UTF-8 byte-order mark some editors write at the start of a file.
var bom = []byte{0xEF, 0xBB, 0xBF}

// StripBOM returns raw without a leading UTF-8 byte-order mark.
func StripBOM(raw []byte) []byte { return bytes.TrimPrefix(raw, bom) }

// Error is a problem at one place of a JSON document.
type Error struct {
	// Path is the JSON path of the value ("training.rounds", "seeds[2]"); empty at the top level.
	Path string
	// Line and Column are 1-based; Column counts bytes.
	Line, Column int
	// Problem says what is wrong.
	Problem string
}

// Error implements error.
func (e *Error) Error() string {
	at := fmt.Sprintf("line %d, column %d", e.Line, e.Column)
	if e.Path != "" {
		return fmt.Sprintf("%s (%s): %s", e.Path, at, e.Problem)
	}
	return fmt.Sprintf("%s: %s", at, e.Problem)
}

// LineColumn converts a byte offset of raw to a 1-based line and column.
func LineColumn(raw []byte, offset int64) (line, col int) {
	if offset > int64(len(raw)) {
		offset = int64(len(raw))
	}
	if offset < 0 {
		offset = 0
	}
	before := raw[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// frame is one open object or array while walking the tokens.
type frame struct {
	object  bool
	keys    map[string]bool
	key     string // the current member's key (objects)
	wantKey bool   // the next token is a key (objects)
	index   int    // the next element's index (arrays)
}

// Check walks raw (after StripBOM) and reports the first duplicate key, out-of-range number or
// syntax error with its path, line and column. It accepts exactly one JSON value.
func Check(raw []byte) error {
	raw = StripBOM(raw)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []*frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if f.wantKey {
					continue // between members: the path is the object's own
				}
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	fail := func(offset int64, format string, args ...any) error {
		l, c := LineColumn(raw, offset)
		return &Error{Path: path(), Line: l, Column: c, Problem: fmt.Sprintf(format, args...)}
	}
	// valueDone moves the innermost frame past a completed value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.object {
			f.wantKey = true
		} else {
			f.index++
		}
	}
	started := false
	for {
		before := dec.InputOffset()
		tok, err := dec.Token()
		if err == io.EOF {
			if !started {
				return fail(before, "empty document; a JSON object is expected")
			}
			if len(stack) > 0 {
				return fail(before, "unexpected end of the document")
			}
			return nil
		}
		if err != nil {
			return syntaxError(raw, err, before, path())
		}
		if started && len(stack) == 0 {
			return fail(before, "trailing data after the JSON value")
		}
		started = true
		// Position of the token itself: skip whitespace and separators after the previous token.
		pos := before
		for pos < int64(len(raw)) && strings.IndexByte(" \t\r\n,:", raw[pos]) >= 0 {
			pos++
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				valueDone()
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				top.key, top.wantKey = key, false
				return fail(pos, "the key %q appears twice in the same object", key)
			}
			top.keys[key] = true
			top.key, top.wantKey = key, false
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, wantKey: true})
			case '[':
				stack = append(stack, &frame{})
			case ']':
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case json.Number:
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil || math.IsInf(f, 0) {
				return fail(pos, "the number %s is outside the range of a 64-bit float", shorten(string(t)))
			}
			valueDone()
		default:
			valueDone()
		}
	}
}

// syntaxError turns a decoder error into an *Error with a position and a plainer message for the
// common non-JSON numbers.
func syntaxError(raw []byte, err error, before int64, path string) error {
	// The decoder's own offset is not the token's in streaming mode: the token starts after the
	// whitespace and separators that follow the previous token.
	offset := before
	for offset < int64(len(raw)) && strings.IndexByte(" \t\r\n,:", raw[offset]) >= 0 {
		offset++
	}
	problem := err.Error()
	rest := raw[min(int(offset), len(raw)):]
	for _, word := range []string{"NaN", "Infinity", "-Infinity", "+Infinity", "Inf", "-Inf", "inf", "nan"} {
		if bytes.HasPrefix(rest, []byte(word)) {
			problem = fmt.Sprintf("%s is not a JSON number (JSON has no NaN or infinity; give a finite number)", word)
			break
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		problem = "unexpected end of the document"
	}
	l, c := LineColumn(raw, offset)
	return &Error{Path: path, Line: l, Column: c, Problem: problem}
}

// shorten cuts a long token for an error message.
func shorten(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Decode checks raw with Check, then decodes it into v with unknown fields refused and numbers
// kept exact (an int64 field receives the exact integer). Decoding errors carry the field's path
// and, where the decoder gives one, the line and column.
func Decode(raw []byte, v any) error {
	if err := Check(raw); err != nil {
		return err
	}
	raw = StripBOM(raw)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			offset := te.Offset // after the value; for a number, move back to its start
			if lit, ok := strings.CutPrefix(te.Value, "number "); ok && int64(len(lit)) <= offset {
				offset -= int64(len(lit))
			}
			l, c := LineColumn(raw, offset)
			problem := fmt.Sprintf("%s cannot be read as %s", te.Value, te.Type)
			if te.Value == "number" || strings.HasPrefix(te.Value, "number ") {
				problem = fmt.Sprintf("%s does not fit a %s", te.Value, te.Type)
			}
			return &Error{Path: te.Field, Line: l, Column: c, Problem: problem}
		}
		if key, ok := unknownField(err); ok {
			if at := keyOffset(raw, key); at >= 0 {
				l, c := LineColumn(raw, int64(at))
				return &Error{Line: l, Column: c, Problem: fmt.Sprintf("unknown field %q", key)}
			}
		}
		return err
	}
	return nil
}

// unknownField gives the key of encoding/json's unknown-field error.
func unknownField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	key, qerr := strconv.Unquote(rest)
	return key, qerr == nil
}

// keyOffset is the offset of the first member of raw whose key is key (its opening quote), or -1.
func keyOffset(raw []byte, key string) int {
	quoted, _ := json.Marshal(key)
	for from := 0; ; {
		i := bytes.Index(raw[from:], quoted)
		if i < 0 {
			return -1
		}
		at := from + i
		rest := bytes.TrimLeft(raw[at+len(quoted):], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return at
		}
		from = at + len(quoted)
	}
}

// Exact decodes one JSON value into any, keeping numbers as json.Number so that integers above 2^53
// and decimals compare and re-encode as written. It does not Check raw.
func Exact(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeFile is Decode on raw, the content of the file path (or of an entry of an archive, named
// as the reader names it): a duplicate key, a number outside float64's range, a NaN or infinity
// literal, an unknown field or a type mismatch is an error that names the file and the place in it
// ("PATH: FIELD (line L, column C): PROBLEM"). Every JSON file fedbayes reads from disk is decoded
// with it, so that a file is checked as strictly as a spec.
func DecodeFile(path string, raw []byte, v any) error {
	if err := Decode(raw, v); err != nil {
		return &FileError{Path: path, Err: err}
	}
	return nil
}

// FileError is a problem of the JSON file Path.
type FileError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap gives the problem (an *Error where it has a place).
func (e *FileError) Unwrap() error { return e.Err }
