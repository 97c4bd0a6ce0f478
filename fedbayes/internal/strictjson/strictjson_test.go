package strictjson

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // "" means valid
	}{
		{"valid", `{"a": {"b": [1, 2, {"c": null}]}, "d": "x"}`, ""},
		{"bom", "\xEF\xBB\xBF{\"a\": 1}", ""},
		{"same key in sibling objects", `{"a": {"k": 1}, "b": {"k": 2}}`, ""},
		{"duplicate", `{"a": 1, "a": 2}`, `a (line 1, column 10): the key "a" appears twice`},
		{"nested duplicate", "{\"a\": [{\"k\": 1},\n {\"k\": 1, \"k\": 2}]}", `a[1].k (line 2, column 11): the key "k" appears twice`},
		{"NaN", `{"x": NaN}`, "x (line 1, column 7): NaN is not a JSON number"},
		{"-Infinity in array", `{"x": [1, -Infinity]}`, "x[1] (line 1, column 11): -Infinity is not a JSON number"},
		{"1e999", `{"x": 1e999}`, "x (line 1, column 7): the number 1e999 is outside the range"},
		{"-1e999", `[-1e999]`, "[0] (line 1, column 2): the number -1e999 is outside"},
		{"empty", ``, "empty document"},
		{"truncated", `{"a": [1, 2`, "unexpected end"},
		{"trailing", `{} []`, "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check(%q) = %v, want nil", tc.doc, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check(%q) = %v, want %q", tc.doc, err, tc.want)
			}
		})
	}
}

func TestDecodeExactAndPositioned(t *testing.T) {
	var v struct {
		Seeds []int64 `json:"seeds"`
		N     int32   `json:"n"`
	}
	if err := Decode([]byte(`{"seeds": [9007199254740993]}`), &v); err != nil || v.Seeds[0] != 9007199254740993 {
		t.Fatalf("seeds %v, %v", v.Seeds, err)
	}
	err := Decode([]byte("{\n\"n\": 3000000000}"), &v)
	if err == nil || !strings.Contains(err.Error(), "n (line 2") || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("overflow: %v", err)
	}
	err = Decode([]byte(`{"m": 1}`), &v)
	if err == nil || !strings.Contains(err.Error(), `unknown field "m"`) {
		t.Errorf("unknown field: %v", err)
	}
}

func TestLineColumn(t *testing.T) {
	raw := []byte("ab\ncde\nf")
	for _, tc := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {7, 3, 1}, {99, 3, 2}} {
		if l, c := LineColumn(raw, tc.off); l != tc.line || c != tc.col {
			t.Errorf("LineColumn(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}
