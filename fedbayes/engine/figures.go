package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/results"
)

// FiguresFile is the figure-spec file Run writes into the results directory (read by
// `fedbayes figures RESULTS_DIR`).
const FiguresFile = "figures.json"

// staleTemp is the age after which a temporary figures.json is taken as left by a killed process.
const staleTemp = time.Minute

// curveMetrics are the learning curves drawn, with their scales (the y axis is labelled with
// results.MetricOf(metric).Label(), short enough for a column figure's height): the spread on a log axis, as the notebooks draw it (GAA's and CF's
// spreads are orders of magnitude below EAA's), a share on 0 to 1.
var curveMetrics = []struct {
	metric      string
	logY, share bool
}{
	{metric: results.Accuracy},
	{metric: results.NLL},
	{metric: results.ECE},
	{metric: results.WeightedAccuracy},
	{metric: results.Spread, logY: true},
	{metric: results.VarMoved, share: true},
	{metric: results.VarDisagreement},
}

// zero and one are a share's axis range.
var zero, one = 0.0, 1.0

// writeFigures writes dir/figures.json with one learning-curve figure per metric over every completed
// run in dir whose rows match its status and spec (results.Run.Check with ExpectedRounds): a series
// per setting, a line per seed (plots draws mean and standard error). Runs whose evaluated rounds
// differ from the first run of their setting are left out. It returns the file's path, or "" when
// there is no completed run, and the runs the figures leave out with the reason. A temporary file
// of an earlier figures.json whose writer was killed before renaming it is removed first. The runs
// of kept (by run directory) are taken as they are, not read again (results.LoadWithKnown).
func writeFigures(dir, title string, kept map[string]results.Run) (string, []results.Skipped, error) {
	// A process killed between writing figures.json's temporary file and renaming it left the file
	// behind; any writer still running would have renamed its own long before staleTemp.
	if _, err := results.RemoveAbandonedTemps(filepath.Join(dir, FiguresFile), staleTemp); err != nil {
		return "", nil, fmt.Errorf("engine: figures: %w", err)
	}
	runs, skipped, err := results.LoadWithKnown(results.LoadOptions{Expect: ExpectedRounds}, kept, dir)
	if errors.Is(err, results.ErrNoRuns) {
		return "", nil, nil // no run at all: nothing to draw
	}
	if err != nil {
		return "", nil, fmt.Errorf("engine: figures: %w", err)
	}
	figs, err := curveFigures(runs, title)
	if err != nil {
		return "", skipped, err
	}
	if len(figs) == 0 {
		return "", skipped, nil
	}
	raw, err := json.MarshalIndent(plots.SpecFile{Version: plots.SpecVersion, Figures: figs}, "", "  ")
	if err != nil {
		return "", skipped, fmt.Errorf("engine: figures: %w", err)
	}
	path := filepath.Join(dir, FiguresFile)
	if err := results.WriteFileAtomic(path, append(raw, '\n'), 0o644); err != nil {
		return "", skipped, fmt.Errorf("engine: figures: %w", err)
	}
	return path, skipped, nil
}

