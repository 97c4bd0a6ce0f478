package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/runinfo"
)

// releaseHeading is a release's heading in CHANGELOG.md: "## v0.1.0 (2026-11-27)".
var releaseHeading = regexp.MustCompile(`^## (v[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?) \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$`)

// newestRelease returns the version of the first release heading of the changelog at path (the
// newest: releases are listed newest first, under "## Unreleased").
func newestRelease(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := releaseHeading.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
		if line := sc.Text(); strings.HasPrefix(line, "## ") && line != "## Unreleased" {
			t.Fatalf("%s: heading %q is neither \"## Unreleased\" nor a release (\"## vX.Y.Z (YYYY-MM-DD)\")", path, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no release heading", path)
	return ""
}

// TestVersionIsTheNewestRelease checks runinfo.Version, the release every build reports, against
// the newest release heading of the repository's CHANGELOG.md, and that `fedbayes version` prints it
// first.
func TestVersionIsTheNewestRelease(t *testing.T) {
	changelog := filepath.Join("..", "..", "..", "CHANGELOG.md")
	if want := newestRelease(t, changelog); runinfo.Version != want {
		t.Errorf("runinfo.Version is %q, but the newest release of %s is %q: raise the constant with the release's heading", runinfo.Version, changelog, want)
	}
	var out bytes.Buffer
	if err := runVersion(nil, &out); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(out.String(), "\n"); first != "fedbayes "+runinfo.Version {
		t.Errorf("fedbayes version begins %q, want %q", first, "fedbayes "+runinfo.Version)
	}
}

// TestNewestRelease checks the heading parser on a hand-written changelog: the first release under
// Unreleased, whatever follows.
func TestNewestRelease(t *testing.T) {
	path := filepath.Join(t.TempDir(), "CHANGELOG.md")
	writeFile(t, path, "# Changelog\n\nIntro.\n\n## Unreleased\n\n### Fixes\n- a fix\n\n## v0.2.0 (2027-01-02)\n\n## v0.1.0 (2026-11-27)\n")
	if got := newestRelease(t, path); got != "v0.2.0" {
		t.Errorf("newestRelease = %q, want v0.2.0", got)
	}
}
