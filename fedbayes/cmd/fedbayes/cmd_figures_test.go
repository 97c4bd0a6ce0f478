package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/plots"
)

const figuresSpec = `{"version": 1, "figures": [
  {"name": "acc", "kind": "learning_curves", "data": {"series": [{"name": "EAA", "x": [1, 2], "runs": [[0.5, 0.6]]}]}},
  {"name": "part", "kind": "partition_heatmap", "size": "wide", "data": {"counts": [[1, 2], [3, 4]]}}
]}`

// writeSpec writes a figure-spec file for a test and returns its path.
func writeSpec(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFiguresUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1, "figures": [{"name": "a", "kind": "pie", "data": {}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantStatus int
		wantErr    string
	}{
		{"no argument", []string{"figures"}, 2, "give at least one figure-spec"},
		{"bad scale", []string{"figures", "-png-scale", "0", bad}, 2, "-png-scale 0"},
		{"missing file", []string{"figures", filepath.Join(dir, "none.json")}, 1, "none.json"},
		{"results dir without spec", []string{"figures", dir}, 1, "figures.json"},
		{"unknown kind", []string{"figures", "-no-png", bad}, 1, `unknown kind "pie"`},
		{"syntax error", []string{"figures", "-no-png", writeSpec(t, dir, "syntax.json", "{\"version\": 1,\n  \"figures\": [}\n")}, 1, "line 2, column 15, byte offset 29"},
		{"wrong type", []string{"figures", "-no-png", writeSpec(t, dir, "type.json", "{\"version\": \"one\"}")}, 1, "line 1, column 17, byte offset 16"},
		{"truncated", []string{"figures", "-no-png", writeSpec(t, dir, "cut.json", "{\"version\": 1,\n")}, 1, "line 2, column 1, byte offset 15"},
		{"unknown field", []string{"figures", "-no-png", writeSpec(t, dir, "field.json", "{\"version\": 1,\n \"figurez\": []}")}, 1, "line 2, column 2, byte offset 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := runMain(tc.args, &stdout, &stderr); got != tc.wantStatus {
				t.Errorf("status %d, want %d; stderr: %s", got, tc.wantStatus, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// TestFiguresWritesFiles runs `fedbayes figures` on a results directory; it needs Node.js, ECharts
// and Chromium (skipped without them unless FEDBAYES_REQUIRE_BROWSER=1).
func TestFiguresWritesFiles(t *testing.T) {
	_, errNode := plots.FindNode()
	_, errEC := plots.EChartsDir()
	_, errChromium := plots.FindChromium()
	for _, err := range []error{errNode, errEC, errChromium} {
		if err != nil {
			if os.Getenv("FEDBAYES_REQUIRE_BROWSER") == "1" {
				t.Fatalf("FEDBAYES_REQUIRE_BROWSER=1 but: %v", err)
			}
			t.Skip(err)
		}
	}
	results := t.TempDir()
	if err := os.WriteFile(filepath.Join(results, "figures.json"), []byte(figuresSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"figures", "-png-scale", "1", "-html", results}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d; stderr: %s", got, stderr.String())
	}
	out := filepath.Join(results, "figures")
	for _, f := range []string{"acc.svg", "acc.png", "part.svg", "part.png", "figures.html"} {
		p := filepath.Join(out, f)
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
		if !strings.Contains(stdout.String(), p) {
			t.Errorf("stdout does not list %s:\n%s", p, stdout.String())
		}
	}
	svg, _ := os.ReadFile(filepath.Join(out, "part.svg"))
	if !strings.Contains(string(svg), `width="720"`) {
		t.Error(`part.svg is not the "wide" size (720 px)`)
	}
}

// TestFiguresOutputFlagAfterDir runs the issue's `fedbayes figures runs/ -o figs` (SVG only): the
// figures go to figs, not to runs/figures. It needs Node.js and ECharts (skipped without them).
func TestFiguresOutputFlagAfterDir(t *testing.T) {
	for _, find := range []func() (string, error){plots.FindNode, plots.EChartsDir} {
		if _, err := find(); err != nil {
			t.Skip(err)
		}
	}
	runs := t.TempDir()
	writeFile(t, filepath.Join(runs, "figures.json"), figuresSpec)
	figs := filepath.Join(t.TempDir(), "figs")
	var stdout, stderr bytes.Buffer
	if got := runMain([]string{"figures", runs, "-o", figs, "-no-png"}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d; stderr: %s", got, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(figs, "acc.svg")); err != nil {
		t.Errorf("no acc.svg in -o's folder: %v\nstdout: %s", err, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(runs, "figures")); !os.IsNotExist(err) {
		t.Errorf("figures were written next to the spec (%v)", err)
	}
}
