package reproduce

import (
	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/results"
)

// learningSeries returns one line per value of label key: the metric at every round all of the value's
// runs evaluated, one row per seed. Values without runs are left out.
func learningSeries(rs runSet, key string, values []string, metric string, scale float64) []plots.SeedSeries {
	var out []plots.SeedSeries
	for _, v := range values {
		sel := rs.where(key, v)
		if len(sel) == 0 {
			continue
		}
		rounds := commonRounds(sel, metric)
		if len(rounds) == 0 {
			continue
		}
		s := plots.SeedSeries{Name: v}
		for _, r := range rounds {
			s.X = append(s.X, float64(r))
		}
		for _, run := range sel {
			row := make([]float64, 0, len(rounds))
			for _, r := range rounds {
				row = append(row, metricAt(run, r, metric)*scale)
			}
			s.Runs = append(s.Runs, row)
		}
		out = append(out, s)
	}
	return out
}

// commonRounds lists the rounds at which every run evaluated the metric.
func commonRounds(rs runSet, metric string) []int {
	count := map[int]int{}
	var order []int
	for _, run := range rs {
		for _, row := range run.Rows {
			if _, ok := row.Metrics[metric]; ok {
				if count[row.Round] == 0 {
					order = append(order, row.Round)
				}
				count[row.Round]++
			}
		}
	}
	var out []int
	for _, r := range order {
		if count[r] == len(rs) {
			out = append(out, r)
		}
	}
	return out
}

// metricAt is a run's metric at a round (which commonRounds guarantees exists).
func metricAt(run results.Run, round int, metric string) float64 {
	for _, row := range run.Rows {
		if row.Round == round {
			return row.Metrics[metric]
		}
	}
	return 0
}

// versusSeries returns one line per value of label lineKey with the final metric against the numeric
// x of each value of label xKey (xs maps label values to x), one row per seed (seeds matched by
// position after sorting runs by seed; a line needs every x for every seed).
func versusSeries(rs runSet, lineKey string, lines []string, xKey string, xValues []string, xs []float64, metric string, scale float64) []plots.SeedSeries {
	var out []plots.SeedSeries
	for _, l := range lines {
		sel := rs.where(lineKey, l)
		s := plots.SeedSeries{Name: l}
		var cols [][]float64
		for i, xv := range xValues {
			at := sel.where(xKey, xv)
			var col []float64
			for _, run := range at {
				if v, ok := final(run, metric); ok {
					col = append(col, v*scale)
				}
			}
			if len(col) == 0 {
				continue
			}
			s.X = append(s.X, xs[i])
			cols = append(cols, col)
		}
		if len(cols) == 0 {
			continue
		}
		s.Runs = seedRows(cols)
		out = append(out, s)
	}
	return out
}

// seedRows turns per-x columns of per-seed values into one row per seed, over the seeds every
// column has (the first k of each, runs being sorted by seed).
func seedRows(cols [][]float64) [][]float64 {
	seeds := len(cols[0])
	for _, c := range cols {
		seeds = min(seeds, len(c))
	}
	rows := make([][]float64, seeds)
	for k := range rows {
		rows[k] = make([]float64, len(cols))
		for i, c := range cols {
			rows[k][i] = c[k]
		}
	}
	return rows
}
