package notebook

import (
	"fmt"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/results"
	"github.com/janpfeifer/gonb/gonbui"
)

// Label returns a run's label name (the engine sets dataset, partition, model, rule and
// weighting), or "" when the run has none.
func Label(r results.Run, name string) string {
	v, _ := r.Meta.Label(name)
	return v
}

// Where returns the runs for which keep is true, in order.
func Where(runs []results.Run, keep func(results.Run) bool) []results.Run {
	var out []results.Run
	for _, r := range runs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// WithLabel returns the runs whose label name has the value value.
func WithLabel(runs []results.Run, name, value string) []results.Run {
	return Where(runs, func(r results.Run) bool { return Label(r, name) == value })
}

// Values returns the distinct values of a label over the runs, sorted.
func Values(runs []results.Run, name string) []string {
	var out []string
	for _, r := range runs {
		if v := Label(r, name); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// SeedSeries turns runs into one learning curve per value of the label by (e.g. "rule"), with one
// line per seed: the rounds at which metric was evaluated and its values. Groups keep the order of
// results.GroupRuns. It fails when two seeds of a group were evaluated at different rounds.
func SeedSeries(runs []results.Run, by, metric string) ([]plots.SeedSeries, error) {
	groups, err := results.GroupRuns(runs, []string{by})
	if err != nil {
		return nil, err
	}
	var series []plots.SeedSeries
	for _, g := range groups {
		s := plots.SeedSeries{Name: g.Key[0]}
		for i, r := range g.Runs {
			var x, y []float64
			for _, row := range r.Rows {
				if v, ok := row.Metrics[metric]; ok {
					x, y = append(x, float64(row.Round)), append(y, v)
				}
			}
			if i == 0 {
				s.X = x
			} else if !slices.Equal(x, s.X) {
				return nil, fmt.Errorf("notebook: %s: seed %d evaluated %s at other rounds than seed %d", g.Name(), r.Meta.Seed, metric, g.Runs[0].Meta.Seed)
			}
			s.Runs = append(s.Runs, y)
		}
		series = append(series, s)
	}
	return series, nil
}

// RowHTML lays charts out side by side, wrapping on narrow pages.
func RowHTML(charts ...*plots.Chart) (string, error) {
	var b strings.Builder
	b.WriteString(`<div style="display:flex; flex-wrap:wrap; gap:12px">`)
	for _, c := range charts {
		h, err := plots.ChartHTML(c)
		if err != nil {
			return "", err
		}
		b.WriteString(h)
	}
	b.WriteString(`</div>`)
	return b.String(), nil
}

// Row displays charts side by side in a GoNB cell (RowHTML); outside a notebook it does nothing.
func Row(charts ...*plots.Chart) error {
	h, err := RowHTML(charts...)
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(h)
	if gonbui.IsNotebook {
		gonbui.Sync()
	}
	return gonbui.Error()
}
