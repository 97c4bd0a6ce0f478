package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// Group is a set of runs that share the values of some labels; its runs differ in their seeds.
type Group struct {
	// By names the grouping labels; Key holds their values, in the same order.
	By, Key []string
	// Runs are the runs of the group, one per seed.
	Runs []results.Run
}

// Name joins the key as "label=value, ...".
func (g Group) Name() string {
	parts := make([]string, len(g.By))
	for i := range g.By {
		parts[i] = g.By[i] + "=" + g.Key[i]
	}
	return strings.Join(parts, ", ")
}

// Seeds returns the seeds of the group's runs.
func (g Group) Seeds() []int64 {
	s := make([]int64, len(g.Runs))
	for i, r := range g.Runs {
		s[i] = r.Meta.Seed
	}
	return s
}

// checkGroupLabels checks names usable for grouping.
func checkGroupLabels(by []string) error {
	if len(by) == 0 {
		return fmt.Errorf("report: no grouping labels given (use %q to group by setting name)", results.SettingLabel)
	}
	seen := map[string]bool{}
	for _, b := range by {
		switch {
		case b == "seed":
			return fmt.Errorf("report: %q cannot be a grouping label: seeds are what a group summarises", b)
		case strings.TrimSpace(b) == "":
			return fmt.Errorf("report: empty grouping label")
		case seen[b]:
			return fmt.Errorf("report: grouping label %q given twice", b)
		}
		seen[b] = true
	}
	return nil
}

// labelKey returns the values of the labels by for run r.
func labelKey(r results.Run, by []string) ([]string, error) {
	key := make([]string, len(by))
	for i, b := range by {
		v, ok := r.Meta.Label(b)
		if !ok {
			return nil, fmt.Errorf("report: run %s has no label %q (has %v)", r.Dir, b, r.Meta.LabelNames())
		}
		key[i] = v
	}
	return key, nil
}

// GroupRuns groups runs by the values of the labels in by ("setting" is the setting name, other
// names are results.Meta.Labels keys). It is an error if a run lacks a label, or if one group holds the
// same seed twice (two runs that the labels do not tell apart). Groups are sorted by key, values
// that are numbers in numeric order.
func GroupRuns(runs []results.Run, by []string) ([]Group, error) {
	if err := checkGroupLabels(by); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no runs to group")
	}
	index := map[string]int{}
	var groups []Group
	for _, r := range runs {
		key, err := labelKey(r, by)
		if err != nil {
			return nil, err
		}
		k := strings.Join(key, "\x00")
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, Group{By: by, Key: key})
		}
		for _, other := range groups[i].Runs {
			if other.Meta.Seed == r.Meta.Seed {
				return nil, fmt.Errorf("report: group %s holds seed %d twice (%s and %s); group by a label that tells them apart",
					groups[i].Name(), r.Meta.Seed, other.Dir, r.Dir)
			}
		}
		groups[i].Runs = append(groups[i].Runs, r)
	}
	sort.SliceStable(groups, func(a, b int) bool { return lessKey(groups[a].Key, groups[b].Key) })
	return groups, nil
}

// lessKey orders keys value by value, numerically when both values are numbers.
func lessKey(a, b []string) bool {
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		fa, ea := strconv.ParseFloat(a[i], 64)
		fb, eb := strconv.ParseFloat(b[i], 64)
		if ea == nil && eb == nil && fa != fb {
			return fa < fb
		}
		return a[i] < b[i]
	}
	return false
}

// Summarize returns the final value of metric (see Run.Final) summarised over the group's runs.
func (g Group) Summarize(metric string) (stats.Summary, error) {
	s, err := g.Sample(metric)
	if err != nil {
		return stats.Summary{}, err
	}
	return stats.Summarize(s.Values)
}

// Sample returns the final value of metric (see Run.Final) of each of the group's runs with the
// run's seed, in the order of g.Runs: what the significance tests of package stats compare, paired
// by seed where two groups ran the same seeds.
func (g Group) Sample(metric string) (stats.Sample, error) {
	if len(g.Runs) == 0 {
		return stats.Sample{}, fmt.Errorf("report: group %s is empty", g.Name())
	}
	s := stats.Sample{Seeds: g.Seeds(), Values: make([]float64, len(g.Runs))}
	for i, r := range g.Runs {
		v, err := r.Final(metric)
		if err != nil {
			return stats.Sample{}, err
		}
		s.Values[i] = v
	}
	return s, nil
}

// Curve is a learning curve: a metric per round, summarised over the runs of a group.
type Curve struct {
	// Group is the group the curve summarises.
	Group Group
	// Metric is the metric's name.
	Metric string
	// Rounds are the rounds at which at least one run evaluated the metric, increasing.
	Rounds []int
	// Points summarise the metric at each round over the runs that evaluated it then (N tells how
	// many did).
	Points []stats.Summary
}

// Curve returns the per-round mean and standard error of metric over the group's runs. It is an
// error if no run of the group ever recorded the metric.
func (g Group) Curve(metric string) (Curve, error) {
	byRound := map[int][]float64{}
	for _, r := range g.Runs {
		for _, row := range r.Rows {
			if v, ok := row.Metrics[metric]; ok {
				byRound[row.Round] = append(byRound[row.Round], v)
			}
		}
	}
	if len(byRound) == 0 {
		return Curve{}, fmt.Errorf("report: group %s: no run recorded metric %q", g.Name(), metric)
	}
	c := Curve{Group: g, Metric: metric}
	for round := range byRound {
		c.Rounds = append(c.Rounds, round)
	}
	sort.Ints(c.Rounds)
	for _, round := range c.Rounds {
		s, _ := stats.Summarize(byRound[round]) // never empty
		c.Points = append(c.Points, s)
	}
	return c, nil
}

// Curves groups runs by the labels in by (see GroupRuns) and returns each group's learning curve
// of metric (see Group.Curve), in group order.
func Curves(runs []results.Run, by []string, metric string) ([]Curve, error) {
	groups, err := GroupRuns(runs, by)
	if err != nil {
		return nil, err
	}
	curves := make([]Curve, len(groups))
	for i, g := range groups {
		if curves[i], err = g.Curve(metric); err != nil {
			return nil, err
		}
	}
	return curves, nil
}

// MixedLabels returns the labels (results.Meta.Labels names, not "setting") whose values differ between
// runs that the labels in by put into one group, so that a table grouped by by alone would average
// them together (IID and non-IID runs in one cell, for example). Labels are tried in sorted order
// and each one kept is added to the grouping before the next is tried, so labels that vary
// together (a partition and its alpha) add only the first. A run without a label counts as a value
// of its own.
func MixedLabels(runs []results.Run, by []string) []string {
	cur := append([]string{}, by...)
	names := map[string]bool{}
	for _, r := range runs {
		for k := range r.Meta.Labels {
			names[k] = true
		}
	}
	for _, b := range by {
		delete(names, b)
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var mixed []string
	for _, label := range sorted {
		values := map[string]string{} // group key -> the label's value in it
		isMixed := false
		for _, r := range runs {
			parts := make([]string, len(cur))
			for i, b := range cur {
				v, ok := r.Meta.Label(b)
				if !ok {
					v = "\x01absent"
				}
				parts[i] = v
			}
			key := strings.Join(parts, "\x00")
			v, ok := r.Meta.Label(label)
			if !ok {
				v = "\x01absent"
			}
			if prev, seen := values[key]; seen && prev != v {
				isMixed = true
				break
			}
			values[key] = v
		}
		if isMixed {
			mixed = append(mixed, label)
			cur = append(cur, label)
		}
	}
	return mixed
}
