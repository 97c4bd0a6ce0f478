package presets

import (
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/engine"
)

// requireDigits skips the test when scikit-learn's digits are not installed (`fedbayes data install`).
func requireDigits(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed (run `fedbayes data install`): %v", err)
	}
}

// expandPreset returns the preset name and its settings, failing the test when either cannot be made.
func expandPreset(t *testing.T, name string) (*engine.Spec, []engine.Setting) {
	t.Helper()
	s, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatalf("preset %s does not validate: %v", name, err)
	}
	return s, settings
}
