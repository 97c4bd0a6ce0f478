package plots

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// ReliabilityBin is one confidence bin of a reliability diagram.
type ReliabilityBin struct {
	// Confidence is the mean top-class confidence of the examples in the bin, in [0, 1].
	Confidence float64 `json:"confidence"`
	// Accuracy is the fraction of those examples classified correctly, in [0, 1].
	Accuracy float64 `json:"accuracy"`
	// Count is the number of examples in the bin; empty bins are not drawn.
	Count int `json:"count"`
}

// ReliabilitySeries is the reliability curve of one model or rule.
type ReliabilitySeries struct {
	// Name is the legend entry.
	Name string `json:"name"`
	// Bins are the confidence bins, in increasing confidence.
	Bins []ReliabilityBin `json:"bins"`
	// ECE, when set, is shown in the legend as "NAME (ECE 0.031)".
	ECE *float64 `json:"ece,omitempty"`
}

// Reliability is the data of a reliability diagram: accuracy against confidence per bin, one
// curve per series, with the diagonal of perfect calibration.
type Reliability struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// Series holds the curves.
	Series []ReliabilitySeries `json:"series"`
}

// ReliabilityDiagram draws accuracy against mean confidence of each non-empty bin for each
// series, over the dashed diagonal of perfect calibration; the gap to the diagonal, weighted by
// bin counts, is the expected calibration error.
func ReliabilityDiagram(name string, d Reliability) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: reliability diagram %q: %s", name, fmt.Sprintf(format, args...))
	}
	if len(d.Series) == 0 {
		return fail("no series")
	}
	line := charts.NewLine()
	line.AddSeries("perfect calibration", []opts.LineData{{Value: []float64{0, 0}}, {Value: []float64{1, 1}}},
		charts.WithLineChartOpts(opts.LineChart{Symbol: "none", ShowSymbol: opts.Bool(false)}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: "#888888", Width: 1, Type: "dashed"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#888888"}))
	seen := seriesNames{}
	for si, s := range d.Series {
		where := fmt.Sprintf("series %d (%q)", si, s.Name)
		if err := seen.add(si, s.Name); err != nil {
			return fail("%v", err)
		}
		if len(s.Bins) == 0 {
			return fail("%s: no bins", where)
		}
		var pts []opts.LineData
		for b, bin := range s.Bins {
			if err := checkFinite(fmt.Sprintf("%s: bin %d confidence/accuracy", where, b), bin.Confidence, bin.Accuracy); err != nil {
				return fail("%v", err)
			}
			if bin.Count < 0 {
				return fail("%s: bin %d count %d is negative", where, b, bin.Count)
			}
			if bin.Confidence < 0 || bin.Confidence > 1 || bin.Accuracy < 0 || bin.Accuracy > 1 {
				return fail("%s: bin %d confidence %g / accuracy %g not in [0, 1]", where, b, bin.Confidence, bin.Accuracy)
			}
			if b > 0 && bin.Count > 0 && len(pts) > 0 && bin.Confidence < pts[len(pts)-1].Value.([]float64)[0] {
				return fail("%s: bin %d confidence %g is below the previous bin's", where, b, bin.Confidence)
			}
			if bin.Count > 0 {
				pts = append(pts, opts.LineData{Value: []float64{bin.Confidence, bin.Accuracy}})
			}
		}
		if len(pts) == 0 {
			return fail("%s: every bin is empty", where)
		}
		label := s.Name
		if s.ECE != nil {
			if err := checkFinite(where+": ECE", *s.ECE); err != nil {
				return fail("%v", err)
			}
			label = fmt.Sprintf("%s (ECE %.3f)", s.Name, *s.ECE)
		}
		col := seriesColor(si)
		line.AddSeries(label, pts,
			charts.WithLineChartOpts(opts.LineChart{Symbol: "circle", SymbolSize: 5, ShowSymbol: opts.Bool(true)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: col, Width: 2}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: col}))
	}
	line.SetGlobalOptions(
		charts.WithTitleOpts(opts.Title{Title: d.Title}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "confidence", Min: 0, Max: 1}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "accuracy", Min: 0, Max: 1}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
	)
	c, err := FromGoECharts(name, line, 0, 0)
	if err != nil {
		return nil, err
	}
	return c.Styled(ScreenStyle, 0, 0)
}
