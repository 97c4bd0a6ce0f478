package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// TestTableFileShowsDivergedRuns writes `fedbayes table -o` over the table fixture (gaa_w's seed 3
// diverged) plus a rule whose every run diverged, and checks that the file holds that rule as
// diverged and names the diverged seeds in its note (issue 36: the rule was left out, the seed named
// on standard error only, and the note said "2 to 3 seeds per cell"); a copied run folder is
// refused, naming both folders.
func TestTableFileShowsDivergedRuns(t *testing.T) {
	root := tableFixture(t)
	m := map[string]float64{"accuracy": 0.1, "nll": 9, "ece": 0.9, "tpr": 0.1}
	writeTableRun(t, root, "ppa", "fmnist", 1, m, results.Diverged)
	writeTableRun(t, root, "ppa", "fmnist", 2, m, results.Diverged)
	out := filepath.Join(t.TempDir(), "table.md")
	var stdout, stderr bytes.Buffer
	if st := runMain([]string{"table", "-rows", "rule", "-o", out, root}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, want := range []string{
		"| ppa | diverged | diverged | diverged |",
		"over 2 seeds per cell, diverged seeds left out.",
		`Left out of the means: gaa\_w: seed 3 diverged; ppa: every run diverged (seeds 1, 2).`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	// A copied run folder would count its seed twice: refused, naming both.
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "eaa-") && strings.HasSuffix(e.Name(), "seed1") {
			src = filepath.Join(root, e.Name())
		}
	}
	if src == "" {
		t.Fatalf("no eaa seed 1 run in %v", entries)
	}
	copyDir(t, src, src+".bak")
	stdout.Reset()
	stderr.Reset()
	if st := runMain([]string{"table", "-rows", "rule", root}, &stdout, &stderr); st == 0 ||
		!strings.Contains(stderr.String(), filepath.Base(src)+" and ") || !strings.Contains(stderr.String(), filepath.Base(src)+".bak both hold") {
		t.Errorf("a copied folder: status %d, stderr %s", st, stderr.String())
	}
}

// copyDir copies the regular files of src into a new directory dst (cp -r of a run folder).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
