package engine

import (
	"strings"
	"testing"
)

func TestNewVariant(t *testing.T) {
	v, err := NewVariant("eaa", "aggregation.rule", "EAA", "training.lr", 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if v.Label != "eaa" || string(v.Set["aggregation.rule"]) != `"EAA"` || string(v.Set["training.lr"]) != "0.01" || len(v.Set) != 2 {
		t.Fatalf("variant %+v", v)
	}
	for _, tc := range []struct {
		name string
		args []any
		want string
	}{
		{"odd", []any{"aggregation.rule"}, "in pairs"},
		{"not a path", []any{3, "EAA"}, "not a path"},
		{"twice", []any{"training.lr", 0.1, "training.lr", 0.2}, "twice"},
		{"unmarshalable", []any{"training.lr", func() {}}, "training.lr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewVariant("x", tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one saying %q", err, tc.want)
			}
		})
	}
}
