package plots

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/stats"
	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// SeedSeries is one line of a metric-versus-x chart: the metric of every seed (repetition) at
// every x. Runs[s][i] is the value of seed s at X[i]; all seeds share X.
type SeedSeries struct {
	// Name is the legend entry, typically the aggregation rule or method.
	Name string `json:"name"`
	// X holds the x values (round, fraction retained, number of layers, h, beta), increasing.
	X []float64 `json:"x"`
	// Runs holds one row per seed, each as long as X.
	Runs [][]float64 `json:"runs"`
}

// Curves is the data of a metric-versus-x chart: one line per series at the mean over seeds, with
// a band of plus or minus one standard error of the mean (MeanSE) when there are two seeds or more;
// a series of one seed has no standard error and is drawn without a band.
type Curves struct {
	// Title is shown above the chart; empty for none. It is wrapped or shortened to fit the width; a
	// shortened title is given in full by the caption.
	Title string `json:"title,omitempty"`
	// Caption is the figure's provenance (data, budget, seeds, the command that made it), printed
	// under the chart and beside a static figure (Chart.Caption); empty for none.
	Caption string `json:"caption,omitempty"`
	// XLabel and YLabel name the axes; builders supply defaults.
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	// LogX draws the x axis on a log scale (all x must be positive).
	LogX bool `json:"log_x,omitempty"`
	// Series holds the lines.
	Series []SeedSeries `json:"series"`
	// Looks fixes the look (SeriesLook index) of the series it names, so that the panels of a
	// small multiple (SmallMultiples) draw a series alike; the others take their look by the method
	// they are of (IdentityLooks), or, where a fixed one has it, the first look left free. Empty:
	// every series takes its method's look.
	Looks map[string]int `json:"looks,omitempty"`
	// LogY draws the y axis on a log scale: every mean must be positive, and a series whose band
	// would reach 0 or below is drawn without its band.
	LogY bool `json:"log_y,omitempty"`
	// YMin and YMax fix the y axis' range (a share: 0 and 1); nil lets ECharts choose.
	YMin *float64 `json:"y_min,omitempty"`
	YMax *float64 `json:"y_max,omitempty"`
}

// MeanSE returns the mean over seeds at each x and the standard error of that mean, by
// stats.Summarize (the one convention of the repository): s/sqrt(n) with s the sample standard
// deviation (n-1 in the denominator), and NaN for a single seed, where it is undefined (a chart
// draws no band for it, a table prints "no standard error"). Every value must be finite.
func MeanSE(runs [][]float64) (mean, se []float64, err error) {
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("no runs")
	}
	m := len(runs[0])
	for s, r := range runs {
		if len(r) != m {
			return nil, nil, fmt.Errorf("run %d has %d values, run 0 has %d", s, len(r), m)
		}
		if err := checkFinite(fmt.Sprintf("run %d", s), r...); err != nil {
			return nil, nil, err
		}
	}
	mean, se = make([]float64, m), make([]float64, m)
	at := make([]float64, len(runs))
	for i := 0; i < m; i++ {
		for s, r := range runs {
			at[s] = r[i]
		}
		sum, err := stats.Summarize(at)
		if err != nil {
			return nil, nil, err
		}
		mean[i], se[i] = sum.Mean, sum.SE
	}
	return mean, se, nil
}

// curvesSpec tells buildCurves the defaults and checks of one kind of metric-versus-x chart.
type curvesSpec struct {
	kind           string
	xLabel, yLabel string
	xMin, xMax     *float64 // fixed axis range, if any
	integerX       bool     // x must be whole numbers (rounds, layer counts)
	check          func(x float64) error
}

func ptr(x float64) *float64 { return &x }

