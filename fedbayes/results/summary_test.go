package results

import (
	"math"
	"reflect"
	"testing"
)

func TestSummarizeHandComputed(t *testing.T) {
	tests := []struct {
		name     string
		values   []float64
		mean, se float64
	}{
		// mean 2.5; deviations^2 2.25+0.25+0.25+2.25 = 5; s = sqrt(5/3); SE = s/2.
		{"1..4", []float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0/3) / 2},
		// mean 0.92; s = sqrt((0.0004+0+0.0004)/2) = 0.02; SE = 0.02/sqrt(3).
		{"three accuracies", []float64{0.90, 0.92, 0.94}, 0.92, 0.02 / math.Sqrt(3)},
		// Same spread far from zero: s = 1, SE = 1/sqrt(3) (a one-pass formula loses this).
		{"large offset", []float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, 1e9 + 2, 1 / math.Sqrt(3)},
		{"equal values", []float64{0.5, 0.5}, 0.5, 0},
		{"two values", []float64{0, 1}, 0.5, 0.5}, // s = sqrt(0.5), SE = sqrt(0.5)/sqrt(2)
	}
	for _, tc := range tests {
		s, err := Summarize(tc.values)
		if err != nil {
			t.Fatal(err)
		}
		if s.N != len(tc.values) || math.Abs(s.Mean-tc.mean) > 1e-12*math.Max(1, math.Abs(tc.mean)) || math.Abs(s.SE-tc.se) > 1e-12 {
			t.Errorf("%s: got %+v, want mean %v SE %v", tc.name, s, tc.mean, tc.se)
		}
	}
	s, err := Summarize([]float64{0.7})
	if err != nil || s.Mean != 0.7 || !math.IsNaN(s.SE) || s.N != 1 {
		t.Errorf("one value: %+v %v; want mean 0.7, SE NaN", s, err)
	}
	s, _ = Summarize([]float64{1, math.Inf(1)})
	if !math.IsInf(s.Mean, 1) {
		t.Errorf("an infinite seed must not be averaged away: %+v", s)
	}
	if _, err := Summarize(nil); err == nil {
		t.Error("summary of nothing accepted")
	}
}

// runOf builds an in-memory run (no files) with final accuracy acc.
func runOf(setting string, labels map[string]string, seed int64, rows ...Row) Run {
	return Run{Dir: RunName(setting, seed), Meta: Meta{Setting: setting, Labels: labels, Seed: seed}, Status: Status{State: Completed}, Rows: rows}
}

func TestGroupRuns(t *testing.T) {
	l := func(rule, clients string) map[string]string {
		return map[string]string{"rule": rule, "clients": clients}
	}
	runs := []Run{
		runOf("b100", l("gaa", "100"), 1, accRow(1, 0.1, 1)),
		runOf("a10", l("eaa", "10"), 2, accRow(1, 0.2, 1)),
		runOf("a9", l("eaa", "9"), 1, accRow(1, 0.3, 1)),
		runOf("a10", l("eaa", "10"), 1, accRow(1, 0.4, 1)),
	}
	groups, err := GroupRuns(runs, []string{"clients"})
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]string
	for _, g := range groups {
		keys = append(keys, g.Key)
	}
	if want := [][]string{{"9"}, {"10"}, {"100"}}; !reflect.DeepEqual(keys, want) {
		t.Errorf("keys %v, want numeric order %v", keys, want)
	}
	if got := groups[1].Seeds(); !reflect.DeepEqual(got, []int64{2, 1}) {
		t.Errorf("seeds of clients=10: %v", got)
	}
	s, err := groups[1].Summarize(Accuracy)
	if err != nil || math.Abs(s.Mean-0.3) > 1e-15 || math.Abs(s.SE-0.1) > 1e-15 || s.N != 2 {
		t.Errorf("clients=10 accuracy %+v %v; want 0.3 ± 0.1", s, err)
	}
	if groups[1].Name() != "clients=10" {
		t.Errorf("name %q", groups[1].Name())
	}

	errs := []struct {
		by   []string
		want string
	}{
		{nil, "no grouping labels"},
		{[]string{"seed"}, "seeds are what a group summarises"},
		{[]string{"rule", "rule"}, "given twice"},
		{[]string{"rule"}, "holds seed 1 twice"},
		{[]string{"dataset"}, `no label "dataset"`},
	}
	for _, e := range errs {
		_, err := GroupRuns(runs, e.by)
		wantErr(t, err, e.want)
	}
	_, err = GroupRuns(nil, []string{"rule"})
	wantErr(t, err, "no runs")
	_, err = Group{By: []string{"rule"}, Key: []string{"x"}}.Summarize(Accuracy)
	wantErr(t, err, "group rule=x is empty")
}

func TestCurve(t *testing.T) {
	// Seed 1 is evaluated at rounds 1, 2, 3; seed 2 at rounds 1 and 3 only.
	runs := []Run{
		runOf("s", nil, 1, accRow(1, 0.5, 1), accRow(2, 0.6, 1), accRow(3, 0.7, 1)),
		runOf("s", nil, 2, accRow(1, 0.7, 1), accRow(3, 0.9, 1)),
	}
	curves, err := Curves(runs, []string{SettingLabel}, Accuracy)
	if err != nil || len(curves) != 1 {
		t.Fatalf("%d curves, %v", len(curves), err)
	}
	c := curves[0]
	if !reflect.DeepEqual(c.Rounds, []int{1, 2, 3}) {
		t.Fatalf("rounds %v", c.Rounds)
	}
	want := []Summary{{0.6, 0.1, 2}, {0.6, math.NaN(), 1}, {0.8, 0.1, 2}}
	for i, w := range want {
		p := c.Points[i]
		if p.N != w.N || math.Abs(p.Mean-w.Mean) > 1e-12 || (w.N > 1 && math.Abs(p.SE-w.SE) > 1e-12) || (w.N == 1 && !math.IsNaN(p.SE)) {
			t.Errorf("round %d: %+v, want %+v", c.Rounds[i], p, w)
		}
	}
	_, err = Curves(runs, []string{SettingLabel}, "brier")
	wantErr(t, err, `no run recorded metric "brier"`)
}
