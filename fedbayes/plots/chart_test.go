package plots

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

func TestNewChartChecks(t *testing.T) {
	ok := map[string]any{"series": []any{}}
	for _, tc := range []struct {
		name          string
		chart         string
		option        map[string]any
		width, height int
		wantErr       string
	}{
		{"defaults", "a-b_c.1", ok, 0, 0, ""},
		{"bad name", "a/b", ok, 0, 0, "chart name"},
		{"empty name", "", ok, 0, 0, "chart name"},
		{"too small", "a", ok, 10, 300, "out of range"},
		{"nil option", "a", nil, 0, 0, "nil option"},
		{"js function", "a", map[string]any{"tooltip": map[string]any{"formatter": goEChartsFuncPrefix + "function(){}"}}, 0, 0, "option.tooltip.formatter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewChart(tc.chart, tc.option, tc.width, tc.height)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Width != DefaultWidth || c.Height != DefaultHeight {
				t.Errorf("size = %dx%d, want defaults", c.Width, c.Height)
			}
		})
	}
}

func TestFromGoECharts(t *testing.T) {
	line := charts.NewLine()
	line.SetXAxis([]string{"a", "b"}).AddSeries("s", []opts.LineData{{Value: 1.5}, {Value: 0}})
	c, err := FromGoECharts("line", line, 300, 200)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.OptionJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("OptionJSON is not JSON: %v", err)
	}
	s := seriesOf(t, c)
	if len(s) != 1 || s[0]["type"] != "line" || s[0]["name"] != "s" {
		t.Fatalf("series = %v", s)
	}
	// A zero value must survive (go-echarts uses omitempty on an interface field).
	if v := s[0]["data"].([]any)[1].(map[string]any)["value"]; v != 0.0 {
		t.Errorf("second value = %v, want 0", v)
	}

	nan := charts.NewLine()
	nan.AddSeries("s", []opts.LineData{{Value: math.NaN()}})
	if _, err := FromGoECharts("nan", nan, 0, 0); err == nil {
		t.Error("FromGoECharts accepted a NaN value")
	}
	fn := charts.NewLine()
	fn.SetGlobalOptions(charts.WithTooltipOpts(opts.Tooltip{Formatter: opts.FuncOpts("function(p){return p.name}")}))
	if _, err := FromGoECharts("fn", fn, 0, 0); err == nil || !strings.Contains(err.Error(), "JavaScript function") {
		t.Errorf("FromGoECharts with a JS formatter: error = %v", err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	c, err := NewChart("c", map[string]any{"title": map[string]any{"text": "x"}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Clone()
	if err != nil {
		t.Fatal(err)
	}
	d.Option["title"].(map[string]any)["text"] = "y"
	if c.Option["title"].(map[string]any)["text"] != "x" {
		t.Error("changing the clone changed the original")
	}
}

func TestStyledLayout(t *testing.T) {
	long := Curves{Title: "t", Series: nil}
	for i := 0; i < 8; i++ {
		long.Series = append(long.Series, SeedSeries{Name: strings.Repeat("n", 10) + string(rune('a'+i)), X: []float64{1, 2}, Runs: [][]float64{{1, 2}}})
	}
	c, err := LearningCurves("lc", long)
	if err != nil {
		t.Fatal(err)
	}
	narrow, err := c.Styled(Style{FontSize: 12}, ColumnFigure.Width, ColumnFigure.Height)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := c.Styled(Style{FontSize: 12}, 2000, 400)
	if err != nil {
		t.Fatal(err)
	}
	grid := func(c *Chart, k string) float64 { return c.Option["grid"].(map[string]any)[k].(float64) }
	// 8 long names need 4 rows at column width: the legend goes below the plot, in columns, and
	// the figure grows by its height; at 2000 px they fit in one row above the plot.
	if grid(narrow, "bottom") <= grid(wide, "bottom") || narrow.Height <= ColumnFigure.Height || wide.Height != 400 {
		t.Errorf("legend below: grid bottom %g (wide %g), height %d (asked %d)", grid(narrow, "bottom"), grid(wide, "bottom"), narrow.Height, ColumnFigure.Height)
	}
	plotNarrow := float64(narrow.Height) - grid(narrow, "top") - grid(narrow, "bottom")
	if plotNarrow < 0.6*float64(ColumnFigure.Height) {
		t.Errorf("plot height %g of a %d px figure: the legend takes too much", plotNarrow, ColumnFigure.Height)
	}
	if narrow.Width != ColumnFigure.Width || narrow.Option["animation"] != false {
		t.Errorf("styled chart: width %d, animation %v", narrow.Width, narrow.Option["animation"])
	}
	if got := narrow.Option["xAxis"].([]any)[0].(map[string]any)["axisLabel"].(map[string]any)["fontSize"]; got != 12.0 {
		t.Errorf("x axis label font size = %v, want 12", got)
	}
	if c.Width != DefaultWidth {
		t.Error("Styled changed the original chart")
	}
	if _, err := c.Styled(Style{}, 0, 0); err == nil {
		t.Error("Styled accepted font size 0")
	}
}

// A sweep of 12 settings: every series has its own colour-marker-dash look, the legend goes below
// the plot in aligned columns and the plot keeps most of the figure.
func TestTwelveSeriesLayout(t *testing.T) {
	var d Curves
	looks := map[Look]bool{}
	for i := 0; i < 12; i++ {
		d.Series = append(d.Series, SeedSeries{Name: fmt.Sprintf("vi-rule%02d-dirichlet", i), X: []float64{1, 2, 3},
			Runs: [][]float64{{0.5, 0.6, 0.7}, {0.52, 0.61, 0.69}}})
		looks[SeriesLook(i)] = true
	}
	if len(looks) != 12 {
		t.Errorf("%d distinct looks for 12 series", len(looks))
	}
	c, err := LearningCurves("sweep", d)
	if err != nil {
		t.Fatal(err)
	}
	fig, err := c.Styled(Style{FontSize: 12}, ColumnFigure.Width, ColumnFigure.Height)
	if err != nil {
		t.Fatal(err)
	}
	legend := fig.Option["legend"]
	if l, ok := legend.([]any); ok {
		legend = l[0]
	}
	lm := legend.(map[string]any)
	if lm["bottom"] == nil || lm["top"] != nil || lm["textStyle"].(map[string]any)["width"] == nil {
		t.Errorf("legend not below in columns: %v", lm)
	}
	g := fig.Option["grid"].(map[string]any)
	plot := float64(fig.Height) - g["top"].(float64) - g["bottom"].(float64)
	if plot < 0.6*float64(ColumnFigure.Height) {
		t.Errorf("plot height %g in a %d px figure", plot, fig.Height)
	}
	// Lines: colour, marker and dash per series, markers shown.
	seen := map[string]bool{}
	eachComponent(fig.Option, "series", func(s map[string]any) {
		if s["stack"] != nil {
			return
		}
		key := fmt.Sprint(s["lineStyle"].(map[string]any)["color"], s["symbol"], s["lineStyle"].(map[string]any)["type"])
		if seen[key] {
			t.Errorf("two lines look alike: %s", key)
		}
		seen[key] = true
		if s["showSymbol"] != true {
			t.Errorf("series %v hides its markers", s["name"])
		}
	})
	if len(seen) != 12 {
		t.Errorf("%d lines, want 12", len(seen))
	}
}