// buildCurves validates d and draws it as a go-echarts line chart on a value x axis.
func buildCurves(name string, d Curves, spec curvesSpec) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: %s %q: %s", spec.kind, name, fmt.Sprintf(format, args...))
	}
	if len(d.Series) == 0 {
		return fail("no series")
	}
	xLabel, yLabel := d.XLabel, d.YLabel
	if xLabel == "" {
		xLabel = spec.xLabel
	}
	if yLabel == "" {
		yLabel = spec.yLabel
	}
	line := charts.NewLine()
	seen := seriesNames{}
	// extra holds, per series added to line in order, the ECharts fields go-echarts has no option
	// for (drawing order, dash offset), merged into the option below.
	var extra []map[string]any
	var drawnLabels []string
	var drawnX, drawnMeans [][]float64
	names := make([]string, len(d.Series))
	for i, s := range d.Series {
		names[i] = s.Name
	}
	// Legends list the series in the tables' order (PaperOrder), under their display names.
	lookOf, taken := map[string]int{}, map[int]bool{}
	for n, i := range d.Looks {
		if i < 0 {
			return fail("look %d of %q is negative", i, n)
		}
		lookOf[n], taken[i] = i, true
	}
	identity := IdentityLooks(names)
	for _, n := range names {
		if _, fixed := lookOf[n]; !fixed && !taken[identity[n]] {
			lookOf[n], taken[identity[n]] = identity[n], true
		}
	}
	if d.YMin != nil && d.YMax != nil && !(*d.YMin < *d.YMax) {
		return fail("y range [%g, %g] is empty", *d.YMin, *d.YMax)
	}
	if d.LogY && d.YMin != nil && *d.YMin <= 0 {
		return fail("y_min %g must be positive on a log axis", *d.YMin)
	}
	next := 0
	for _, si := range PaperOrder(names) {
		s := d.Series[si]
		where := fmt.Sprintf("series %d (%q)", si, s.Name)
		if err := seen.add(si, s.Name); err != nil {
			return fail("%v", err)
		}
		if len(s.X) == 0 {
			return fail("%s: no x values", where)
		}
		if err := checkFinite(where+": x", s.X...); err != nil {
			return fail("%v", err)
		}
		for i, x := range s.X {
			if i > 0 && x <= s.X[i-1] {
				return fail("%s: x must increase, x[%d]=%g after x[%d]=%g", where, i, x, i-1, s.X[i-1])
			}
			if spec.integerX && x != math.Trunc(x) {
				return fail("%s: x[%d]=%g must be a whole number", where, i, x)
			}
			if d.LogX && x <= 0 {
				return fail("%s: x[%d]=%g must be positive on a log axis", where, i, x)
			}
			if spec.check != nil {
				if err := spec.check(x); err != nil {
					return fail("%s: x[%d]: %v", where, i, err)
				}
			}
		}
		if len(s.Runs) == 0 {
			return fail("%s: no runs", where)
		}
		for r, run := range s.Runs {
			if len(run) != len(s.X) {
				return fail("%s: run %d has %d values for %d x values", where, r, len(run), len(s.X))
			}
		}
		mean, se, err := MeanSE(s.Runs)
		if err != nil {
			return fail("%s: %v", where, err)
		}
		if d.LogY {
			for i, m := range mean {
				if m <= 0 {
					return fail("%s: mean %g at x=%g must be positive on a log axis", where, m, s.X[i])
				}
			}
		}
		li, ok := lookOf[s.Name]
		if !ok {
			for taken[next] {
				next++
			}
			li, taken[next] = next, true
		}
		look := SeriesLook(li)
		col := look.Color
		label := DisplayName(s.Name)
		drawnLabels, drawnX, drawnMeans = append(drawnLabels, label), append(drawnX, s.X), append(drawnMeans, mean)
		pts := make([]opts.LineData, len(s.X))
		for i, x := range s.X {
			pts[i] = opts.LineData{Value: []float64{x, mean[i]}}
		}
		// The line comes first among the series of its name, so that its legend entry shows its
		// colour, dash and marker (ECharts draws an entry from the first series of the name).
		// Markers always show (ECharts thins them on long curves), so a curve under another one
		// still shows its own; a single point is drawn larger.
		size := look.MarkerSize
		if len(s.X) == 1 {
			size += 3
		}
		line.AddSeries(label, pts,
			charts.WithLineChartOpts(opts.LineChart{Symbol: look.Marker, SymbolSize: size, ShowSymbol: opts.Bool(true)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: col, Width: 2}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: col}),
		)
		extra = append(extra, map[string]any{"z": look.Z, "dashOffset": look.DashOffset, "type": LineType(look.Dash)})
		band := !math.IsNaN(se[0]) // one seed: the standard error is undefined, no band
		for i := range mean {
			band = band && (!d.LogY || mean[i]-se[i] > 0) // a log axis has no place for a lower edge <= 0
		}
		if band {
			// The band is two stacked series: an invisible lower edge and the band height on top
			// of it, filled. They share the series name, so the legend toggles them with the line;
			// they are drawn beneath every line (z 1).
			stack := fmt.Sprintf("band%d", si)
			lower, height := make([]opts.LineData, len(s.X)), make([]opts.LineData, len(s.X))
			for i, x := range s.X {
				lower[i] = opts.LineData{Value: []float64{x, mean[i] - se[i]}}
				height[i] = opts.LineData{Value: []float64{x, 2 * se[i]}}
			}
			bandOpts := func(area bool) []charts.SeriesOpts {
				o := []charts.SeriesOpts{
					charts.WithLineChartOpts(opts.LineChart{Stack: stack, Symbol: "none", ShowSymbol: opts.Bool(false)}),
					charts.WithLineStyleOpts(opts.LineStyle{Opacity: opts.Float(0), Color: col}),
					charts.WithItemStyleOpts(opts.ItemStyle{Color: col}),
					charts.WithSeriesAnimation(false),
				}
				if area {
					o = append(o, charts.WithAreaStyleOpts(opts.AreaStyle{Color: col, Opacity: opts.Float(0.18)}))
				}
				return o
			}
			line.AddSeries(label, lower, bandOpts(false)...)
			line.AddSeries(label, height, bandOpts(true)...)
			extra = append(extra, map[string]any{"z": 1}, map[string]any{"z": 1})
		}
	}
	xAxis := opts.XAxis{Type: "value", Name: xLabel, Scale: opts.Bool(true)}
	if d.LogX {
		xAxis.Type = "log"
	}
	if spec.xMin != nil {
		xAxis.Min = *spec.xMin
	}
	if spec.xMax != nil {
		xAxis.Max = *spec.xMax
	}
	if spec.integerX {
		xAxis.MinInterval = 1
	}
	yAxis := opts.YAxis{Type: "value", Name: yLabel, Scale: opts.Bool(true)}
	if d.LogY {
		yAxis.Type = "log"
	}
	if d.YMin != nil {
		yAxis.Min = *d.YMin
	}
	if d.YMax != nil {
		yAxis.Max = *d.YMax
	}
	line.SetGlobalOptions(
		charts.WithTitleOpts(opts.Title{Title: d.Title}),
		charts.WithXAxisOpts(xAxis),
		charts.WithYAxisOpts(yAxis),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
	)
	c, err := FromGoECharts(name, line, 0, 0)
	if err != nil {
		return nil, err
	}
	// go-echarts has no field for the stacking strategy: stack the band on the lower edge whatever
	// its sign (ECharts' default only stacks values of the same sign).
	k := 0
	eachComponent(c.Option, "series", func(s map[string]any) {
		if k < len(extra) {
			if z, ok := extra[k]["z"]; ok {
				s["z"] = z
			}
			if off, ok := extra[k]["dashOffset"].(float64); ok && off != 0 {
				sub(s, "lineStyle")["dashOffset"] = off
			}
			if t, ok := extra[k]["type"]; ok {
				sub(s, "lineStyle")["type"] = t
			}
		}
		k++
		if s["stack"] != nil {
			s["stackStrategy"] = "all"
			s["tooltip"] = map[string]any{"show": false}
			s["emphasis"] = map[string]any{"disabled": true}
		}
	})
	c.Caption = d.Caption
	if note := curveCoincidence(drawnLabels, drawnX, drawnMeans); note != "" {
		c.Caption = strings.TrimSpace(c.Caption + " " + note)
	}
	return c.Styled(ScreenStyle, 0, 0)
}

