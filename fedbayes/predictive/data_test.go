package predictive

import (
	"testing"

	"fedbayes.dev/fedbayes/data"
)

// requireSklearn skips a test when the scikit-learn data sets (digits) are not installed.
func requireSklearn(t *testing.T) {
	t.Helper()
	for _, a := range data.Status(data.Dir()) {
		if a.Name == "digits" && a.Present {
			return
		}
	}
	t.Skipf("scikit-learn data not installed in %s (run `fedbayes data install`)", data.Dir())
}
