package groundtruth

import (
	"fmt"

	"fedbayes.dev/fedbayes/plots"
)

// RoundsChartMax is the top of RoundsChart's log axis: a collapsing rule's KL(p || q) grows past
// 1e20 in twenty rounds, and its line leaves the chart there.
const RoundsChartMax = 1e4

// RoundsChart draws each rule's KL(p || q) to the exact posterior against the round (log axis, up to
// RoundsChartMax), with the floor of the global marginals dashed (FedAvg's infinite KL is left out).
func RoundsChart(name string, r *RoundsResult) (*plots.Chart, error) {
	if r == nil || len(r.Trajectories) == 0 {
		return nil, fmt.Errorf("groundtruth: rounds chart %q: no trajectories", name)
	}
	var series []any
	floor := [][]any{{1, finiteOrNil(r.FloorKLFromTruth)}, {r.Rounds, finiteOrNil(r.FloorKLFromTruth)}}
	series = append(series, map[string]any{"name": RefMoment, "type": "line", "data": floor, "symbol": "none",
		"lineStyle": map[string]any{"width": 1.5, "type": "dashed", "color": "#888888"}, "itemStyle": map[string]any{"color": "#888888"}})
	for k, tr := range r.Trajectories {
		var pts [][]any
		for _, pt := range tr.Points {
			pts = append(pts, []any{pt.Round, finiteOrNil(float64(pt.KLFromTruth))})
		}
		color := plots.Palette[k%len(plots.Palette)]
		series = append(series, map[string]any{"name": tr.Label, "type": "line", "data": pts, "symbolSize": 5,
			"lineStyle": map[string]any{"width": 2, "color": color}, "itemStyle": map[string]any{"color": color}})
	}
	c, err := plots.NewChart(name, map[string]any{
		"title": map[string]any{"text": fmt.Sprintf("KL(p ‖ q) to the exact posterior by round (%s, %s, h = %g, %d clients)",
			policyName(r.Prior), r.Config.Split, r.Config.Heterogeneity, r.Clients)},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true, "top": 28, "type": "scroll"},
		"grid":    map[string]any{"top": 70},
		"xAxis":   map[string]any{"type": "value", "name": "round", "min": 1, "max": r.Rounds},
		"yAxis":   map[string]any{"type": "log", "name": "nats", "max": RoundsChartMax},
		"series":  series,
	}, 0, 460)
	if err != nil {
		return nil, err
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}
