package notebook

import (
	"regexp"
	"strconv"
	"testing"

	"fedbayes.dev/fedbayes/plots"
)

// TestHalfWidthChartsFitARow checks that Row lays two HalfWidth charts side by side in Notebook 6's
// output area at a 1280-pixel window: their widths and Row's gap, read from the HTML it shows, fit
// in OutputWidth.
func TestHalfWidthChartsFitARow(t *testing.T) {
	var charts []*plots.Chart
	for _, name := range []string{"a", "b"} {
		c, err := plots.LearningCurves(name, plots.Curves{Title: name, YLabel: "accuracy",
			Series: []plots.SeedSeries{{Name: "GAA", X: []float64{1, 2}, Runs: [][]float64{{0.5, 0.6}}}}})
		if err != nil {
			t.Fatal(err)
		}
		if c, err = c.Styled(plots.ScreenStyle, HalfWidth, 320); err != nil {
			t.Fatal(err)
		}
		charts = append(charts, c)
	}
	h, err := RowHTML(charts...)
	if err != nil {
		t.Fatal(err)
	}
	gap := regexp.MustCompile(`display:flex; flex-wrap:wrap; gap:(\d+)px`).FindStringSubmatch(h)
	if gap == nil {
		t.Fatalf("Row's HTML has no flex row with a gap: %.200s", h)
	}
	g, _ := strconv.Atoi(gap[1])
	widths := regexp.MustCompile(`class="fedbayes-chart" style="width:(\d+)px`).FindAllStringSubmatch(h, -1)
	total := g * (len(widths) - 1)
	for _, w := range widths {
		n, _ := strconv.Atoi(w[1])
		total += n
	}
	if len(widths) != 2 || total > OutputWidth {
		t.Errorf("two charts of HalfWidth %d take %d px with Row's gap of %d px (%d charts), more than Notebook 6's %d px",
			HalfWidth, total, g, len(widths), OutputWidth)
	}
}
