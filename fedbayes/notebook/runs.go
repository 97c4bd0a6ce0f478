package notebook

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/report"
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
// report.GroupRuns. It fails when two seeds of a group were evaluated at different rounds.
func SeedSeries(runs []results.Run, by, metric string) ([]plots.SeedSeries, error) {
	groups, err := report.GroupRuns(runs, []string{by})
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
		b.WriteString("<div>" + h + "</div>") // the chart and its caption under it
	}
	b.WriteString(`</div>`)
	return b.String(), nil
}

// Row displays charts side by side in a GoNB cell (RowHTML); outside a notebook it does nothing.
func Row(charts ...*plots.Chart) error {
	return displayHTML(RowHTML(charts...))
}

// displayHTML shows HTML built by a function that may fail in a GoNB cell and waits until it is
// sent; outside a notebook it does nothing.
func displayHTML(h string, err error) error {
	if err != nil {
		return err
	}
	gonbui.DisplayHTML(h)
	if gonbui.IsNotebook {
		gonbui.Sync()
	}
	return gonbui.Error()
}

// FinalVersus turns runs into one line per value of the label by (e.g. "method"): the final value
// of metric (results.Run.Final) against the numeric label x (e.g. "h"), one row per seed. X holds
// every value of x over all the runs, increasing. The lines are those of values, in that order, or
// when values is empty every value of by (Values). It fails, naming the line, x and seed, when a
// seed of a line lacks a run at some x or its metric.
func FinalVersus(runs []results.Run, by, x, metric string, values ...string) ([]plots.SeedSeries, error) {
	xs := map[float64]bool{}
	at := map[string]map[int64]map[float64]results.Run{} // by value -> seed -> x -> run
	for _, r := range runs {
		v, err := strconv.ParseFloat(Label(r, x), 64)
		if err != nil {
			return nil, fmt.Errorf("notebook: run %s: label %s %q is not a number", r.Dir, x, Label(r, x))
		}
		xs[v] = true
		key := Label(r, by)
		if at[key] == nil {
			at[key] = map[int64]map[float64]results.Run{}
		}
		if at[key][r.Meta.Seed] == nil {
			at[key][r.Meta.Seed] = map[float64]results.Run{}
		}
		at[key][r.Meta.Seed][v] = r
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("notebook: no runs")
	}
	X := slices.Sorted(maps.Keys(xs))
	var out []plots.SeedSeries
	if len(values) == 0 {
		values = Values(runs, by)
	}
	for _, key := range values {
		if at[key] == nil {
			return nil, fmt.Errorf("notebook: no runs of %s=%s (there are: %s)", by, key, strings.Join(Values(runs, by), ", "))
		}
		s := plots.SeedSeries{Name: key, X: X}
		for _, seed := range slices.Sorted(maps.Keys(at[key])) {
			row := make([]float64, len(X))
			for i, v := range X {
				r, ok := at[key][seed][v]
				if !ok {
					return nil, fmt.Errorf("notebook: no run of %s=%s at %s=%g, seed %d", by, key, x, v, seed)
				}
				var err error
				if row[i], err = r.Final(metric); err != nil {
					return nil, fmt.Errorf("notebook: run %s: %w", r.Dir, err)
				}
			}
			s.Runs = append(s.Runs, row)
		}
		out = append(out, s)
	}
	return out, nil
}

// Pick returns the series named in order, in that order, each renamed by names where names has it
// (e.g. MethodNames: "beta-predbayes" becomes "β-PredBayes"). A name in order that no series has is
// an error listing those there are.
func Pick(series []plots.SeedSeries, names map[string]string, order ...string) ([]plots.SeedSeries, error) {
	var out []plots.SeedSeries
	for _, want := range order {
		i := slices.IndexFunc(series, func(s plots.SeedSeries) bool { return s.Name == want })
		if i < 0 {
			have := make([]string, len(series))
			for j, s := range series {
				have[j] = s.Name
			}
			return nil, fmt.Errorf("notebook: no runs of %q (there are: %s)", want, strings.Join(have, ", "))
		}
		s := series[i]
		if n, ok := names[want]; ok {
			s.Name = n
		}
		out = append(out, s)
	}
	return out, nil
}

// Show displays a chart built by a plots builder in a GoNB cell, so that a cell reads
// must(notebook.Show(plots.LearningCurves(name, curves))); it returns the builder's error, if any.
func Show(c *plots.Chart, err error) error {
	if err != nil {
		return err
	}
	return plots.Display(c)
}
