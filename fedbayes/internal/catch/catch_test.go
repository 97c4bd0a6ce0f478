package catch

import (
	"errors"
	"testing"
)

func TestDo(t *testing.T) {
	sentinel := errors.New("graph error")
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"no panic", func() {}, ""},
		{"error", func() { panic(sentinel) }, "graph error"},
		{"string", func() { panic("bad shape") }, "bad shape"},
		{"other", func() { panic(42) }, "42"},
	}
	for _, tc := range tests {
		err := Do(tc.fn)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: Do() = %q, want %q", tc.name, got, tc.want)
		}
	}
	if err := Do(func() { panic(sentinel) }); !errors.Is(err, sentinel) {
		t.Errorf("a panicked error is not kept: %v", err)
	}
}
