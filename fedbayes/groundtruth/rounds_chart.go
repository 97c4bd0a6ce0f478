package groundtruth

import (
	"fmt"

	"fedbayes.dev/fedbayes/plots"
)

// RoundsChartMax is the top of RoundsChart's log axis: a collapsing rule's KL(p || q) grows past
// 1e20 in twenty rounds, and its line leaves the chart there.
const RoundsChartMax = 1e4

// RoundsChart draws each rule's KL(p || q) to the exact posterior against the round (log axis, up to
// RoundsChartMax) in its method's look, with the floor of the global marginals dashed grey; a rule
// whose KL is infinite in every round (FedAvg's point mass) is not drawn and not in the legend,
// and the caption names it.
func RoundsChart(name string, r *RoundsResult) (*plots.Chart, error) {
	if r == nil || len(r.Trajectories) == 0 {
		return nil, fmt.Errorf("groundtruth: rounds chart %q: no trajectories", name)
	}
	var series []any
	floor := [][]any{{1, finiteOrNil(r.FloorKLFromTruth)}, {r.Rounds, finiteOrNil(r.FloorKLFromTruth)}}
	series = append(series, lineSeries(RefMoment, floor, refLook(0), 1.5))
	labels := make([]string, len(r.Trajectories))
	for k, tr := range r.Trajectories {
		labels[k] = tr.Label
	}
	looks := ruleLooks(labels)
	var notDrawn []string
	for _, tr := range r.Trajectories {
		var pts [][]any
		for _, pt := range tr.Points {
			pts = append(pts, []any{pt.Round, finiteOrNil(float64(pt.KLFromTruth))})
		}
		if !anyPoint(pts) {
			notDrawn = append(notDrawn, tr.Label)
			continue
		}
		series = append(series, lineSeries(tr.Label, pts, looks[tr.Label], 2))
	}
	c, err := plots.NewChart(name, map[string]any{
		"title": map[string]any{"text": fmt.Sprintf("KL(p ‖ q) to the exact posterior by round (%s, %s, h = %g, %d clients)",
			policyName(r.Prior), r.Config.Split, r.Config.Heterogeneity, r.Clients)},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"show": true},
		"xAxis":   map[string]any{"type": "value", "name": "round", "min": 1, "max": r.Rounds},
		"yAxis":   map[string]any{"type": "log", "name": "nats", "max": RoundsChartMax},
		"series":  series,
	}, 0, 460)
	if err != nil {
		return nil, err
	}
	c.Caption = notDrawnCaption("Not drawn", notDrawn)
	return c.Styled(plots.ScreenStyle, 0, 0)
}
