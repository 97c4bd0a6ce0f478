package stats

import (
	"math"
	"testing"
)

// TestCriticalT checks Holm's first threshold against the closed form of Student's t with 2 degrees
// of freedom, t = (2p - 1) / sqrt(2 p (1 - p)): 3 seeds (df 2) and 6 comparisons at 0.05 need
// p = 1 - 0.05/12, t = 10.886 (the bar that 3-seed findings of the report could not pass).
func TestCriticalT(t *testing.T) {
	for _, tc := range []struct {
		df    float64
		m     int
		level float64
	}{{2, 6, 0.05}, {2, 1, 0.05}, {2, 24, 0.05}} {
		p := 1 - tc.level/float64(2*tc.m)
		want := (2*p - 1) / math.Sqrt(2*p*(1-p))
		got, err := CriticalT(tc.df, tc.m, tc.level)
		if err != nil || math.Abs(got-want) > 1e-9*want {
			t.Errorf("CriticalT(%v, %d, %v) = %v, %v; want %v", tc.df, tc.m, tc.level, got, err, want)
		}
	}
	if got, _ := CriticalT(2, 6, 0.05); math.Abs(got-10.886) > 0.001 {
		t.Errorf("CriticalT(2, 6, 0.05) = %.4f, want 10.886", got)
	}
	for _, bad := range []struct {
		df    float64
		m     int
		level float64
	}{{0, 1, 0.05}, {2, 0, 0.05}, {2, 1, 0}, {2, 1, 1}, {math.NaN(), 1, 0.05}} {
		if _, err := CriticalT(bad.df, bad.m, bad.level); err == nil {
			t.Errorf("CriticalT(%v, %d, %v): no error", bad.df, bad.m, bad.level)
		}
	}
}

// TestSeedsForPower checks the seeds against hand computations with printed t quantiles (an effect
// of one SD, one comparison at 0.05):
//   - power 0.5, paired: sqrt(n) >= t(0.975, n-1): n = 6 gives 2.449 < 2.571, n = 7 gives 2.646 >= 2.447;
//   - power 0.8, paired: sqrt(n) >= t(0.975, n-1) + t(0.8, n-1): n = 9 gives 3.000 < 2.306 + 0.889,
//     n = 10 gives 3.162 >= 2.262 + 0.883 (the exact noncentral-t power at n = 10 is 0.80);
//   - Holm over 6 at power 0.5 (closed forms: df 1 t = tan(pi (p - 1/2)), df 2 as in TestCriticalT):
//     an effect of 7 SD needs 3 seeds (n = 2: 7 sqrt(2) = 9.90 < 76.39; n = 3: 7 sqrt(3) = 12.12 >=
//     10.886), one of 6 SD more than 3 (6 sqrt(3) = 10.39 < 10.886);
//   - Welch with the same per-seed SD: df 2(n - 1): n = 6 gives 2.449 >= t(0.975, 10) = 2.228, n = 5
//     gives 2.236 < t(0.975, 8) = 2.306, so 6.
func TestSeedsForPower(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     Power
		m     int
		power float64
		want  int
	}{
		{"pass, paired", Power{Diff: 1, SD: 1, Paired: true}, 1, 0.5, 7},
		{"80 %, paired", Power{Diff: -1, SD: 1, Paired: true}, 1, 0.8, 10},
		{"pass, Holm over 6", Power{Diff: 7, SD: 1, Paired: true}, 6, 0.5, 3},
		{"pass, Welch", Power{Diff: 1, SD: 1}, 1, 0.5, 6},
	} {
		n, ok, err := SeedsForPower(tc.p, tc.m, 0.05, tc.power, 1000)
		if err != nil || !ok || n != tc.want {
			t.Errorf("%s: SeedsForPower = %d, %v, %v; want %d", tc.name, n, ok, err, tc.want)
		}
	}
	if n, _, _ := SeedsForPower(Power{Diff: 6, SD: 1, Paired: true}, 6, 0.05, 0.5, 1000); n <= 3 {
		t.Errorf("an effect of 6 SD, Holm over 6: %d seeds, want more than 3", n)
	}
	if n, ok, err := SeedsForPower(Power{Diff: 0.001, SD: 1, Paired: true}, 1, 0.05, 0.8, 50); ok || err != nil {
		t.Errorf("a tiny effect: SeedsForPower = %d, %v, %v; want not enough seeds", n, ok, err)
	}
	for _, bad := range []Power{{Diff: math.NaN(), SD: 1}, {Diff: 1, SD: 0}, {Diff: 1, SD: math.Inf(1)}} {
		if _, _, err := SeedsForPower(bad, 1, 0.05, 0.8, 10); err == nil {
			t.Errorf("SeedsForPower(%+v): no error", bad)
		}
	}
	if _, _, err := SeedsForPower(Power{Diff: 1, SD: 1}, 1, 0.05, 0.3, 10); err == nil {
		t.Error("power 0.3: no error")
	}
}
