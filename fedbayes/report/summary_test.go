package report

import (
	"math"
	"reflect"
	"testing"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// runOf builds an in-memory run (no files) with final accuracy acc.
func runOf(setting string, labels map[string]string, seed int64, rows ...results.Row) results.Run {
	return results.Run{Dir: results.RunName(setting, seed), Meta: results.Meta{Setting: setting, Labels: labels, Seed: seed}, Status: results.Status{State: results.Completed}, Rows: rows}
}

func TestGroupRuns(t *testing.T) {
	l := func(rule, clients string) map[string]string {
		return map[string]string{"rule": rule, "clients": clients}
	}
	runs := []results.Run{
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
	s, err := groups[1].Summarize(results.Accuracy)
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
	_, err = Group{By: []string{"rule"}, Key: []string{"x"}}.Summarize(results.Accuracy)
	wantErr(t, err, "group rule=x is empty")
}

func TestCurve(t *testing.T) {
	// Seed 1 is evaluated at rounds 1, 2, 3; seed 2 at rounds 1 and 3 only.
	runs := []results.Run{
		runOf("s", nil, 1, accRow(1, 0.5, 1), accRow(2, 0.6, 1), accRow(3, 0.7, 1)),
		runOf("s", nil, 2, accRow(1, 0.7, 1), accRow(3, 0.9, 1)),
	}
	curves, err := Curves(runs, []string{results.SettingLabel}, results.Accuracy)
	if err != nil || len(curves) != 1 {
		t.Fatalf("%d curves, %v", len(curves), err)
	}
	c := curves[0]
	if !reflect.DeepEqual(c.Rounds, []int{1, 2, 3}) {
		t.Fatalf("rounds %v", c.Rounds)
	}
	want := []stats.Summary{{Mean: 0.6, SE: 0.1, N: 2}, {Mean: 0.6, SE: math.NaN(), N: 1}, {Mean: 0.8, SE: 0.1, N: 2}}
	for i, w := range want {
		p := c.Points[i]
		if p.N != w.N || math.Abs(p.Mean-w.Mean) > 1e-12 || (w.N > 1 && math.Abs(p.SE-w.SE) > 1e-12) || (w.N == 1 && !math.IsNaN(p.SE)) {
			t.Errorf("round %d: %+v, want %+v", c.Rounds[i], p, w)
		}
	}
	_, err = Curves(runs, []string{results.SettingLabel}, "brier")
	wantErr(t, err, `no run recorded metric "brier"`)
}
