package notebook

import (
	"fmt"

	"fedbayes.dev/fedbayes/results"
)

// HealthLines says whether the variances of the runs learned (results.RunHealth), for the groups of
// runs by the labels by: one line per group with a flagged run (frozen, held at a clamp, or alike on
// every client), "partition=iid, rule=GAA: CLAMPED: <message>", with the first flagged run's message;
// or, when no variational run is flagged, one line counting the runs by verdict (learned, or
// unmeasured: recorded before fedbayes measured it). Groups without variances (FedAvg) are left out. It is what a notebook prints beside a chart or table of rules that combine variances.
func HealthLines(runs []results.Run, by ...string) ([]string, error) {
	groups, err := results.GroupRuns(runs, by)
	if err != nil {
		return nil, err
	}
	var lines []string
	count := map[results.HealthState]int{}
	for _, g := range groups {
		for _, r := range g.Runs {
			h := results.RunHealth(r)
			if h.State == results.HealthNotVariational {
				continue
			}
			count[h.State]++
			if h.Flagged() {
				lines = append(lines, fmt.Sprintf("%s: %s: %s", g.Name(), h.Short(), h.Message))
				break
			}
		}
	}
	if len(lines) == 0 && len(count) > 0 {
		lines = append(lines, fmt.Sprintf("posterior health: no variational run is flagged: %d learned their variances (the clients disagreed on them), %d were recorded before it was measured",
			count[results.HealthLearned], count[results.HealthUnmeasured]))
	}
	return lines, nil
}
