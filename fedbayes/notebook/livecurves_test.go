package notebook

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/progress"
)

// liveRecorder collects what LiveCurves draws.
type liveRecorder struct {
	ids    []string
	charts []*plots.Chart
}

func (r *liveRecorder) draw(id string, c *plots.Chart) error {
	r.ids, r.charts = append(r.ids, id), append(r.charts, c)
	return nil
}

// seriesData returns, per legend name, the y values of the chart's main lines.
func seriesData(t *testing.T, c *plots.Chart) map[string][]float64 {
	t.Helper()
	raw, err := json.Marshal(c.Option)
	if err != nil {
		t.Fatal(err)
	}
	var opt struct {
		Series []struct {
			Name string
			Data []struct{ Value []float64 }
		}
	}
	if err := json.Unmarshal(raw, &opt); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, s := range opt.Series {
		if _, seen := out[s.Name]; seen {
			continue // a band's series
		}
		for _, d := range s.Data {
			out[s.Name] = append(out[s.Name], d.Value[1])
		}
	}
	return out
}

func TestLiveCurves(t *testing.T) {
	rec := &liveRecorder{}
	clock := time.Unix(1000, 0)
	l := NewLiveCurves()
	l.draw, l.now = rec.draw, func() time.Time { return clock }
	step := func(d time.Duration) { clock = clock.Add(d) }
	l.Start(3, "vi-EAA seed 1")
	for r, acc := range []float64{0.5, 0.6, 0.7} {
		step(time.Second)
		l.Update(r+1, map[string]float64{"accuracy": acc, "nll": 1}, progress.Timings{})
	}
	// At most one drawing per liveEvery: the first round draws, the next two wait.
	if len(rec.charts) != 1 {
		t.Fatalf("%d drawings after 3 rounds in 3 s, want 1", len(rec.charts))
	}
	l.Done("completed")
	if len(rec.charts) != 2 {
		t.Fatalf("the end of a run was not drawn: %d drawings", len(rec.charts))
	}
	l.Start(3, "vi-EAA seed 2")
	step(time.Second)
	l.Update(1, map[string]float64{"accuracy": 0.7}, progress.Timings{})
	step(time.Second)
	l.Update(2, map[string]float64{"accuracy": 0.8}, progress.Timings{})
	l.Start(3, "vi-GAA seed 1")
	step(liveEvery)
	l.Update(1, map[string]float64{"accuracy": 0.9}, progress.Timings{})
	l.Done("interrupted at round 1")
	got := seriesData(t, rec.charts[len(rec.charts)-1])
	// EAA: round 1 mean of 0.5 and 0.7, round 2 of 0.6 and 0.8, round 3 seed 1 only.
	// The legend names the settings by what tells them apart, under the methods' display names.
	want := map[string][]float64{"EAA": {0.6, 0.7, 0.7}, "GAA": {0.9}}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Errorf("%s: %v, want %v", name, g, w)
			continue
		}
		for i := range w {
			if d := g[i] - w[i]; d > 1e-9 || d < -1e-9 {
				t.Errorf("%s: %v, want %v", name, g, w)
				break
			}
		}
	}
	for _, id := range rec.ids {
		if id != rec.ids[0] || !strings.HasPrefix(id, "fedbayes-live-curves-") {
			t.Errorf("drawn into %q and %q: one block, updated in place", rec.ids[0], id)
		}
	}
	// A run without accuracy draws its first metric of MSE, NLL; non-finite values are left out.
	r2 := &liveRecorder{}
	l2 := NewLiveCurves()
	l2.draw = r2.draw
	l2.Start(2, "reg seed 1")
	l2.Update(1, map[string]float64{"nll": 2, "mse": 0.5}, progress.Timings{})
	l2.Update(2, map[string]float64{"mse": nan()}, progress.Timings{})
	l2.Done("diverged")
	if c, err := l2.Chart(); err != nil || c == nil || !strings.Contains(mustJSON(t, c.Option), "mse per round") {
		t.Errorf("regression chart: %v", err)
	}
	if g := seriesData(t, r2.charts[len(r2.charts)-1])["reg"]; len(g) != 1 || g[0] != 0.5 {
		t.Errorf("regression line %v, want [0.5]", g)
	}
	// Nothing reported: no chart, no drawing.
	l3 := NewLiveCurves()
	l3.draw = func(string, *plots.Chart) error { t.Error("drew an empty chart"); return nil }
	l3.Done("completed")
}

