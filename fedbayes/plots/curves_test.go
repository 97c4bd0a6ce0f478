package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/stats"
)

func TestMeanSE(t *testing.T) {
	for _, tc := range []struct {
		name     string
		runs     [][]float64
		mean, se []float64
	}{
		// Values 1, 2, 3: mean 2, sample sd 1, SE 1/sqrt(3).
		{"three seeds", [][]float64{{1, 10}, {2, 10}, {3, 10}}, []float64{2, 10}, []float64{1 / math.Sqrt(3), 0}},
		// Values 0.5, 0.7: mean 0.6, sample sd sqrt(0.02), SE 0.1.
		{"two seeds", [][]float64{{0.5}, {0.7}}, []float64{0.6}, []float64{0.1}},
		// One seed: the standard error is undefined, NaN as in stats.Summarize.
		{"one seed", [][]float64{{4, 5}}, []float64{4, 5}, []float64{math.NaN(), math.NaN()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mean, se, err := MeanSE(tc.runs)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.mean {
				seOK := math.Abs(se[i]-tc.se[i]) <= 1e-12 || math.IsNaN(se[i]) && math.IsNaN(tc.se[i])
				if math.Abs(mean[i]-tc.mean[i]) > 1e-12 || !seOK {
					t.Errorf("x %d: mean, se = %g, %g; want %g, %g", i, mean[i], se[i], tc.mean[i], tc.se[i])
				}
				// The same bits as stats.Summarize of the column, the one convention.
				col := make([]float64, len(tc.runs))
				for s, r := range tc.runs {
					col[s] = r[i]
				}
				sum, err := stats.Summarize(col)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(sum.Mean, sum.SE) != fmt.Sprint(mean[i], se[i]) {
					t.Errorf("x %d: mean, se = %v, %v; stats.Summarize gives %v, %v", i, mean[i], se[i], sum.Mean, sum.SE)
				}
			}
		})
	}
	for _, bad := range [][][]float64{nil, {{1, 2}, {1}}, {{1, math.NaN()}}} {
		if _, _, err := MeanSE(bad); err == nil {
			t.Errorf("MeanSE(%v) accepted bad runs", bad)
		}
	}
}

func TestLearningCurvesBand(t *testing.T) {
	d := Curves{Title: "acc", Series: []SeedSeries{
		{Name: "EAA", X: []float64{1, 2}, Runs: [][]float64{{0.5, 0.7}, {0.7, 0.9}}},
		{Name: "GAA", X: []float64{1, 2}, Runs: [][]float64{{0.4, 0.6}}},
	}}
	c, err := LearningCurves("lc", d)
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	// EAA: mean line (first, so that the legend entry draws from it), lower edge, band height;
	// GAA (one seed): mean line only.
	if len(s) != 4 {
		t.Fatalf("%d series, want 4", len(s))
	}
	for i, want := range []struct {
		name, stack string
		pts         [][2]float64
	}{
		{"EAA", "", [][2]float64{{1, 0.6}, {2, 0.8}}},
		{"EAA", "band0", [][2]float64{{1, 0.5}, {2, 0.7}}}, // mean - SE: SE = 0.1 at both x
		{"EAA", "band0", [][2]float64{{1, 0.2}, {2, 0.2}}}, // 2 SE
		{"GAA", "", [][2]float64{{1, 0.4}, {2, 0.6}}},
	} {
		if s[i]["name"] != want.name || (s[i]["stack"] != nil) != (want.stack != "") {
			t.Errorf("series %d: name %v stack %v, want %s %q", i, s[i]["name"], s[i]["stack"], want.name, want.stack)
		}
		if want.stack != "" && (s[i]["stack"] != want.stack || s[i]["stackStrategy"] != "all") {
			t.Errorf("series %d: stack %v strategy %v", i, s[i]["stack"], s[i]["stackStrategy"])
		}
		for j, p := range pointsOf(t, s[i]) {
			if math.Abs(p[0]-want.pts[j][0]) > 1e-12 || math.Abs(p[1]-want.pts[j][1]) > 1e-9 {
				t.Errorf("series %d point %d = %v, want %v", i, j, p, want.pts[j])
			}
		}
	}
	if _, ok := s[2]["areaStyle"]; !ok {
		t.Error("band height series has no areaStyle")
	}
	if z0, z1 := s[0]["z"].(float64), s[1]["z"].(float64); z1 >= z0 {
		t.Errorf("band z %v is not below its line's %v", z1, z0)
	}
	if s[0]["lineStyle"].(map[string]any)["color"] != s[2]["lineStyle"].(map[string]any)["color"] {
		t.Error("band and line of EAA have different colours")
	}
	x := c.Option["xAxis"].([]any)[0].(map[string]any)
	if x["type"] != "value" || x["name"] != "round" {
		t.Errorf("x axis = %v", x)
	}
}

