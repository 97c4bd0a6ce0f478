package plots

import "fmt"

// DecompositionNet is one model's mean aleatoric and epistemic uncertainty on every input set.
type DecompositionNet struct {
	// Name is the legend entry (suffixed " · aleatoric" and " · epistemic").
	Name string `json:"name"`
	// Aleatoric and Epistemic hold one value per input set (Decomposition.Sets).
	Aleatoric []float64 `json:"aleatoric"`
	Epistemic []float64 `json:"epistemic"`
}

// Decomposition is the data of a chart of the split of predictive uncertainty into an aleatoric
// and an epistemic part (Fischer et al. 2024, Eq. 9): per input set, one stack per model.
type Decomposition struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// Sets name the input sets, on the category axis.
	Sets []string `json:"sets"`
	// YLabel names the value axis.
	YLabel string `json:"y_label,omitempty"`
	// Nets holds one stack per model.
	Nets []DecompositionNet `json:"nets"`
}

// DecompositionBars draws, for every input set, one stacked bar per model: its aleatoric part
// (light) under its epistemic part (dark), so that the height of a stack is the whole
// uncertainty. Model i has colour i of Palette.
func DecompositionBars(name string, d Decomposition) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: decomposition %q: %s", name, fmt.Sprintf(format, args...))
	}
	if len(d.Nets) == 0 || len(d.Sets) == 0 {
		return fail("%d models and %d input sets; want at least one of each", len(d.Nets), len(d.Sets))
	}
	seen := seriesNames{}
	var series []map[string]any
	for i, n := range d.Nets {
		if err := seen.add(i, n.Name); err != nil {
			return fail("%v", err)
		}
		for part, values := range map[string][]float64{"aleatoric": n.Aleatoric, "epistemic": n.Epistemic} {
			if len(values) != len(d.Sets) {
				return fail("model %q: %d %s values for %d input sets", n.Name, len(values), part, len(d.Sets))
			}
			if err := checkFinite(fmt.Sprintf("model %q: %s", n.Name, part), values...); err != nil {
				return fail("%v", err)
			}
		}
		for _, part := range []string{"aleatoric", "epistemic"} {
			values, style := n.Epistemic, map[string]any{"color": seriesColor(i)}
			if part == "aleatoric" {
				values, style["opacity"] = n.Aleatoric, 0.4
			}
			series = append(series, map[string]any{"name": n.Name + " · " + part, "type": "bar", "stack": n.Name,
				"data": values, "itemStyle": style, "barMaxWidth": 28})
		}
	}
	c, err := NewChart(name, map[string]any{
		"title":   map[string]any{"text": d.Title},
		"tooltip": map[string]any{"trigger": "item"},
		"legend":  map[string]any{"show": true},
		"xAxis":   map[string]any{"type": "category", "data": d.Sets},
		"yAxis":   map[string]any{"type": "value", "name": d.YLabel},
		"series":  series,
	}, 0, 0)
	if err != nil {
		return nil, err
	}
	return c.Styled(ScreenStyle, 0, 0)
}

// ScatterGroup is one set of points of a scatter chart.
type ScatterGroup struct {
	// Name is the legend entry.
	Name string `json:"name"`
	// Points are (x, y) pairs.
	Points [][2]float64 `json:"points"`
	// Color is the points' colour; empty for colour i of Palette.
	Color string `json:"color,omitempty"`
}

// Scatter is the data of a scatter chart with one colour per group of points.
type Scatter struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// XLabel and YLabel name the axes, which start at 0.
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	// Groups holds the points.
	Groups []ScatterGroup `json:"groups"`
}

// ScatterChart draws every group's points as small translucent dots, so that dense regions show,
// on axes that start at 0 (for non-negative quantities such as the aleatoric and epistemic parts of
// uncertainty).
func ScatterChart(name string, d Scatter) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: scatter %q: %s", name, fmt.Sprintf(format, args...))
	}
	if len(d.Groups) == 0 {
		return fail("no groups")
	}
	seen := seriesNames{}
	var series []map[string]any
	for i, g := range d.Groups {
		if err := seen.add(i, g.Name); err != nil {
			return fail("%v", err)
		}
		pts := make([][]float64, len(g.Points))
		for j, p := range g.Points {
			if err := checkFinite(fmt.Sprintf("group %q: point %d", g.Name, j), p[0], p[1]); err != nil {
				return fail("%v", err)
			}
			pts[j] = []float64{p[0], p[1]}
		}
		color := g.Color
		if color == "" {
			color = seriesColor(i)
		}
		series = append(series, map[string]any{"name": g.Name, "type": "scatter", "data": pts, "symbolSize": 5,
			"itemStyle": map[string]any{"color": color, "opacity": 0.55}})
	}
	c, err := NewChart(name, map[string]any{
		"title":   map[string]any{"text": d.Title},
		"tooltip": map[string]any{"trigger": "item"},
		"legend":  map[string]any{"show": true},
		"xAxis":   map[string]any{"type": "value", "name": d.XLabel, "min": 0},
		"yAxis":   map[string]any{"type": "value", "name": d.YLabel, "min": 0},
		"series":  series,
	}, 0, 0)
	if err != nil {
		return nil, err
	}
	return c.Styled(ScreenStyle, 0, 0)
}