// TestLiveCurvesOneRound checks the live chart of one-round methods swept over h: one line per
// method against h, under display names, not one point per setting under internal ids; and the
// labels of multi-round settings.
func TestLiveCurvesOneRound(t *testing.T) {
	rec := &liveRecorder{}
	l := NewLiveCurves()
	l.draw, l.swept = rec.draw, "h"
	acc := map[string]float64{"bcm": 0.8, "beta-predbayes": 0.85, "ep-mcmc": 0.6}
	for _, h := range []string{"0", "0.5", "0.9"} {
		for _, m := range []string{"bcm", "beta-predbayes", "ep-mcmc"} {
			for seed := 1; seed <= 2; seed++ {
				l.Start(1, "digits-fast-"+m+"-"+h+" seed "+string(rune('0'+seed)))
				l.Update(1, map[string]float64{"accuracy": acc[m] - 0.1*float64(len(h)-1) + 0.01*float64(seed)}, progress.Timings{})
				l.Done("completed")
			}
		}
	}
	c := rec.charts[len(rec.charts)-1]
	got := seriesData(t, c)
	if len(got) != 3 {
		t.Fatalf("%d series %v, want one per method", len(got), got)
	}
	for name, m := range map[string]string{"BCM": "bcm", "β-PredBayes": "beta-predbayes", "EP-MCMC": "ep-mcmc"} {
		g := got[name]
		want := []float64{acc[m] + 0.015, acc[m] - 0.2 + 0.015, acc[m] - 0.2 + 0.015} // h 0, 0.5, 0.9; mean of the two seeds
		if len(g) != 3 {
			t.Errorf("%s: %v, want 3 points (h = 0, 0.5, 0.9)", name, g)
			continue
		}
		for i := range want {
			if math.Abs(g[i]-want[i]) > 1e-9 {
				t.Errorf("%s: %v, want %v", name, g, want)
				break
			}
		}
	}
	if js := mustJSON(t, c.Option); !strings.Contains(js, `"name":"h"`) {
		t.Errorf("the x axis is not named after the swept field h")
	}
	for _, tc := range []struct{ names, want []string }{
		{[]string{"vi-eaa-iid", "vi-eaa-dirichlet", "vi-fedavg-iid"}, []string{"EAA iid", "EAA dirichlet", "FedAvg iid"}},
		{[]string{"nb"}, []string{"nb"}},
		{[]string{"study-median", "study-GAA"}, []string{"median", "GAA"}},
	} {
		var series []plots.SeedSeries
		for _, n := range tc.names {
			series = append(series, plots.SeedSeries{Name: n})
		}
		if got := legendLabels(series); !slices.Equal(got, tc.want) {
			t.Errorf("legendLabels(%v) = %v, want %v", tc.names, got, tc.want)
		}
	}
}

// Train's runs draw the live curves as they train: every run's rounds reach the chart.
func TestTrainLiveCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("trains")
	}
	s := &engine.Spec{
		Name:       "nb",
		Dataset:    engine.DatasetSpec{Name: "digits", Subsample: 300, TestSubsample: 100},
		Partition:  engine.PartitionSpec{Clients: 3},
		Model:      engine.ModelSpec{Hidden: []int{8}},
		Training:   engine.TrainingSpec{Rounds: 3, BatchSize: 32, LearningRate: 0.1},
		Evaluation: engine.EvaluationSpec{Samples: 2},
		Seeds:      []int64{1, 2},
	}
	rec := &liveRecorder{}
	l := NewLiveCurves()
	l.draw = rec.draw
	if _, err := trainLive(context.Background(), t.TempDir(), progress.Discard, l, s); err != nil {
		t.Fatal(err)
	}
	if len(rec.charts) < 2 {
		t.Fatalf("%d drawings for 2 runs", len(rec.charts))
	}
	got := seriesData(t, rec.charts[len(rec.charts)-1])
	if len(got) != 1 || len(got["nb"]) != 3 {
		t.Errorf("last drawing: %v, want one line of 3 rounds", got)
	}
}

func nan() float64 { return math.NaN() }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkLiveCurvesRedraw builds the live chart of 12 settings x 3 seeds x 50 rounds (notebook
// 06's size at a reduced budget), what each redraw costs the training cell.
func BenchmarkLiveCurvesRedraw(b *testing.B) {
	l := NewLiveCurves()
	l.draw = func(string, *plots.Chart) error { return nil }
	for s := range 12 {
		for seed := range 3 {
			l.Start(50, "setting-"+string(rune('A'+s))+" seed "+string(rune('1'+seed)))
			for r := 1; r <= 50; r++ {
				l.values[l.current][r] = append(l.values[l.current][r], float64(r)/50)
				l.maxRound = max(l.maxRound, r)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := l.Chart(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSweptValues checks that bare numbers in the live legend are named after the swept field, and
// that other labels, or an unknown field, are left as they are.
func TestSweptValues(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		swept  string
		want   string
	}{
		{[]string{"0", "0.1", "0.3"}, "trim", "[trim = 0 trim = 0.1 trim = 0.3]"},
		{[]string{"0", "0.1"}, "", "[0 0.1]"},
		{[]string{"GAA", "0.1"}, "trim", "[GAA 0.1]"},
	} {
		if got := fmt.Sprint(sweptValues(tc.labels, tc.swept)); got != tc.want {
			t.Errorf("sweptValues(%v, %q) = %s, want %s", tc.labels, tc.swept, got, tc.want)
		}
	}
}
