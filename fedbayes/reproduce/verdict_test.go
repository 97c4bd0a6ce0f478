package reproduce

import (
	"testing"

	"fedbayes.dev/fedbayes/stats"
)

// TestJudged checks the line that says how a finding was judged: tests by kind, Holm's correction,
// and the seeds as ranges.
func TestJudged(t *testing.T) {
	for _, tc := range []struct {
		seeds []int64
		want  string
	}{
		{nil, ""},
		{[]int64{3}, "3"},
		{[]int64{0, 1, 2}, "0–2"},
		{[]int64{1, 2, 4, 5, 6, 9}, "1, 2, 4–6, 9"},
	} {
		if got := seedList(tc.seeds); got != tc.want {
			t.Errorf("seedList(%v) = %q, want %q", tc.seeds, got, tc.want)
		}
	}
	a := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.80, 0.81, 0.82}}
	b := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.85, 0.87, 0.86}}
	w := stats.Sample{Seeds: []int64{5, 6, 7}, Values: []float64{0.90, 0.91, 0.93}}
	var c claims
	c.below("a < b", a, b, colAcc)
	c.below("a < w", a, w, colAcc)
	c.same("a = b", a, b, accMargin, colAcc)
	c.within("a in range", a, 0.7, 0.9, colAcc)
	c.fixed("computed", true)
	c.fixed("computed again", true)
	// a < b and a = b compare the same two samples: one hypothesis, so Holm runs over two.
	want := "1 paired t-test, 1 Welch t-test, 1 paired t-test and TOST, 1 95 % interval, 2 exact comparisons, Holm over the 2 distinct comparisons that could be made; seeds 0–2, 5–7"
	if got := judged(c.checks()); got != want {
		t.Errorf("judged = %q, want %q", got, want)
	}
}

// TestJudgedDistinct checks the Holm family of a finding without repeated comparisons: every
// comparison counts.
func TestJudgedDistinct(t *testing.T) {
	a := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.80, 0.81, 0.82}}
	b := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.85, 0.87, 0.86}}
	w := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.90, 0.91, 0.93}}
	var c claims
	c.below("a < b", a, b, colAcc)
	c.below("a < w", a, w, colAcc)
	if got, want := judged(c.checks()), "2 paired t-tests, Holm over 2; seeds 0–2"; got != want {
		t.Errorf("judged = %q, want %q", got, want)
	}
}
