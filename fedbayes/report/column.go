package report

import (
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// Column is one metric shown in a table, with the direction used for bolding.
type Column struct {
	// Metric is the name in Row.Metrics.
	Metric string
	// Direction says which way is better.
	Direction results.Direction
}

// ParseColumn reads "METRIC" (a standard metric, whose direction results.Metrics declares) or
// "METRIC:DIRECTION" with DIRECTION one of higher, lower, none.
func ParseColumn(s string) (Column, error) {
	name, dir, hasDir := strings.Cut(strings.TrimSpace(s), ":")
	name = strings.TrimSpace(name)
	if name == "" {
		return Column{}, fmt.Errorf("report: empty metric name in %q", s)
	}
	if hasDir {
		d, err := results.ParseDirection(dir)
		if err != nil {
			return Column{}, fmt.Errorf("%w (metric %q)", err, name)
		}
		return Column{Metric: name, Direction: d}, nil
	}
	m := results.MetricOf(name)
	if !m.Standard() {
		return Column{}, fmt.Errorf("report: metric %q has no known direction; write %s:higher, %s:lower or %s:none", name, name, name, name)
	}
	return Column{Metric: name, Direction: m.Better}, nil
}

// ParseColumns reads a comma-separated list of columns (see ParseColumn).
func ParseColumns(list string) ([]Column, error) {
	var cols []Column
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		c, err := ParseColumn(s)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("report: no metrics in %q", list)
	}
	return cols, nil
}