// curveFigures are the learning-curve figures of runs, one per metric of curveMetrics that some run
// records in every row: a series per setting (named by what tells it apart from the others, and
// styled by the method it is of), a line
// per seed; a seed whose evaluated rounds differ from its setting's first is left out.
func curveFigures(runs []results.Run, title string) ([]plots.FigureSpec, error) {
	title, caption := figureTitle(runs, title)
	bySetting := map[string][]results.Run{}
	for _, r := range runs {
		bySetting[r.Meta.Setting] = append(bySetting[r.Meta.Setting], r)
	}
	settings := make([]string, 0, len(bySetting))
	for s := range bySetting {
		settings = append(settings, s)
	}
	sort.Strings(settings)
	// The legend names a setting by what tells it apart from the others (the title names what they
	// share): "EAA-size" for quick-digits-EAA-size among quick-digits-*.
	short := map[string]string{}
	for i, n := range plots.ShortNames(settings) {
		short[settings[i]] = n
	}
	var figs []plots.FigureSpec
	for _, cm := range curveMetrics {
		var series []plots.SeedSeries
		for _, name := range settings {
			group := bySetting[name]
			sort.Slice(group, func(i, j int) bool { return group[i].Meta.Seed < group[j].Meta.Seed })
			var x []float64
			var lines [][]float64
			for _, r := range group {
				rx, ry, ok := curveOf(r, cm.metric)
				if !ok {
					continue
				}
				if x == nil {
					x = rx
				}
				if !slices.Equal(x, rx) {
					continue
				}
				lines = append(lines, ry)
			}
			if len(lines) > 0 && len(x) > 0 {
				series = append(series, plots.SeedSeries{Name: short[name], X: x, Runs: lines})
			}
		}
		if len(series) == 0 {
			continue
		}
		d := plots.Curves{Title: title, Caption: caption, XLabel: "round", YLabel: results.MetricOf(cm.metric).Label(), Series: series, LogY: cm.logY && positive(series)}
		if cm.share {
			d.YMin, d.YMax = &zero, &one
		}
		f, err := plots.NewFigureSpec(cm.metric, "learning_curves", "column", d)
		if err != nil {
			return nil, fmt.Errorf("engine: figure %q: %w", cm.metric, err)
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// positive reports whether every value of the series is above 0 (so that a log axis can show them).
func positive(series []plots.SeedSeries) bool {
	for _, s := range series {
		for _, run := range s.Runs {
			for _, v := range run {
				if !(v > 0) {
					return false
				}
			}
		}
	}
	return true
}

// curveOf returns a run's rounds and finite values of metric (ok false if any row lacks it).
func curveOf(r results.Run, metric string) (x, y []float64, ok bool) {
	for _, row := range r.Rows {
		v, has := row.Metrics[metric]
		if !has {
			return nil, nil, false
		}
		x = append(x, float64(row.Round))
		y = append(y, v)
	}
	return x, y, len(x) > 0
}

// titleLabels are the labels a figure's title names when every run drawn shares them.
var titleLabels = []string{"dataset", "partition", "model", "rule", "weighting"}

// figureTitle titles the figures of a results folder after what its runs share, whichever spec ran
// last: specTitle (the spec's name and budget) when every run is of that spec at one budget, else
// the settings' common name prefix or, without one, the labels every run shares, with the number of
// settings. The caption gives the provenance: the runs' budget sentences and the shared labels.
// With no runs it returns specTitle.
func figureTitle(runs []results.Run, specTitle string) (title, caption string) {
	if len(runs) == 0 {
		return specTitle, ""
	}
	settings := map[string]bool{}
	var budgets []string
	prefix := strings.Split(runs[0].Meta.Setting, "-")
	for _, r := range runs {
		settings[r.Meta.Setting] = true
		if b := r.Meta.Budget(); b != "" && !slices.Contains(budgets, b) {
			budgets = append(budgets, b)
		}
		parts := strings.Split(r.Meta.Setting, "-")
		n := 0
		for n < len(prefix) && n < len(parts) && prefix[n] == parts[n] {
			n++
		}
		prefix = prefix[:n]
	}
	var shared []string
	for _, name := range titleLabels {
		v, ok := runs[0].Meta.Label(name)
		for _, r := range runs[1:] {
			if w, has := r.Meta.Label(name); !has || w != v {
				ok = false
				break
			}
		}
		if ok && v != "" {
			shared = append(shared, v)
		}
	}
	sort.Strings(budgets)
	name := strings.Join(prefix, "-")
	switch {
	case name != "" && len(budgets) <= 1 && strings.HasPrefix(specTitle, name+" ("):
		// Every run is of the spec that ran now, at its budget: its title names both.
		title = specTitle
	case name != "" && len(settings) > 1:
		title = fmt.Sprintf("%s (%d settings)", name, len(settings))
	case len(shared) > 0:
		title = fmt.Sprintf("%s (%d %s)", strings.Join(shared, ", "), len(settings), map[bool]string{true: "setting", false: "settings"}[len(settings) == 1])
	default:
		title = fmt.Sprintf("learning curves (%d settings)", len(settings))
	}
	var parts []string
	for _, b := range budgets {
		parts = append(parts, "budget "+b)
	}
	if len(shared) > 0 {
		parts = append(parts, "every run: "+strings.Join(shared, ", "))
	}
	return title, strings.Join(parts, "; ")
}
