package data

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadCSV(t *testing.T) {
	const table = "a,price,b\n1,10.5,-2\n3,20,4e1\n"
	tests := []struct {
		name    string
		content []byte
		opts    CSVOptions
		x       []float32
		targets []float32
		feats   []string
	}{
		{"comma", []byte(table), CSVOptions{Target: "price"}, []float32{1, -2, 3, 40}, []float32{10.5, 20}, []string{"a", "b"}},
		{"semicolon", []byte(strings.ReplaceAll(table, ",", ";")), CSVOptions{Target: "price"}, []float32{1, -2, 3, 40}, []float32{10.5, 20}, []string{"a", "b"}},
		{"gzip", gzipBytes(t, []byte(table)), CSVOptions{Target: "price"}, []float32{1, -2, 3, 40}, []float32{10.5, 20}, []string{"a", "b"}},
		{"feature order", []byte(table), CSVOptions{Target: "a", Features: []string{"b", "price"}}, []float32{-2, 10.5, 40, 20}, []float32{1, 3}, []string{"b", "price"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "t.csv"), tc.content)
			ds, err := LoadCSV(p, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ds.X, tc.x) || !slices.Equal(ds.Targets, tc.targets) || !slices.Equal(ds.FeatureNames, tc.feats) || !ds.IsRegression() {
				t.Fatalf("X %v targets %v features %v", ds.X, ds.Targets, ds.FeatureNames)
			}
		})
	}
}

func TestLoadCSVClassification(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "c.csv"), []byte("x,quality\n1,10\n2,9\n3,10\n4,100\n"))
	ds, err := LoadCSV(p, CSVOptions{Target: "quality", Classification: true})
	if err != nil {
		t.Fatal(err)
	}
	// Numeric class names sort numerically, not as text.
	if !slices.Equal(ds.ClassNames, []string{"9", "10", "100"}) || !slices.Equal(ds.Labels, []int32{1, 0, 1, 2}) {
		t.Fatalf("classes %v labels %v", ds.ClassNames, ds.Labels)
	}
}

func TestLoadCSVErrors(t *testing.T) {
	tests := []struct {
		name, content string
		opts          CSVOptions
		want          string
	}{
		{"no target option", "a,b\n1,2\n", CSVOptions{}, "Target"},
		{"unknown target", "a,b\n1,2\n", CSVOptions{Target: "c"}, `no column "c"`},
		{"unknown feature", "a,b\n1,2\n", CSVOptions{Target: "a", Features: []string{"z"}}, `no feature column "z"`},
		{"empty cell", "a,b\n1,2\n3,\n", CSVOptions{Target: "a"}, `line 3, column "b": empty cell`},
		{"not a number", "a,b\n1,2\nx,4\n", CSVOptions{Target: "a"}, `line 3, target column "a": cannot read "x"`},
		{"NA", "a,b\n1,NA\n", CSVOptions{Target: "a"}, `cannot read "NA"`},
		{"short row", "a,b\n1,2\n3\n", CSVOptions{Target: "a"}, "line 3"},
		{"no rows", "a,b\n", CSVOptions{Target: "a"}, "no data rows"},
		{"duplicate column", "a,a\n1,2\n", CSVOptions{Target: "a"}, "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeFile(t, filepath.Join(t.TempDir(), "bad.csv"), []byte(tc.content))
			_, err := LoadCSV(p, tc.opts)
			var fe *FileError
			if err == nil || !errors.As(err, &fe) || fe.Path != p || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a FileError for %s containing %q", err, p, tc.want)
			}
		})
	}
	gz := gzipBytes(t, []byte(strings.Repeat("a,b\n1,2\n", 200)))
	p := writeFile(t, filepath.Join(t.TempDir(), "cut.csv.gz"), gz[:len(gz)-10])
	if _, err := LoadCSV(p, CSVOptions{Target: "a"}); err == nil || !strings.Contains(err.Error(), "truncated gzip") {
		t.Fatalf("truncated gzip: error %v", err)
	}
}
