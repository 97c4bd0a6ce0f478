package plots

import (
	"strings"
	"testing"
)

// TestCurveCoincidence checks that a curve figure's caption names the series drawn on top of each
// other (EAA, AALV and PPA with frozen variances give the same accuracies) and only those: a curve
// that differs by 1e-3 of the range, or has other x values, is not named.
func TestCurveCoincidence(t *testing.T) {
	x := []float64{1, 2, 3}
	series := []SeedSeries{
		{Name: "eaa", X: x, Runs: [][]float64{{0.5, 0.6, 0.7}}},
		{Name: "gaa", X: x, Runs: [][]float64{{0.4, 0.5, 0.6}}},
		{Name: "aalv", X: x, Runs: [][]float64{{0.5, 0.6, 0.7}}},
		{Name: "ppa", X: x, Runs: [][]float64{{0.5, 0.6, 0.7 + 1e-9}}},
		{Name: "cf", X: x, Runs: [][]float64{{0.4, 0.5, 0.6003}}},
		{Name: "lp", X: []float64{1, 2, 4}, Runs: [][]float64{{0.5, 0.6, 0.7}}},
	}
	c, err := LearningCurves("lc", Curves{Caption: "Budget.", Series: series})
	if err != nil {
		t.Fatal(err)
	}
	want := "Budget. Drawn on top of each other (the same means at every point, to 1e-06 of the values drawn): EAA, AALV and PPA."
	if c.Caption != want {
		t.Errorf("caption %q, want %q", c.Caption, want)
	}
	for _, name := range []string{"GAA", "CF", "LP"} {
		if strings.Contains(c.Caption[len("Budget."):], name) {
			t.Errorf("caption names %s, which is drawn apart", name)
		}
	}
}
