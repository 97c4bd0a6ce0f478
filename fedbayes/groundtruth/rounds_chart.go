package groundtruth

import (
	"fmt"
	"math"
	"strings"

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
	var notDrawn, above []string
	for _, tr := range r.Trajectories {
		var pts [][]any
		first := 0
		for _, pt := range tr.Points {
			pts = append(pts, []any{pt.Round, finiteOrNil(float64(pt.KLFromTruth))})
			if kl := float64(pt.KLFromTruth); first == 0 && kl > RoundsChartMax && !math.IsInf(kl, 1) {
				first = pt.Round
			}
		}
		if first > 0 {
			above = append(above, fmt.Sprintf("%s from round %d", tr.Label, first))
		}
		if !anyPoint(pts) {
			notDrawn = append(notDrawn, tr.Label)
			continue
		}
		series = append(series, lineSeries(tr.Label, pts, looks[tr.Label], 2))
	}
	c, err := plots.NewChart(name, map[string]any{
		"title": map[string]any{"text": fmt.Sprintf("KL(p ‖ q) by round (%s, %s, h = %g, %d clients)",
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
	if len(above) > 0 {
		c.Caption = strings.TrimSpace(c.Caption + fmt.Sprintf(" Above the axis' %g nats, so off the top of the chart: %s.", RoundsChartMax, strings.Join(above, ", ")))
	}
	return c.Styled(plots.ScreenStyle, 0, 0)
}
