// Package strictjsontest makes the hostile variants of a JSON object that every reader of a JSON
// file must refuse (a duplicate key, an unknown field, a NaN or an out-of-range number, a truncated
// document), so that each reader's test feeds the same class of inputs: a new reader is covered by
// adding it to its package's table of readers.
package strictjsontest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// UnknownField is the key the "unknown field" variant adds; no fedbayes file has it.
const UnknownField = "fedbayes_unknown_field"

// Variant is one hostile form of a document and a fragment of the error a strict reader gives.
type Variant struct {
	Name string
	Doc  []byte
	// Want is a fragment of the error message (strictjson's wording).
	Want string
}

// member is one member of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// members splits a JSON object into its members, in order.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("strictjsontest: not a JSON object: %.40q", obj)
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{t.(string), v})
	}
	return out, nil
}

// encode writes members as a JSON object on one line.
func encode(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(m.key))
		b.WriteString(": ")
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Variants returns the hostile variants of obj, a valid JSON object with at least one member, each
// on one line: its first member twice, an unknown field, its first number member (or an added
// member) as NaN, as Infinity and as 1e999, and obj cut in half.
func Variants(obj []byte) ([]Variant, error) {
	ms, err := members(obj)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("strictjsontest: the object has no member")
	}
	num := -1
	for i, m := range ms {
		if _, err := strconv.ParseFloat(string(m.value), 64); err == nil {
			num = i
			break
		}
	}
	with := func(value string) []byte {
		c := append([]member(nil), ms...)
		if num < 0 {
			return encode(append(c, member{ms[0].key + "_number", json.RawMessage(value)}))
		}
		c[num].value = json.RawMessage(value)
		return encode(c)
	}
	dup := append([]member{ms[0]}, ms...)
	unknown := append(append([]member(nil), ms...), member{UnknownField, json.RawMessage("1")})
	one := encode(ms)
	return []Variant{
		{"duplicate key", encode(dup), fmt.Sprintf("the key %q appears twice", ms[0].key)},
		{"unknown field", encode(unknown), fmt.Sprintf("unknown field %q", UnknownField)},
		{"NaN", with("NaN"), "NaN is not a JSON number"},
		{"Infinity", with("Infinity"), "Infinity is not a JSON number"},
		{"1e999", with("1e999"), "the number 1e999 is outside the range of a 64-bit float"},
		{"truncated", one[:len(one)/2], "unexpected end"},
	}, nil
}
