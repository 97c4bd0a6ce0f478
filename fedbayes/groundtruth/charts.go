package groundtruth

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/plots"
)

// MainRules returns a result's rules the charts draw: the size-weighted rules and the unweighted
// ones (Conflation, DWC, and the sample-based baselines when they gave a posterior), as in the
// findings page.
func (r *Result) MainRules() []Scored {
	var out []Scored
	for _, s := range r.Rules {
		if s.Weighting != Equal && s.Failed == "" {
			out = append(out, s)
		}
	}
	return out
}

// finiteOrNil returns v, or nil (a gap in an ECharts series) when it is not finite or not positive
// (log axes).
func finiteOrNil(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return nil
	}
	return v
}

// DistanceChart draws each rule's KL(p || q), KL(q || p) and W2 to the exact posterior as bars on
// a log axis, with the mean-field floors first. The bars start at the power of ten below the
// smallest value (on a log axis they would hang from 1, so that values below 1 looked negative);
// a distance that is infinite (FedAvg's KL: a point mass) has no bar, and the caption says so.
func DistanceChart(name string, r *Result) (*plots.Chart, error) {
	rows := append(append([]Scored(nil), r.References...), r.MainRules()...)
	labels := make([]string, len(rows))
	klPQ := make([]any, len(rows))
	klQP := make([]any, len(rows))
	w2 := make([]any, len(rows))
	lowest := math.Inf(1)
	var infinite []string
	for i, s := range rows {
		labels[i] = barLabel(s.Label)
		klPQ[i] = finiteOrNil(float64(s.Distances.KLFromTruth))
		klQP[i] = finiteOrNil(float64(s.Distances.KLToTruth))
		w2[i] = finiteOrNil(s.Distances.W2)
		for _, v := range []any{klPQ[i], klQP[i], w2[i]} {
			if f, ok := v.(float64); ok {
				lowest = math.Min(lowest, f)
			}
		}
		if klPQ[i] == nil || klQP[i] == nil {
			infinite = append(infinite, s.Label)
		}
	}
	bar := func(n string, data []any, i int) map[string]any {
		return map[string]any{"name": n, "type": "bar", "data": data, "itemStyle": map[string]any{"color": plots.Palette[i]}}
	}
	y := map[string]any{"type": "log", "name": "nats / W2"}
	// One band per row, but no wider than a notebook's page: past it the bands narrow and their
	// labels break onto more lines.
	width := min(distanceMaxWidth, max(720, distanceBand*len(rows)+90))
	if !math.IsInf(lowest, 1) {
		floor := math.Pow(10, math.Floor(math.Log10(lowest)))
		y["min"], y["startValue"] = floor, floor
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": fmt.Sprintf("Distance to the exact posterior (%s, h = %g, %d clients)", r.Config.Split, r.Config.Heterogeneity, len(r.Sizes))},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true},
		"xAxis": map[string]any{"type": "category", "data": labels,
			"axisLabel": map[string]any{"interval": 0, "width": (width-90)/len(rows) - 6, "overflow": "break"}},
		"yAxis":  y,
		"series": []any{bar("KL(p ‖ q)", klPQ, 0), bar("KL(q ‖ p)", klQP, 1), bar("W2", w2, 2)},
	}, width, 460)
	if err != nil {
		return nil, err
	}
	c.Caption = notDrawnCaption("no KL bar", infinite)
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// distanceBand is the width in pixels of a rule's bars in DistanceChart: room for a label such as
// "Conflation" or "RKLB/size" on one line, unrotated (a longer one breaks onto a second line).
const distanceBand = 72

// distanceMaxWidth caps DistanceChart's width in pixels, so that the chart fits the notebook page
// (and nbcheck's 1280-pixel window).
const distanceMaxWidth = 1100

