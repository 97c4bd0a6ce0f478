package plots

import (
	"strings"
	"testing"
)

func TestTextWidth(t *testing.T) {
	for _, tc := range []struct {
		s    string
		px   float64
		bold bool
		want float64
	}{
		{"", 12, false, 0},
		{"i", 10, false, 2.78},
		{"W", 10, true, 11.03},
		{"ab", 100, false, 61.3 + 63.5},
		{"β", 10, false, 8.5},
		{"…", 10, false, 10},
	} {
		if got := TextWidth(tc.s, tc.px, tc.bold); got < tc.want-1e-6 || got > tc.want+1e-6 {
			t.Errorf("TextWidth(%q, %g, %v) = %g, want %g", tc.s, tc.px, tc.bold, got, tc.want)
		}
	}
}

func TestFitText(t *testing.T) {
	long := "quick-digits (T=3, E=2, 1 seed, 1,438 / 359 examples): fedavg, gaa, cf and 9 variational rules"
	for _, tc := range []struct {
		name     string
		text     string
		width    float64
		maxLines int
		lines    int
		fits     bool
	}{
		{"short fits on one line", "Test accuracy", 344, 2, 1, true},
		{"long wraps to two lines", long, 600, 2, 2, true},
		{"too long is shortened", long, 344, 2, 2, false},
		{"one line allowed", long, 344, 1, 1, false},
		{"a word wider than the line is cut", strings.Repeat("x", 80), 100, 3, 3, false},
		{"empty", "", 100, 2, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, fits := FitText(tc.text, tc.width, 13, true, tc.maxLines)
			if len(lines) != tc.lines || fits != tc.fits {
				t.Fatalf("FitText = %q, %v; want %d lines, fits %v", lines, fits, tc.lines, tc.fits)
			}
			for _, l := range lines {
				if w := TextWidth(l, 13, true); w > tc.width {
					t.Errorf("line %q is %.1f px, wider than %g", l, w, tc.width)
				}
			}
			if !fits && !strings.HasSuffix(lines[len(lines)-1], "…") {
				t.Errorf("shortened text %q does not end with …", lines)
			}
			if fits && strings.Join(lines, " ") != strings.Join(strings.Fields(tc.text), " ") {
				t.Errorf("lines %q lose words of %q", lines, tc.text)
			}
		})
	}
}
