package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/runinfo"
)

// testMeta returns a small meta with a spec that records the setting.
func testMeta(t testing.TB, setting string, labels map[string]string, seed int64) Meta {
	t.Helper()
	spec := map[string]any{"setting": setting, "rounds": 5, "lr": 0.01}
	m, err := NewMeta(setting, labels, seed, spec, runinfo.Info{Fedbayes: runinfo.Version, Backend: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// accRow is a row with accuracy and NLL.
func accRow(round int, acc, nll float64) Row {
	return Row{Round: round, Metrics: map[string]float64{Accuracy: acc, NLL: nll},
		Time: Timing{LocalSeconds: 1.5, AggregateSeconds: 0.25, EvalSeconds: 0.5}, BytesSent: 1000,
		Clients: []int{0, 1}, ClientWeights: []float64{0.25, 0.75}, ClientAccuracy: []float64{acc - 0.01, acc + 0.01}}
}

// writeRun writes a whole run under root and returns its directory. state "" leaves it incomplete.
func writeRun(t testing.TB, root, setting string, labels map[string]string, seed int64, rows []Row, state State) string {
	t.Helper()
	dir := filepath.Join(root, RunName(setting, seed))
	w, err := Create(dir, testMeta(t, setting, labels, seed))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	last := 0
	if len(rows) > 0 {
		last = rows[len(rows)-1].Round
	}
	switch state {
	case Completed:
		err = w.Complete(last)
	case Diverged:
		err = w.Diverge(last, "NaN loss")
	case Failed:
		err = w.Fail(last, os.ErrClosed)
	default:
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// tempFiles lists this package's temporary files anywhere under root.
func tempFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), tempMarker) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// wantErr checks that err is non-nil and mentions every fragment.
func wantErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error mentioning %q, got nil", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}
