package results

import (
	"strings"
	"testing"
)

// healthRow is a row of round r with a spread and, when local >= 0, every health metric.
func healthRow(r int, spread, start, moved, clamped, local float64) Row {
	m := map[string]float64{Accuracy: 0.8, Spread: spread}
	if local >= 0 {
		m[SpreadStart], m[VarMoved], m[VarShift], m[VarClamped], m[VarLocalMoved], m[VarLocalShift], m[VarDisagreement] = start, moved, 0.01, clamped, local, local/10, local
	}
	return Row{Round: r, Metrics: m}
}

// TestCheckHealthMetrics: a row with some but not all health metrics, one without a spread, and
// shares outside [0, 1] are corrupt; rows with all or none pass.
func TestCheckHealthMetrics(t *testing.T) {
	full := healthRow(3, 1, 1, 0.5, 0, 0.2)
	partial := healthRow(3, 1, 1, 0.5, 0, 0.2)
	delete(partial.Metrics, VarClamped)
	noSpread := healthRow(3, 1, 1, 0.5, 0, 0.2)
	delete(noSpread.Metrics, Spread)
	badShare := healthRow(3, 1, 1, 1.5, 0, 0.2)
	badShift := healthRow(3, 1, 1, 0.5, 0, 0.2)
	badShift.Metrics[VarLocalShift] = -1
	for _, tc := range []struct {
		name string
		row  Row
		want string
	}{
		{"all", full, ""},
		{"none", healthRow(3, 1, 0, 0, 0, -1), ""},
		{"partial", partial, `records 6 of the 7 posterior-health metrics but not "var_clamped"`},
		{"no spread", noSpread, `without "spread"`},
		{"share", badShare, "var_moved 1.5 is outside [0, 1]"},
		{"shift", badShift, "var_local_shift -1 is outside"},
	} {
		err := tc.row.CheckValues()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: CheckValues = %v, want %q", tc.name, err, tc.want)
		}
		// The writer refuses a row with some but not all health metrics (a value out of range is
		// only refused on reading).
		err = tc.row.Validate()
		if wantValidate := tc.name == "partial" || tc.name == "no spread"; (err != nil) != wantValidate {
			t.Errorf("%s: Validate = %v, want an error %v", tc.name, err, wantValidate)
		}
	}
}
