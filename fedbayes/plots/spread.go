package plots

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// SpreadGroup is one bar per rule for one setting (dataset, partition): the mean of the learned
// spread over repetitions and its standard error.
type SpreadGroup struct {
	// Name is the legend entry (e.g. "FMNIST").
	Name string `json:"name"`
	// Mean[r] is the mean spread under rule r, positive.
	Mean []float64 `json:"mean"`
	// SE[r] is its standard error (stats.Summary.SE); empty for none. It is drawn as an error bar
	// (mean ± SE); NaN, the standard error of a single seed, is undefined and draws no error bar.
	SE StandardErrors `json:"se,omitempty"`
}

// StandardErrors are standard errors of the mean, NaN where undefined (one seed; see
// stats.Summarize). In JSON an undefined one is null, as JSON has no NaN.
type StandardErrors []float64

// MarshalJSON writes the standard errors as a JSON array, null for NaN.
func (se StandardErrors) MarshalJSON() ([]byte, error) {
	out := make([]*float64, len(se))
	for i := range se {
		if !math.IsNaN(se[i]) {
			out[i] = &se[i]
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads a JSON array of numbers, null for an undefined standard error (NaN).
func (se *StandardErrors) UnmarshalJSON(data []byte) error {
	var in []*float64
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	if in == nil {
		*se = nil
		return nil
	}
	out := make(StandardErrors, len(in))
	for i, v := range in {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	*se = out
	return nil
}

// Spread is the data of the learned-spread chart: the spread of the final global posterior per
// aggregation rule (Ozer et al. (2022), Table 4: the Euclidean norm of all posterior standard
// deviations, mean and standard error over repetitions).
type Spread struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// YLabel names the spread measure (default "‖σ‖₂").
	YLabel string `json:"y_label,omitempty"`
	// Rules are the categories on the x axis.
	Rules []string `json:"rules"`
	// Groups holds one bar series per setting.
	Groups []SpreadGroup `json:"groups"`
	// LogY draws the spread on a log axis (spreads of different rules differ by orders of
	// magnitude).
	LogY bool `json:"log_y,omitempty"`
}

// LearnedSpread draws grouped bars of the learned spread per rule, one colour per group, with an
// error bar of ± one standard error on each bar whose standard error is given and defined (not NaN:
// a rule of one seed has no standard error and no error bar). Bars start at the
// axis minimum: 0 on a linear axis, the power of ten below the smallest lower error on a log axis.
func LearnedSpread(name string, d Spread) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: learned spread %q: %s", name, fmt.Sprintf(format, args...))
	}
	if len(d.Rules) == 0 {
		return fail("no rules")
	}
	if len(d.Groups) == 0 {
		return fail("no groups")
	}
	bar := charts.NewBar()
	bar.SetXAxis(d.Rules)
	n := len(d.Groups)
	// Bars of a rule share 70% of its band, side by side (no gap), so that the error bars can be
	// placed on them: group g of rule r is centred at r - 0.35 + w(g + 1/2) on the band axis.
	w := 0.7 / float64(n)
	lowest := math.Inf(1)
	var whiskers []any
	for gi, g := range d.Groups {
		where := fmt.Sprintf("group %d (%q)", gi, g.Name)
		if g.Name == "" {
			return fail("group %d has no name", gi)
		}
		if len(g.Mean) != len(d.Rules) {
			return fail("%s: %d means for %d rules", where, len(g.Mean), len(d.Rules))
		}
		if len(g.SE) != 0 && len(g.SE) != len(d.Rules) {
			return fail("%s: %d standard errors for %d rules", where, len(g.SE), len(d.Rules))
		}
		if err := checkFinite(where+": mean", g.Mean...); err != nil {
			return fail("%v", err)
		}
		for r, se := range g.SE {
			if math.IsInf(se, 0) {
				return fail("%s: standard error %g for rule %q is infinite", where, se, d.Rules[r])
			}
		}
		col := seriesColor(gi)
		data := make([]opts.BarData, len(g.Mean))
		var segs []any
		for r, m := range g.Mean {
			if m < 0 || (d.LogY && m == 0) {
				return fail("%s: mean %g for rule %q must be positive", where, m, d.Rules[r])
			}
			data[r] = opts.BarData{Value: round6(m)}
			lowest = math.Min(lowest, m)
			if len(g.SE) == 0 {
				continue
			}
			se := g.SE[r]
			if math.IsNaN(se) { // undefined (one seed): no error bar
				continue
			}
			if se < 0 {
				return fail("%s: standard error %g for rule %q is negative", where, se, d.Rules[r])
			}
			lo := m - se
			if d.LogY && lo <= 0 {
				lo = m / 10 // an error reaching 0 is cut at a tenth of the mean on a log axis
			}
			lowest = math.Min(lowest, lo)
			x := round6(float64(r) - 0.35 + w*(float64(gi)+0.5))
			segs = append(segs, []any{x, round6(lo)}, []any{x, round6(m + se)}, []any{x, "-"})
		}
		bar.AddSeries(g.Name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: col}),
			charts.WithBarChartOpts(opts.BarChart{BarWidth: fmt.Sprintf("%.4g%%", 100*w), BarGap: "0%"}))
		if segs != nil {
			// A line through (x, mean-SE), (x, mean+SE), then a gap: one vertical error bar per rule,
			// with a flat cap at both ends, on a hidden value axis aligned with the rules' bands.
			whiskers = append(whiskers, map[string]any{
				"type": "line", "name": g.Name, "xAxisIndex": 1, "data": segs, "connectNulls": false,
				"symbol": "rect", "symbolSize": []any{8, 1.5}, "showSymbol": true,
				"lineStyle": map[string]any{"color": "#222222", "width": 1.2},
				"itemStyle": map[string]any{"color": "#222222"},
				"tooltip":   map[string]any{"show": false}, "emphasis": map[string]any{"disabled": true},
				"z": 3, "animation": false,
			})
		}
	}
	yLabel := d.YLabel
	if yLabel == "" {
		yLabel = "‖σ‖₂"
	}
	y := opts.YAxis{Type: "value", Name: yLabel}
	if d.LogY {
		y.Type = "log"
	}
	bar.SetGlobalOptions(
		charts.WithTitleOpts(opts.Title{Title: d.Title}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "aggregation rule"}),
		charts.WithYAxisOpts(y),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
	)
	c, err := FromGoECharts(name, bar, 0, 0)
	if err != nil {
		return nil, err
	}
	if d.LogY {
		// Bars on a log axis start at its startValue (1 by default, so that small spreads hung
		// down from 1): start them, and the axis, at the power of ten below the lowest value.
		floor := math.Pow(10, math.Floor(math.Log10(lowest)))
		eachComponent(c.Option, "yAxis", func(a map[string]any) { a["min"], a["startValue"] = floor, floor })
	}
	if whiskers != nil {
		eachComponent(c.Option, "xAxis", func(a map[string]any) {
			c.Option["xAxis"] = []any{a, map[string]any{"type": "value", "show": false,
				"min": -0.5, "max": float64(len(d.Rules)) - 0.5}}
		})
		series, _ := c.Option["series"].([]any)
		c.Option["series"] = append(series, whiskers...)
	}
	return c.Styled(ScreenStyle, 0, 0)
}
