package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestReliabilityDiagram(t *testing.T) {
	ece := 0.05
	c, err := ReliabilityDiagram("rel", Reliability{Series: []ReliabilitySeries{{
		Name: "GAA", ECE: &ece,
		Bins: []ReliabilityBin{{0.1, 0.2, 0}, {0.3, 0.25, 4}, {0.9, 0.8, 10}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	if len(s) != 2 || s[0]["name"] != "perfect calibration" || s[1]["name"] != "GAA (ECE 0.050)" {
		t.Fatalf("series names: %v, %v", s[0]["name"], s[len(s)-1]["name"])
	}
	if got := pointsOf(t, s[0]); len(got) != 2 || got[0] != [2]float64{0, 0} || got[1] != [2]float64{1, 1} {
		t.Errorf("diagonal = %v", got)
	}
	pts := pointsOf(t, s[1])
	if len(pts) != 2 || pts[0] != [2]float64{0.3, 0.25} || pts[1] != [2]float64{0.9, 0.8} {
		t.Errorf("points = %v, want the two non-empty bins", pts)
	}
	for _, tc := range []struct {
		name    string
		d       Reliability
		wantErr string
	}{
		{"no series", Reliability{}, "no series"},
		{"accuracy above 1", Reliability{Series: []ReliabilitySeries{{Name: "a", Bins: []ReliabilityBin{{0.5, 1.5, 1}}}}}, "not in [0, 1]"},
		{"all empty", Reliability{Series: []ReliabilitySeries{{Name: "a", Bins: []ReliabilityBin{{0.5, 0.5, 0}}}}}, "every bin is empty"},
		{"negative count", Reliability{Series: []ReliabilitySeries{{Name: "a", Bins: []ReliabilityBin{{0.5, 0.5, -1}}}}}, "negative"},
		{"unordered", Reliability{Series: []ReliabilitySeries{{Name: "a", Bins: []ReliabilityBin{{0.5, 0.5, 1}, {0.4, 0.5, 1}}}}}, "below the previous"},
		{"nan ece", Reliability{Series: []ReliabilitySeries{{Name: "a", ECE: ptr(math.NaN()), Bins: []ReliabilityBin{{0.5, 0.5, 1}}}}}, "ECE is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReliabilityDiagram("r", tc.d); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestLearnedSpread(t *testing.T) {
	d := Spread{Rules: []string{"EAA", "GAA"}, LogY: true, Groups: []SpreadGroup{
		{Name: "FMNIST", Mean: []float64{40, 3}, SE: []float64{2, 0.1}},
		{Name: "SVHN", Mean: []float64{60, 4}},
	}}
	c, err := LearnedSpread("spread", d)
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	// Two bar series and one error-bar series (only FMNIST has standard errors).
	if len(s) != 3 || s[0]["type"] != "bar" || s[1]["type"] != "bar" || s[2]["type"] != "line" {
		t.Fatalf("series = %v", s)
	}
	first := s[0]["data"].([]any)[0].(map[string]any)
	if first["value"] != 40.0 || first["label"] != nil {
		t.Errorf("first bar = %v (no ± label: error bars instead)", first)
	}
	// Bars are 35% of a band each, side by side: FMNIST's error bars sit at r - 0.35 + 0.175.
	want := []any{[]any{-0.175, 38.0}, []any{-0.175, 42.0}, []any{-0.175, "-"},
		[]any{0.825, 2.9}, []any{0.825, 3.1}, []any{0.825, "-"}}
	if got := s[2]["data"].([]any); fmt.Sprint(got) != fmt.Sprint(want) || s[2]["xAxisIndex"] != 1.0 || s[2]["name"] != "FMNIST" {
		t.Errorf("error bars %v (axis %v, name %v), want %v", got, s[2]["xAxisIndex"], s[2]["name"], want)
	}
	if s[0]["barWidth"] != "35%" || s[0]["barGap"] != "0%" {
		t.Errorf("bar width %v gap %v", s[0]["barWidth"], s[0]["barGap"])
	}
	xs := c.Option["xAxis"].([]any)
	x, hidden := xs[0].(map[string]any), xs[1].(map[string]any)
	y := c.Option["yAxis"].([]any)[0].(map[string]any)
	if x["type"] != "category" || len(x["data"].([]any)) != 2 || y["type"] != "log" {
		t.Errorf("axes: x %v, y %v", x, y)
	}
	if hidden["min"] != -0.5 || hidden["max"] != 1.5 || hidden["show"] != false {
		t.Errorf("hidden value axis %v", hidden)
	}
	// Bars start at the power of ten below the lowest value (2.9), not at 1.
	if y["min"] != 1.0 || y["startValue"] != 1.0 {
		t.Errorf("log axis min %v startValue %v, want 1", y["min"], y["startValue"])
	}
	small, err := LearnedSpread("small", Spread{Rules: []string{"GAA"}, LogY: true, Groups: []SpreadGroup{{Name: "a", Mean: []float64{0.031}, SE: []float64{1.7e-7}}}})
	if err != nil {
		t.Fatal(err)
	}
	if y := small.Option["yAxis"].([]any)[0].(map[string]any); y["startValue"] != 0.01 {
		t.Errorf("small spreads: startValue %v, want 0.01", y["startValue"])
	}
	for _, tc := range []struct {
		name    string
		d       Spread
		wantErr string
	}{
		{"no rules", Spread{Groups: d.Groups}, "no rules"},
		{"no groups", Spread{Rules: d.Rules}, "no groups"},
		{"short", Spread{Rules: d.Rules, Groups: []SpreadGroup{{Name: "a", Mean: []float64{1}}}}, "1 means for 2 rules"},
		{"zero on log", Spread{Rules: d.Rules, LogY: true, Groups: []SpreadGroup{{Name: "a", Mean: []float64{1, 0}}}}, `rule "GAA" must be positive`},
		{"negative se", Spread{Rules: d.Rules, Groups: []SpreadGroup{{Name: "a", Mean: []float64{1, 1}, SE: []float64{1, -1}}}}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LearnedSpread("s", tc.d); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestLearnedSpreadUndefinedSE checks the one-seed convention (stats.Summarize): a NaN standard
// error is undefined and draws no error bar, in Go and through a figure spec's JSON (null).
func TestLearnedSpreadUndefinedSE(t *testing.T) {
	nan := math.NaN()
	d := Spread{Rules: []string{"EAA", "GAA"}, LogY: true, Groups: []SpreadGroup{
		{Name: "FMNIST", Mean: []float64{40, 3}, SE: []float64{nan, 0.1}}, // EAA of one seed
		{Name: "SVHN", Mean: []float64{60, 4}, SE: []float64{nan, nan}},   // one seed throughout
	}}
	f, err := NewFigureSpec("spread", "learned_spread", "column", d)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"se":[null,0.1]`, `"se":[null,null]`} {
		if !strings.Contains(string(f.Data), want) {
			t.Errorf("spec data %s, want %s", f.Data, want)
		}
	}
	direct, err := LearnedSpread("spread", d)
	if err != nil {
		t.Fatal(err)
	}
	fromSpec, err := f.Build()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Chart{"direct": direct, "from spec": fromSpec} {
		s := seriesOf(t, c)
		// Two bar series and one error-bar series: FMNIST's, on GAA only; SVHN has none.
		if len(s) != 3 || s[2]["type"] != "line" || s[2]["name"] != "FMNIST" {
			t.Fatalf("%s: series = %v", name, s)
		}
		want := []any{[]any{0.825, 2.9}, []any{0.825, 3.1}, []any{0.825, "-"}}
		if got := s[2]["data"].([]any); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: error bars %v, want %v", name, got, want)
		}
	}
	var back Spread
	if err := decodeStrict(f.Data, &back); err != nil {
		t.Fatal(err)
	}
	if se := back.Groups[0].SE; len(se) != 2 || !math.IsNaN(se[0]) || se[1] != 0.1 {
		t.Errorf("decoded SE %v, want [NaN 0.1]", se)
	}
	if se := back.Groups[1].SE; len(se) != 2 || !math.IsNaN(se[0]) || !math.IsNaN(se[1]) {
		t.Errorf("decoded SE %v, want [NaN NaN]", se)
	}
	inf := Spread{Rules: d.Rules, Groups: []SpreadGroup{{Name: "a", Mean: []float64{1, 1}, SE: []float64{math.Inf(1), 1}}}}
	if _, err := LearnedSpread("s", inf); err == nil || !strings.Contains(err.Error(), "infinite") {
		t.Errorf("infinite SE: error = %v, want one saying infinite", err)
	}
}

func TestPartitionHeatmap(t *testing.T) {
	c, err := PartitionHeatmap("part", Partition{Counts: [][]int{{5, 0, 1}, {0, 7, 2}}, ClassNames: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	data := s[0]["data"].([]any)
	if s[0]["type"] != "heatmap" || len(data) != 6 {
		t.Fatalf("series = %v", s)
	}
	// Cell (class 1, client 1) holds 7.
	v := data[4].(map[string]any)["value"].([]any)
	if v[0] != 1.0 || v[1] != 1.0 || v[2] != 7.0 {
		t.Errorf("cell 4 = %v, want [1 1 7]", v)
	}
	vm := c.Option["visualMap"].([]any)[0].(map[string]any)
	if vm["max"] != 7.0 {
		t.Errorf("visual map max = %v, want 7", vm["max"])
	}
	y := c.Option["yAxis"].([]any)[0].(map[string]any)
	if y["inverse"] != true || len(y["data"].([]any)) != 2 {
		t.Errorf("y axis = %v", y)
	}
	for _, tc := range []struct {
		name    string
		d       Partition
		wantErr string
	}{
		{"empty", Partition{}, "no clients"},
		{"ragged", Partition{Counts: [][]int{{1, 2}, {1}}}, "client 1 has 1 classes"},
		{"negative", Partition{Counts: [][]int{{1, -2}}}, "client 0, class 1: negative"},
		{"names", Partition{Counts: [][]int{{1, 2}}, ClassNames: []string{"a"}}, "1 class names for 2 classes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := PartitionHeatmap("p", tc.d); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestPartitionHeatmapSizes checks the size panel: one bar per client of its examples over every
// class, on the heatmap's client rows, in a grid of its own beside the heatmap's (also when the
// chart is styled again at another width), not coloured by the counts' scale, with the range of
// sizes in the caption.
func TestPartitionHeatmapSizes(t *testing.T) {
	c, err := PartitionHeatmap("part", Partition{Counts: [][]int{{5, 0, 1}, {0, 7, 2}, {1, 1, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	if len(s) != 2 || s[1]["type"] != "bar" || s[1]["xAxisIndex"] != 1.0 || s[1]["yAxisIndex"] != 1.0 {
		t.Fatalf("series = %v, want the heatmap and a bar series on axes 1", s)
	}
	if got := fmt.Sprint(s[1]["data"]); got != "[6 9 3]" {
		t.Errorf("sizes %s, want [6 9 3]", got)
	}
	y := c.Option["yAxis"].([]any)[1].(map[string]any)
	if y["inverse"] != true || len(y["data"].([]any)) != 3 {
		t.Errorf("the sizes' client axis = %v, want the heatmap's three clients from the top", y)
	}
	if vm := c.Option["visualMap"].([]any)[0].(map[string]any); vm["seriesIndex"] != 0.0 {
		t.Errorf("visual map applies to %v, want the heatmap only", vm["seriesIndex"])
	}
	if want := "3 to 9 (the largest 3 times the smallest)"; !strings.Contains(c.Caption, want) {
		t.Errorf("caption %q, want %q", c.Caption, want)
	}
	for _, width := range []int{DefaultWidth, 500, DefaultWidth} {
		c, err = c.Styled(ScreenStyle, width, 0)
		if err != nil {
			t.Fatal(err)
		}
		grids := c.Option["grid"].([]any)
		main, side := grids[0].(map[string]any), grids[1].(map[string]any)
		panel := SizePanelShare * float64(width)
		if side["width"] != "20%" || side["right"].(float64) != 16 || main["right"].(float64) < 16+panel {
			t.Errorf("width %d: grids %v and %v overlap or lost the panel's share", width, main, side)
		}
	}
}
