package pinned

import "testing"

func TestNear(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		skip      int
		ok        bool
	}{
		{"abc 1.0 2.0", "def 1.0 2.0", 1, true},      // digests are skipped
		{"abc 1.000001 2.0", "abc 1.0 2.0", 1, true}, // within 1e-5
		{"abc 1.0001 2.0", "abc 1.0 2.0", 1, false},  // beyond it
		{"1e-9", "2e-9", 0, true},                    // the scale is at least 1
		{"300.001", "300.0", 0, true},                // relative to a large value
		{"300.1", "300.0", 0, false},                 // 3e-4 relative
		{"1 2", "1 2 3", 0, false},                   // field counts differ
		{"x 2", "1 2", 0, false},                     // a number where a number is pinned
		{"NaN", "1", 0, false},
		{"1 2", "d 2", 0, false},      // a digest the pin does not skip
		{"1234 2", "5678 2", 1, true}, // a digest of digits only, skipped                       // NaN agrees with nothing
	} {
		if got := Near(tc.got, tc.want, tc.skip, 1e-5) == ""; got != tc.ok {
			t.Errorf("Near(%q, %q) agrees %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}

func TestCoresNamed(t *testing.T) {
	p := Pins{AVX512: "a", Haswell: "h", Plain: "p"}
	for core, want := range map[string]string{"SkylakeX": "a", "Cooperlake": "a", "Haswell": "h"} {
		if got := cores[core](p); got != want {
			t.Errorf("core %s uses pin %q, want %q", core, got, want)
		}
	}
}
