package data

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := func() *Dataset {
		return &Dataset{Name: "d", Shape: []int{2}, X: []float32{1, 2, 3, 4}, Labels: []int32{0, 1}, NumClasses: 2}
	}
	tests := []struct {
		name   string
		modify func(*Dataset)
		want   string // "" for valid
	}{
		{"valid", func(*Dataset) {}, ""},
		{"regression", func(d *Dataset) { d.Labels, d.NumClasses, d.Targets = nil, 0, []float32{1, 2} }, ""},
		{"no shape", func(d *Dataset) { d.Shape = nil }, "empty example shape"},
		{"zero dim", func(d *Dataset) { d.Shape = []int{0} }, "non-positive dimension"},
		{"both", func(d *Dataset) { d.Targets = []float32{1, 2} }, "exactly one of Labels"},
		{"neither", func(d *Dataset) { d.Labels = nil }, "exactly one of Labels"},
		{"short X", func(d *Dataset) { d.X = d.X[:3] }, "X has 3 values, want 2 examples x 2"},
		{"label range", func(d *Dataset) { d.Labels[1] = 2 }, "label 2 of example 1 is outside [0, 2)"},
		{"class names", func(d *Dataset) { d.ClassNames = []string{"a"} }, "1 class names for 2 classes"},
		{"feature names", func(d *Dataset) { d.FeatureNames = []string{"a"} }, "1 feature names"},
		{"regression classes", func(d *Dataset) { d.Labels, d.Targets = nil, []float32{1, 2} }, "regression dataset with NumClasses 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := ok()
			tc.modify(d)
			err := d.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSubsetAndSelect(t *testing.T) {
	d := &Dataset{Name: "d", Shape: []int{2}, X: []float32{0, 1, 10, 11, 20, 21}, Labels: []int32{0, 1, 2}, NumClasses: 3,
		ClassNames: []string{"a", "b", "c"}, FeatureNames: []string{"f", "g"}}
	s := d.Subset([]int{2, 0, 2})
	if !slices.Equal(s.X, []float32{20, 21, 0, 1, 20, 21}) || !slices.Equal(s.Labels, []int32{2, 0, 2}) || s.Len() != 3 {
		t.Fatalf("subset X %v labels %v", s.X, s.Labels)
	}
	s.X[0], s.Shape[0], s.ClassNames[0] = -1, 5, "z"
	if d.X[4] != 20 || d.Shape[0] != 2 || d.ClassNames[0] != "a" {
		t.Fatal("subset shares memory with its source")
	}
	if _, err := d.Select([]int{1, 3}); err == nil || !strings.Contains(err.Error(), "index 3 at position 1") {
		t.Fatalf("Select out of range: %v", err)
	}
	if e := d.Subset(nil); e.Len() != 0 || e.Labels == nil {
		t.Fatalf("empty subset %+v", e)
	}
	if got := d.ClassCounts(); !slices.Equal(got, []int{1, 1, 1}) {
		t.Fatalf("class counts %v", got)
	}
}

func TestDir(t *testing.T) {
	t.Setenv(DirEnv, "/some/where")
	if Dir() != "/some/where" {
		t.Fatalf("Dir() = %s with %s set", Dir(), DirEnv)
	}
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_CACHE_HOME", "/cache")
	if got := Dir(); got != filepath.Join("/cache", "fedbayes", "data") {
		t.Fatalf("Dir() = %s, want /cache/fedbayes/data", got)
	}
}
