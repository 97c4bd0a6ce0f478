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
// a log axis, with the mean-field floors first (FedAvg's infinite KL is left out).
func DistanceChart(name string, r *Result) (*plots.Chart, error) {
	rows := append(append([]Scored(nil), r.References...), r.MainRules()...)
	labels := make([]string, len(rows))
	klPQ := make([]any, len(rows))
	klQP := make([]any, len(rows))
	w2 := make([]any, len(rows))
	for i, s := range rows {
		labels[i] = s.Label
		klPQ[i] = finiteOrNil(float64(s.Distances.KLFromTruth))
		klQP[i] = finiteOrNil(float64(s.Distances.KLToTruth))
		w2[i] = finiteOrNil(s.Distances.W2)
	}
	bar := func(n string, data []any, i int) map[string]any {
		return map[string]any{"name": n, "type": "bar", "data": data, "itemStyle": map[string]any{"color": plots.Palette[i]}}
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": fmt.Sprintf("Distance to the exact posterior (%s, h = %g, %d clients)", r.Config.Split, r.Config.Heterogeneity, len(r.Sizes))},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true, "top": 28},
		"grid":    map[string]any{"bottom": 110, "top": 70},
		"xAxis":   map[string]any{"type": "category", "data": labels, "axisLabel": map[string]any{"rotate": 40, "interval": 0}},
		"yAxis":   map[string]any{"type": "log", "name": "nats / W2"},
		"series":  []any{bar("KL(p ‖ q)", klPQ, 0), bar("KL(q ‖ p)", klQP, 1), bar("W2", w2, 2)},
	}, 0, 460)
	if err != nil {
		return nil, err
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// SliceChart draws the 1-D slice of weight i: the clients' marginals (dashed grey), the exact
// global posterior's marginal and each rule's (FedAvg's point mass is left out).
func SliceChart(name string, r *Result, i int) (*plots.Chart, error) {
	d := len(r.Exact.Mean)
	if i < 0 || i >= d {
		return nil, fmt.Errorf("groundtruth: slice of weight %d: the problem has weights 0 to %d", i, d-1)
	}
	toy := plots.Toy{Title: fmt.Sprintf("Weight %d: the exact posterior beside the rules (%s, h = %g)", i, r.Config.Split, r.Config.Heterogeneity)}
	for _, c := range r.Clients {
		toy.Clients = append(toy.Clients, plots.Gaussian1D{Mean: c.Mean[i], Var: c.Var[i]})
	}
	toy.Aggregates = append(toy.Aggregates, plots.NamedGaussian{Name: "exact", Mean: r.Exact.Mean[i], Var: r.Exact.Cov[i][i]})
	for _, s := range r.MainRules() {
		if s.Q.Var[i] > 0 {
			toy.Aggregates = append(toy.Aggregates, plots.NamedGaussian{Name: s.Label, Mean: s.Q.Mean[i], Var: s.Q.Var[i]})
		}
	}
	return plots.ToyAggregation(name, toy)
}

// EllipseChart draws the 2-D slice of weights i and j: the 90 % ellipse of the exact posterior's
// marginal (tilted by the correlation the rules cannot represent) and of each rule's diagonal
// Gaussian (axis-aligned; FedAvg as a point).
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
	line := func(n string, pts [][]float64, k int, width float64) map[string]any {
		return map[string]any{"name": n, "type": "line", "data": pts, "showSymbol": false,
			"lineStyle": map[string]any{"width": width, "color": plots.Palette[k%len(plots.Palette)]},
			"itemStyle": map[string]any{"color": plots.Palette[k%len(plots.Palette)]}}
	}
	e := r.Exact
	series := []any{line("exact", ellipse(e.Mean[i], e.Mean[j], e.Cov[i][i], e.Cov[i][j], e.Cov[j][j]), 0, 3)}
	for k, s := range r.MainRules() {
		if s.Q.Var[i] > 0 && s.Q.Var[j] > 0 {
			series = append(series, line(s.Label, ellipse(s.Q.Mean[i], s.Q.Mean[j], s.Q.Var[i], 0, s.Q.Var[j]), k+1, 1.5))
		} else {
			series = append(series, map[string]any{"name": s.Label, "type": "scatter", "symbolSize": 9,
				"data": [][]float64{{s.Q.Mean[i], s.Q.Mean[j]}}, "itemStyle": map[string]any{"color": plots.Palette[(k+1)%len(plots.Palette)]}})
		}
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": fmt.Sprintf("Weights %d and %d: 90 %% regions", i, j)},
		"tooltip": map[string]any{"trigger": "item"},
		"legend":  map[string]any{"show": true, "top": 28, "type": "scroll"},
		"grid":    map[string]any{"top": 70},
		"xAxis":   map[string]any{"type": "value", "name": fmt.Sprintf("w%d", i), "scale": true},
		"yAxis":   map[string]any{"type": "value", "name": fmt.Sprintf("w%d", j), "scale": true},
		"series":  series,
	}, 0, 520)
	if err != nil {
		return nil, err
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// SweepChart draws one line per rule (size weights and the unweighted rules) and per floor: KL(p || q)
// averaged over seeds against the summaries' X (heterogeneity or number of clients), on a log axis.
func SweepChart(name, xLabel string, sums []Summary) (*plots.Chart, error) {
	if len(sums) == 0 {
		return nil, fmt.Errorf("groundtruth: sweep chart %q: no summaries", name)
	}
	first := append(append([]Row(nil), sums[0].References...), sums[0].Main()...)
	var series []any
	for k, row := range first {
		var pts [][]any
		for _, s := range sums {
			all := append(append([]Row(nil), s.References...), s.Main()...)
			if len(all) != len(first) || all[k].Label != row.Label {
				return nil, fmt.Errorf("groundtruth: sweep chart %q: the summaries have different rules", name)
			}
			pts = append(pts, []any{s.Scenario.X, finiteOrNil(float64(all[k].KLFromTruth))})
		}
		width := 2.0
		style := "solid"
		if row.Reference {
			width, style = 1.5, "dashed"
		}
		series = append(series, map[string]any{"name": row.Label, "type": "line", "data": pts, "symbolSize": 6,
			"lineStyle": map[string]any{"width": width, "type": style, "color": plots.Palette[k%len(plots.Palette)]},
			"itemStyle": map[string]any{"color": plots.Palette[k%len(plots.Palette)]}})
	}
	title := "KL(p ‖ q) to the exact posterior"
	if g := sums[0].Scenario.Group; strings.HasPrefix(g, GroupSweepPrefix) {
		title += ": " + strings.TrimPrefix(g, GroupSweepPrefix)
	}
	c, err := plots.NewChart(name, map[string]any{
		"title":   map[string]any{"text": title},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true, "top": 28, "type": "scroll"},
		"grid":    map[string]any{"top": 70},
		"xAxis":   map[string]any{"type": "value", "name": xLabel, "scale": true},
		"yAxis":   map[string]any{"type": "log", "name": "nats"},
		"series":  series,
	}, 0, 460)
	if err != nil {
		return nil, err
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}

// RegimeTable returns a scenario's table of the findings page (Markdown).
func RegimeTable(s Summary) string {
	var b strings.Builder
	writeRegime(&b, s)
	return b.String()
}
