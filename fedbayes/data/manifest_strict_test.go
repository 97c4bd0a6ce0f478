package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/internal/strictjson/strictjsontest"
)

// TestReadManifestStrict: every hostile variant of a valid manifest (strictjsontest.Variants) is
// refused by ReadManifest with the manifest's path and the problem.
func TestReadManifestStrict(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Folders: map[string]ManifestEntry{"sklearn": {Package: "python3-sklearn", Version: "1.2", Installed: "2026-01-01T00:00:00Z"}}}
	if err := m.write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(dir); err != nil {
		t.Fatalf("the valid manifest: %v", err)
	}
	path := filepath.Join(dir, ManifestFile)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	variants, err := strictjsontest.Variants(orig)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range variants {
		if err := os.WriteFile(path, v.Doc, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadManifest(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), v.Want) {
			t.Errorf("%s: %v; want an error naming %s and %q", v.Name, err, path, v.Want)
		}
	}
}