// barLabel is a row's label under its bars in DistanceChart: the references' long names shortened
// so that neighbouring labels do not run into each other.
func barLabel(label string) string {
	if short, ok := map[string]string{
		RefMeanFieldVI:         "MF-VI (floor)",
		RefMoment:              "marginals (floor)",
		RefFrontier:            "frontier",
		RefDWCMarginals:        "DWC, marginals",
		RefDWCLaplaceMarginals: "DWC, Laplace marginals",
		RefLaplaceProduct:      "Laplace product",
		LabelEPMCMCFull:        "EP-MCMC, full cov.",
	}[label]; ok {
		return short
	}
	return label
}

// notDrawnCaption says which rules a chart leaves out, and why: their KL to the exact posterior is
// infinite (a point mass: FedAvg, FedPA); "" for none.
func notDrawnCaption(what string, labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return fmt.Sprintf("%s for %s: the KL of a point mass (no variances) to the exact posterior is infinite.", what, strings.Join(labels, ", "))
}

// ruleLooks gives each rule label of a chart its look (plots.IdentityLooks): a rule has its
// method's colour, marker and dash in every chart, and no two rules of a chart look alike.
func ruleLooks(labels []string) map[string]plots.Look {
	idx := plots.IdentityLooks(labels)
	out := make(map[string]plots.Look, len(labels))
	for _, l := range labels {
		out[l] = plots.SeriesLook(idx[l])
	}
	return out
}

// refLook is the look of the k-th reference row (a floor or a limit, not a rule): four greys to
// black with their own dash, the last two with a marker too, so that the references drawn together
// (the two floors, the frontier, DWC on the clients' marginals) tell apart; never a rule's colour.
func refLook(k int) plots.Look {
	colors := []string{"#444444", "#999999", "#000000", "#777777"}
	dashes := []string{"dashed", "dotted", "dashdot", "longdash"}
	markers := []string{"none", "none", "diamond", "triangle"}
	return plots.Look{Color: colors[k%4], Dash: dashes[k%4], Marker: markers[k%4], MarkerSize: 6, Z: 1}
}

// lineSeries is an ECharts line series in look, width px wide; data points may be ECharts data
// items (a point's own "symbol").
func lineSeries(name string, data any, look plots.Look, width float64) map[string]any {
	s := map[string]any{"name": name, "type": "line", "data": data, "z": look.Z,
		"symbol": look.Marker, "symbolSize": look.MarkerSize, "showSymbol": look.Marker != "none",
		"lineStyle": map[string]any{"width": width, "type": plots.LineType(look.Dash), "color": look.Color, "dashOffset": look.DashOffset},
		"itemStyle": map[string]any{"color": look.Color}}
	if look.Marker == "none" {
		s["symbol"] = "none"
	}
	return s
}

// anyPoint reports whether some point of pts has a value (finiteOrNil kept it).
func anyPoint(pts [][]any) bool {
	for _, p := range pts {
		if p[1] != nil {
			return true
		}
	}
	return false
}

// SliceChart draws the 1-D slice of weight i: the clients' marginals (dashed grey, one legend
// entry), the exact global posterior's marginal (black) and each rule's in its method's look
// (FedAvg's point mass is left out).
func SliceChart(name string, r *Result, i int) (*plots.Chart, error) {
	d := len(r.Exact.Mean)
	if i < 0 || i >= d {
		return nil, fmt.Errorf("groundtruth: slice of weight %d: the problem has weights 0 to %d", i, d-1)
	}
	toy := plots.Toy{Title: fmt.Sprintf("Weight %d: the exact posterior beside the rules (%s, h = %g)", i, r.Config.Split, r.Config.Heterogeneity)}
	for _, c := range r.Clients {
		toy.Clients = append(toy.Clients, plots.Gaussian1D{Mean: c.Mean[i], Var: c.Var[i]})
	}
	toy.Reference = &plots.NamedGaussian{Name: "exact", Mean: r.Exact.Mean[i], Var: r.Exact.Cov[i][i]}
	for _, s := range r.MainRules() {
		if s.Q.Var[i] > 0 {
			toy.Aggregates = append(toy.Aggregates, plots.NamedGaussian{Name: s.Label, Mean: s.Q.Mean[i], Var: s.Q.Var[i]})
		}
	}
	return plots.ToyAggregation(name, toy)
}