// SmallMultiples draws one chart per panel with build (LearningCurves, VersusHeterogeneity, ...):
// a sweep split by partition, metric or weighting into panels instead of one crowded chart. A series
// name has the same colour, marker and dash in every panel (Curves.Looks, in the papers' order of
// all the panels' names). Chart i is named NAME-i. Show them side by side (notebook.Row) or write
// them as figures.
func SmallMultiples(name string, build func(string, Curves) (*Chart, error), panels ...Curves) ([]*Chart, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("plots: small multiples %q: no panels", name)
	}
	looks := PanelLooks(panels...)
	out := make([]*Chart, len(panels))
	for i, p := range panels {
		p.Looks = looks
		c, err := build(fmt.Sprintf("%s-%d", name, i), p)
		if err != nil {
			return nil, fmt.Errorf("plots: small multiples %q, panel %d: %w", name, i, err)
		}
		out[i] = c
	}
	return out, nil
}

// PanelLooks returns the looks (SeriesLook indices) of every series name of the panels, by the
// method each is of (IdentityLooks over all their names, in the papers' order), for Curves.Looks
// of figures that belong together: a name of no known method is drawn alike in every panel too.
func PanelLooks(panels ...Curves) map[string]int {
	var names []string
	for _, p := range panels {
		for _, s := range p.Series {
			if !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	ordered := make([]string, len(names))
	for i, j := range PaperOrder(names) {
		ordered[i] = names[j]
	}
	return IdentityLooks(ordered)
}

// LearningCurves draws a metric per communication round, one line per rule at the mean over
// seeds with a band of plus or minus one standard error. X holds round numbers.
func LearningCurves(name string, d Curves) (*Chart, error) {
	return buildCurves(name, d, curvesSpec{kind: "learning curves", xLabel: "round", yLabel: "accuracy", integerX: true})
}

// Retention draws a metric against the fraction of test data retained when the most uncertain
// predictions are set aside (Fischer et al. (2024), Figs. 2, 4, 6 and 7). X holds fractions in
// (0, 1].
func Retention(name string, d Curves) (*Chart, error) {
	return buildCurves(name, d, curvesSpec{
		kind: "retention", xLabel: "fraction of data retained", yLabel: "accuracy", xMax: ptr(1),
		check: func(x float64) error {
			if x <= 0 || x > 1 {
				return fmt.Errorf("fraction %g not in (0, 1]", x)
			}
			return nil
		},
	})
}

// VersusLayers draws a metric against the number n of Bayesian layers at the end of a hybrid
// network (Jamoussi et al., BA-BFL, Figs. 3-5). X holds n = 0, 1, 2, ...
func VersusLayers(name string, d Curves) (*Chart, error) {
	return buildCurves(name, d, curvesSpec{
		kind: "metric versus layers", xLabel: "Bayesian layers n", yLabel: "accuracy", integerX: true,
		check: func(x float64) error {
			if x < 0 {
				return fmt.Errorf("layer count %g is negative", x)
			}
			return nil
		},
	})
}

// VersusHeterogeneity draws a metric against the heterogeneity parameter h of the client
// partition (Hasan (2023), Figs. 3.1, 4.1 and 4.2). X holds h values.
func VersusHeterogeneity(name string, d Curves) (*Chart, error) {
	return buildCurves(name, d, curvesSpec{kind: "metric versus heterogeneity", xLabel: "heterogeneity h", yLabel: "accuracy"})
}

// NLLVersusBeta draws the test negative log-likelihood against beta of beta-Predictive Bayes
// (Hasan (2023), Eqs. 4.8-4.11). X holds beta values; set LogX for a log axis.
func NLLVersusBeta(name string, d Curves) (*Chart, error) {
	return buildCurves(name, d, curvesSpec{kind: "NLL versus beta", xLabel: "β", yLabel: "NLL"})
}
