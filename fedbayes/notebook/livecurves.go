package notebook

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/progress"
	"github.com/janpfeifer/gonb/gonbui"
)

// liveEvery is the least time between two redraws of the live learning curves (a run's end is
// always drawn): a chart of a few dozen short lines costs milliseconds to build, and a redraw every
// few seconds keeps the page and the kernel's output small.
const liveEvery = 3 * time.Second

// liveMetrics are the metrics the live chart draws, the first that a run reports.
var liveMetrics = []string{"accuracy", "mse", "nll"}

// seedSuffix is the " seed N" the engine appends to a run's label (progress.Reporter.Start).
var seedSuffix = regexp.MustCompile(` seed -?\d+$`)

// LiveCurves draws the learning curves of the runs of a Train call while they train: one line per
// setting, the metric (accuracy, or MSE or NLL for runs without accuracy) against the round,
// averaged over the seeds that reached each round so far, redrawn in place at most every liveEvery
// and at the end of each run. It implements progress.Reporter; Train uses it in a notebook beside
// the progress bar.
type LiveCurves struct {
	mu       sync.Mutex
	draw     func(id string, c *plots.Chart) error // plots.Update; replaced in tests
	now      func() time.Time
	id       string
	metric   string
	order    []string                     // settings in the order they started
	values   map[string]map[int][]float64 // setting -> round -> the seeds' values
	current  string
	drawn    time.Time
	drawErr  error
	changed  bool
	maxRound int
	// swept names the field the settings sweep, the x axis of one-round methods ("" when unknown).
	swept string
}

// NewLiveCurves returns a LiveCurves that draws into a new output block of the cell.
func NewLiveCurves() *LiveCurves {
	return &LiveCurves{draw: plots.Update, now: time.Now, id: "fedbayes-live-curves-" + gonbui.UniqueId(),
		values: map[string]map[int][]float64{}}
}

// Start implements progress.Reporter: a run of a setting begins.
func (l *LiveCurves) Start(_ int, label string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = seedSuffix.ReplaceAllString(label, "")
	if _, ok := l.values[l.current]; !ok {
		l.order = append(l.order, l.current)
		l.values[l.current] = map[int][]float64{}
	}
}

// Update implements progress.Reporter: the round's metric joins its setting's line; the chart is
// redrawn when liveEvery has passed since the last drawing.
func (l *LiveCurves) Update(round int, metrics map[string]float64, _ progress.Timings) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.metric == "" {
		for _, m := range liveMetrics {
			if _, ok := metrics[m]; ok {
				l.metric = m
				break
			}
		}
	}
	v, ok := metrics[l.metric]
	if !ok || l.current == "" || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	l.values[l.current][round] = append(l.values[l.current][round], v)
	l.maxRound = max(l.maxRound, round)
	l.changed = true
	if l.now().Sub(l.drawn) >= liveEvery {
		l.redrawLocked()
	}
}

// Done implements progress.Reporter: a run ended; the chart is drawn with it.
func (l *LiveCurves) Done(string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed {
		l.redrawLocked()
	}
}

// Err returns the first error of a drawing (the chart is then no longer redrawn).
func (l *LiveCurves) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.drawErr
}

// Chart returns the live chart of what was reported so far, or nil before the first value.
func (l *LiveCurves) Chart() (*plots.Chart, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.chartLocked()
}

func (l *LiveCurves) chartLocked() (*plots.Chart, error) {
	var series []plots.SeedSeries
	for _, name := range l.order {
		byRound := l.values[name]
		s := plots.SeedSeries{Name: name}
		var mean []float64
		for r := 0; r <= l.maxRound; r++ {
			vs := byRound[r]
			if len(vs) == 0 {
				continue
			}
			sum := 0.0
			for _, v := range vs {
				sum += v
			}
			s.X = append(s.X, float64(r))
			mean = append(mean, sum/float64(len(vs)))
		}
		if len(mean) == 0 {
			continue
		}
		s.Runs = [][]float64{mean}
		series = append(series, s)
	}
	if len(series) == 0 {
		return nil, nil
	}
	labels := legendLabels(series)
	if l.maxRound <= 1 && len(series) > 1 {
		if byMethod, xLabel, ok := oneRoundSeries(series, labels); ok {
			return plots.VersusHeterogeneity("live-learning-curves", plots.Curves{
				Title:  fmt.Sprintf("Training: %s of each one-round method (mean over the seeds so far), live", l.metric),
				XLabel: l.xLabel(xLabel), YLabel: l.metric, Series: byMethod,
			})
		}
	}
	labels = sweptValues(labels, l.swept)
	for i := range series {
		series[i].Name = labels[i]
	}
	return plots.LearningCurves("live-learning-curves", plots.Curves{
		Title:  fmt.Sprintf("Training: %s per round (mean over the seeds so far), live", l.metric),
		YLabel: l.metric, Series: series,
	})
}