// EllipseChart draws the 2-D slice of weights i and j: the 90 % ellipse of the exact posterior's
// marginal (black; tilted by the correlation the rules cannot represent) and of each rule's diagonal
// Gaussian in its method's look (axis-aligned; FedAvg as a point).
func EllipseChart(name string, r *Result, i, j int) (*plots.Chart, error) {
	d := len(r.Exact.Mean)
	if i < 0 || j < 0 || i >= d || j >= d || i == j {
		return nil, fmt.Errorf("groundtruth: 2-D slice of weights %d and %d: want two different weights in 0 to %d", i, j, d-1)
	}
	// 90 % of a 2-D Gaussian lies inside Mahalanobis radius sqrt(chi2_2(0.9)) = sqrt(-2 log 0.1).
	rad := math.Sqrt(-2 * math.Log(0.1))
	ellipse := func(mi, mj, sii, sij, sjj float64) [][]float64 {
		// Cholesky of [[sii, sij], [sij, sjj]].
		a := math.Sqrt(sii)
		b := sij / a
		c := math.Sqrt(math.Max(sjj-b*b, 0))
		var pts [][]float64
		for k := 0; k <= 72; k++ {
			t := 2 * math.Pi * float64(k) / 72
			u, v := rad*math.Cos(t), rad*math.Sin(t)
			pts = append(pts, []float64{mi + a*u, mj + b*u + c*v})
		}
		return pts
	}
	// A rule's ellipse carries its marker on every ellipseMarkerEvery-th point, at a phase of its
	// own, so that two rules of the same colour and dash, or on the same ellipse, both show.
	const ellipseMarkerEvery = 12
	marked := func(pts [][]float64, phase int) []any {
		out := make([]any, len(pts))
		for k, p := range pts {
			item := map[string]any{"value": p}
			if (k-phase)%ellipseMarkerEvery != 0 {
				item["symbol"] = "none"
			}
			out[k] = item
		}
		return out
	}
	e := r.Exact
	exact := plots.Look{Color: "#000000", Dash: "solid", Marker: "none", Z: 2}
	series := []any{lineSeries("exact", ellipse(e.Mean[i], e.Mean[j], e.Cov[i][i], e.Cov[i][j], e.Cov[j][j]), exact, 3)}
	main := r.MainRules()
	labels := make([]string, len(main))
	for k, s := range main {
		labels[k] = s.Label
	}
	looks := ruleLooks(labels)
	for k, s := range main {
		look := looks[s.Label]
		if s.Q.Var[i] > 0 && s.Q.Var[j] > 0 {
			pts := ellipse(s.Q.Mean[i], s.Q.Mean[j], s.Q.Var[i], 0, s.Q.Var[j])
			series = append(series, lineSeries(s.Label, marked(pts, (k*5)%ellipseMarkerEvery), look, 1.5))
		} else {
			series = append(series, map[string]any{"name": s.Label, "type": "scatter", "symbol": look.Marker, "symbolSize": 10, "z": look.Z,
				"data": [][]float64{{s.Q.Mean[i], s.Q.Mean[j]}}, "itemStyle": map[string]any{"color": look.Color}})
		}
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": fmt.Sprintf("Weights %d and %d: 90 %% regions", i, j)},
		"tooltip": map[string]any{"trigger": "item"},
		"legend":  map[string]any{"show": true},
		"xAxis":   map[string]any{"type": "value", "name": fmt.Sprintf("w%d", i), "scale": true},
		"yAxis":   map[string]any{"type": "value", "name": fmt.Sprintf("w%d", j), "scale": true},
		"series":  series,
	}, 0, 520)
	if err != nil {
		return nil, err
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// SweepChart draws one line per rule (size weights and the unweighted rules) in its method's look and
// per floor (grey): KL(p || q) averaged over seeds against the summaries' X (heterogeneity or number
// of clients), on a log axis. A rule whose KL is infinite everywhere (a point mass) is not drawn
// and not in the legend; the caption names it.
func SweepChart(name, xLabel string, sums []Summary) (*plots.Chart, error) {
	if len(sums) == 0 {
		return nil, fmt.Errorf("groundtruth: sweep chart %q: no summaries", name)
	}
	first := append(append([]Row(nil), sums[0].References...), sums[0].Main()...)
	var labels, notDrawn []string
	for _, row := range sums[0].Main() {
		labels = append(labels, row.Label)
	}
	looks := ruleLooks(labels)
	var series []any
	var drawn []string
	var values [][]float64
	for k, row := range first {
		var pts [][]any
		var vals []float64
		for _, s := range sums {
			all := append(append([]Row(nil), s.References...), s.Main()...)
			if len(all) != len(first) || all[k].Label != row.Label {
				return nil, fmt.Errorf("groundtruth: sweep chart %q: the summaries have different rules", name)
			}
			pts = append(pts, []any{s.Scenario.X, finiteOrNil(float64(all[k].KLFromTruth))})
			vals = append(vals, float64(all[k].KLFromTruth))
		}
		if !anyPoint(pts) {
			notDrawn = append(notDrawn, row.Label)
			continue
		}
		if !row.Reference {
			drawn, values = append(drawn, row.Label), append(values, vals)
		}
		if row.Reference {
			series = append(series, lineSeries(row.Label, pts, refLook(k), 1.5))
		} else {
			series = append(series, lineSeries(row.Label, pts, looks[row.Label], 2))
		}
	}
	title := "KL(p ‖ q) to the exact posterior"
	if g := sums[0].Scenario.Group; strings.HasPrefix(g, GroupSweepPrefix) {
		title += ": " + strings.TrimPrefix(g, GroupSweepPrefix)
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": title},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true},
		"xAxis":   map[string]any{"type": "value", "name": xLabel, "scale": true},
		"yAxis":   map[string]any{"type": "log", "name": "nats"},
		"series":  series,
	}, 0, 460)
	if err != nil {
		return nil, err
	}
	c.Caption = notDrawnCaption("Not drawn", notDrawn)
	if note := sweepCoincidence(drawn, values); note != "" {
		c.Caption = strings.TrimSpace(c.Caption + " " + note)
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// SweepCoincide is the largest relative difference at every point between two rules' KL in a sweep
// chart under which its caption names them as drawn on top of each other (on its log axis 1 % is
// less than a line's width).
const SweepCoincide = 0.01

// sweepCoincidence names the groups of rules whose KL(p || q) differ by at most SweepCoincide
// (relative) at every point of a sweep chart ("" when none do).
func sweepCoincidence(labels []string, values [][]float64) string {
	alike := func(a, b []float64) bool {
		for i := range a {
			if math.IsInf(a[i], 0) || math.IsInf(b[i], 0) || !(math.Abs(a[i]-b[i]) <= SweepCoincide*math.Max(math.Abs(a[i]), math.Abs(b[i]))) {
				return false // a NaN never coincides
			}
		}
		return true
	}
	groups := plots.Coincident(len(labels), func(f, j int) bool { return alike(values[f], values[j]) })
	parts := make([]string, len(groups))
	for g, members := range groups {
		names := make([]string, len(members))
		for k, j := range members {
			names[k] = labels[j]
		}
		parts[g] = strings.Join(names, ", ")
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("Drawn on top of each other (KL within %g %% at every point): %s.", SweepCoincide*100, strings.Join(parts, "; "))
}

// RegimeTable returns a scenario's table of the findings page (Markdown).
func RegimeTable(s Summary) string {
	var b strings.Builder
	writeRegime(&b, s)
	return b.String()
}
