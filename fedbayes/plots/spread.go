package plots

import (
	"fmt"

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
	// SE[r] is its standard error; empty for none. It is printed above the bar.
	SE []float64 `json:"se,omitempty"`
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

// LearnedSpread draws grouped bars of the learned spread per rule, one colour per group, with
// "± SE" printed above each bar when standard errors are given.
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
		if err := checkFinite(where+": se", g.SE...); err != nil {
			return fail("%v", err)
		}
		col := seriesColor(gi)
		data := make([]opts.BarData, len(g.Mean))
		for r, m := range g.Mean {
			if m < 0 || (d.LogY && m == 0) {
				return fail("%s: mean %g for rule %q must be positive", where, m, d.Rules[r])
			}
			data[r] = opts.BarData{Value: round6(m)}
			if len(g.SE) != 0 {
				if g.SE[r] < 0 {
					return fail("%s: standard error %g for rule %q is negative", where, g.SE[r], d.Rules[r])
				}
				data[r].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: fmt.Sprintf("±%.2g", g.SE[r])}
			}
		}
		bar.AddSeries(g.Name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: col}))
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
	return c.Styled(ScreenStyle, 0, 0)
}