// legendLabels names the settings of the live chart as a reader knows them: the words every
// setting's name starts with are left out (plots.ShortNames: the spec's name, "digits-fast-"), and
// the method's id shows under its display name (plots.SplitMethod): "digits-fast-bcm-0.5" among
// others of digits-fast is "BCM 0.5".
func legendLabels(series []plots.SeedSeries) []string {
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
	}
	out := plots.ShortNames(names)
	for i, name := range out {
		if method, rest, ok := plots.SplitMethod(name); ok {
			out[i] = strings.Join(append([]string{method}, rest...), " ")
		}
	}
	return out
}

// sweptValues names labels that are bare numbers after the field they are values of ("trim = 0.1"
// for the settings of a sweep of aggregation.options.trim, which legendLabels leaves as "0.1"), so
// that the legend says what the numbers are. Labels are returned as they are unless swept is known
// and every label is a number.
func sweptValues(labels []string, swept string) []string {
	if swept == "" {
		return labels
	}
	for _, l := range labels {
		if _, err := strconv.ParseFloat(l, 64); err != nil {
			return labels
		}
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = swept + " = " + l
	}
	return out
}

// oneRoundSeries redraws settings of one round each (one point per setting) as one line per method
// against the number the rest of each label holds (the swept h of "BCM 0.5", labels by
// legendLabels), so that a sweep of one-round methods shows as a few lines rather than one point
// per setting. ok is false when some label is of no known method, holds no single number besides
// it, or gives one method the same number twice.
func oneRoundSeries(series []plots.SeedSeries, labels []string) ([]plots.SeedSeries, string, bool) {
	type point struct{ x, y float64 }
	byMethod := map[string][]point{}
	var order []string
	for i, s := range series {
		method, rest, ok := plots.SplitMethod(labels[i])
		if !ok || len(rest) != 1 || len(s.Runs[0]) != 1 {
			return nil, "", false
		}
		x, err := strconv.ParseFloat(rest[0], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, "", false
		}
		if _, seen := byMethod[method]; !seen {
			order = append(order, method)
		}
		byMethod[method] = append(byMethod[method], point{x, s.Runs[0][0]})
	}
	out := make([]plots.SeedSeries, 0, len(order))
	for _, m := range order {
		pts := byMethod[m]
		sort.Slice(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
		s := plots.SeedSeries{Name: m, Runs: [][]float64{make([]float64, len(pts))}}
		for i, p := range pts {
			if i > 0 && p.x == pts[i-1].x {
				return nil, "", false
			}
			s.X = append(s.X, p.x)
			s.Runs[0][i] = p.y
		}
		out = append(out, s)
	}
	return out, "value swept", true
}

// xLabel is the x axis title of one-round methods: the swept field's name when Train knows it.
func (l *LiveCurves) xLabel(fallback string) string {
	if l.swept != "" {
		return l.swept
	}
	return fallback
}

func (l *LiveCurves) redrawLocked() {
	if l.drawErr != nil {
		return
	}
	c, err := l.chartLocked()
	if err == nil && c != nil {
		err = l.draw(l.id, c)
	}
	if err != nil {
		l.drawErr = fmt.Errorf("notebook: live learning curves: %w", err)
		return
	}
	l.drawn, l.changed = l.now(), false
}

// tee forwards a run's progress to the progress bar and to the live curves; steps within a round go
// to the bar only.
type tee struct {
	bar    *progress.Sweep
	curves *LiveCurves
}

func (t tee) Start(total int, label string) { t.bar.Start(total, label); t.curves.Start(total, label) }
func (t tee) Update(round int, m map[string]float64, tm progress.Timings) {
	t.bar.Update(round, m, tm)
	t.curves.Update(round, m, tm)
}
func (t tee) Done(status string)                    { t.bar.Done(status); t.curves.Done(status) }
func (t tee) Step(round, step, steps, examples int) { t.bar.Step(round, step, steps, examples) }