func TestCurvesBuilders(t *testing.T) {
	one := func(x ...float64) Curves {
		runs := [][]float64{make([]float64, len(x))}
		return Curves{Series: []SeedSeries{{Name: "a", X: x, Runs: runs}}}
	}
	for _, tc := range []struct {
		name    string
		build   func(string, Curves) (*Chart, error)
		d       Curves
		wantErr string
		xLabel  string
	}{
		{"learning ok", LearningCurves, one(1, 2, 3), "", "round"},
		{"learning fractional round", LearningCurves, one(1, 2.5), "whole number", ""},
		{"retention ok", Retention, one(0.1, 0.5, 1), "", "fraction of data retained"},
		{"retention above 1", Retention, one(0.5, 1.5), "not in (0, 1]", ""},
		{"layers ok", VersusLayers, one(0, 1, 2, 3), "", "Bayesian layers n"},
		{"layers negative", VersusLayers, one(-1, 0), "negative", ""},
		{"heterogeneity ok", VersusHeterogeneity, one(0, 0.5, 1), "", "heterogeneity h"},
		{"beta log ok", NLLVersusBeta, Curves{LogX: true, Series: one(0.01, 0.1, 1).Series}, "", "β"},
		{"beta log zero", NLLVersusBeta, Curves{LogX: true, Series: one(0, 1).Series}, "positive on a log axis", ""},
		{"no series", LearningCurves, Curves{}, "no series", ""},
		{"decreasing x", LearningCurves, one(2, 1), "must increase", ""},
		{"nan x", LearningCurves, one(1, math.NaN()), "NaN", ""},
		{"short run", LearningCurves, Curves{Series: []SeedSeries{{Name: "a", X: []float64{1, 2}, Runs: [][]float64{{1}}}}}, "run 0 has 1 values", ""},
		{"no name", LearningCurves, Curves{Series: []SeedSeries{{X: []float64{1}, Runs: [][]float64{{1}}}}}, "no name", ""},
		{"duplicate", LearningCurves, Curves{Series: []SeedSeries{one(1).Series[0], one(1).Series[0]}}, "two series", ""},
		{"inf value", LearningCurves, Curves{Series: []SeedSeries{{Name: "a", X: []float64{1}, Runs: [][]float64{{math.Inf(1)}}}}}, "+Inf", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.build("c", tc.d)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			x := c.Option["xAxis"].([]any)[0].(map[string]any)
			if x["name"] != tc.xLabel {
				t.Errorf("x label = %v, want %q", x["name"], tc.xLabel)
			}
			if tc.d.LogX && x["type"] != "log" {
				t.Errorf("x axis type = %v, want log", x["type"])
			}
		})
	}
}

// manySeries returns n series of two seeds each, named name-0, name-1, ...
func manySeries(n int) []SeedSeries {
	var ss []SeedSeries
	for i := 0; i < n; i++ {
		v := 0.1 + 0.01*float64(i)
		ss = append(ss, SeedSeries{Name: fmt.Sprintf("setting-%d", i), X: []float64{1, 2, 3},
			Runs: [][]float64{{v, 0.2, 0.3 + v}, {v + 0.02, 0.21, 0.3 + v}}})
	}
	return ss
}

// A 12-series figure with bands: every legend entry shows a marker and a dash besides its colour,
// no two entries share all three, and none share both marker and dash (grayscale print).
func TestLegendHandlesAreDistinct(t *testing.T) {
	for _, n := range []int{12, 24} {
		c, err := LearningCurves("many", Curves{Series: manySeries(n)})
		if err != nil {
			t.Fatal(err)
		}
		hs := LegendHandles(c)
		if len(hs) != n {
			t.Fatalf("%d series: %d legend entries", n, len(hs))
		}
		all, gray := map[[3]string]string{}, map[[2]string]string{}
		for _, h := range hs {
			if h.Marker == "none" || h.Color == "" {
				t.Errorf("%d series: entry %q shows no marker or no colour: %+v", n, h.Name, h)
			}
			k3, k2 := [3]string{h.Color, h.Marker, h.Dash}, [2]string{h.Marker, h.Dash}
			if o, dup := all[k3]; dup {
				t.Errorf("%d series: %q and %q share colour, marker and dash %v", n, o, h.Name, k3)
			}
			if o, dup := gray[k2]; dup {
				t.Errorf("%d series: %q and %q share marker and dash %v (alike in grayscale)", n, o, h.Name, k2)
			}
			all[k3], gray[k2] = h.Name, h.Name
		}
	}
}

// Legends follow the tables' order (baselines, then the rules as aggregate lists them) and show
// display names, whatever order the series come in.
func TestLegendOrderAndDisplayNames(t *testing.T) {
	var ss []SeedSeries
	for _, n := range []string{"GAA", "beta-predbayes", "CF", "fedavg", "EAA"} {
		ss = append(ss, SeedSeries{Name: n, X: []float64{1, 2}, Runs: [][]float64{{0.5, 0.6}, {0.5, 0.7}}})
	}
	c, err := LearningCurves("order", Curves{Series: ss})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range LegendHandles(c) {
		got = append(got, h.Name)
	}
	want := []string{"FedAvg", "EAA", "GAA", "CF", "β-PredBayes"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("legend = %v, want %v", got, want)
	}
}
