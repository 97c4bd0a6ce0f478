package notebook

import (
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// samplingRun is a run of sampler name and seed whose recorded rounds have the given returned and
// sampled clients (sampled nil: all returned) and whose last round has the accuracy acc.
func samplingRun(name string, seed int64, acc float64, rounds ...[2][]int) results.Run {
	r := results.Run{Dir: name + "-" + string(rune('0'+seed)), Meta: results.Meta{Setting: "s-" + name, Seed: seed, Labels: map[string]string{"variant": name}}}
	for i, c := range rounds {
		r.Rows = append(r.Rows, results.Row{Round: 5 * (i + 1), Clients: c[0], Sampled: c[1], Metrics: map[string]float64{results.Accuracy: acc}})
	}
	return r
}

// TestSamplers checks a hand-computed case: 4 clients of sizes 10, 20, 30, 40 (100 examples).
// "uniform" returns {0, 1} then {2, 3} (30 % and 70 % of the data) and {0, 1} twice: 40 %, three distinct clients
// on average over its two seeds ({0, 1, 2, 3} and {0, 1}); "drops" samples 2 and gets 1 back.
func TestSamplers(t *testing.T) {
	sizes := []int{10, 20, 30, 40}
	runs := []results.Run{
		samplingRun("uniform", 0, 0.90, [2][]int{{0, 1}, nil}, [2][]int{{2, 3}, nil}),
		samplingRun("uniform", 1, 0.92, [2][]int{{0, 1}, nil}, [2][]int{{0, 1}, nil}),
		samplingRun("drops", 0, 0.70, [2][]int{{3}, {1, 3}}, [2][]int{{0}, {0, 2}}),
		samplingRun("drops", 1, 0.72, [2][]int{{3}, {1, 3}}, [2][]int{{3}, {2, 3}}),
	}
	ss, err := Samplers(runs, "variant", sizes)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Sampler{}
	for _, s := range ss {
		byName[s.Name] = s
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	u, d := byName["uniform"], byName["drops"]
	// uniform: shares 0.3, 0.7, 0.3, 0.3; distinct 4 and 2.
	if !near(u.Returned, 2) || !near(u.Sampled, 2) || !near(u.DataShare, 0.4) || !near(u.Distinct, 3) || !near(u.Accuracy.Mean, 0.91) {
		t.Errorf("uniform = %+v", u)
	}
	// drops: shares 0.4, 0.1, 0.4, 0.4; distinct 2 and 1.
	if !near(d.Returned, 1) || !near(d.Sampled, 2) || !near(d.DataShare, 0.325) || !near(d.Distinct, 1.5) {
		t.Errorf("drops = %+v", d)
	}
	text := SamplerSummary(ss)
	for _, want := range []string{"from 32 % of the data (drops) to 40 % (uniform)", "drops returned 1.0 of 2.0 sampled",
		"highest with uniform (0.910 ± 0.010) and lowest with drops (0.710 ± 0.010)", "14.1 combined standard errors, beyond two"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary %q\nlacks %q", text, want)
		}
	}
	var b strings.Builder
	if err := SamplerTable(ss).Write(&b); err != nil || !strings.Contains(b.String(), "1.0 / 2.0") || !strings.Contains(b.String(), "32 %") {
		t.Errorf("table:\n%s%v", b.String(), err)
	}
	// Accuracies within two combined SEs are said not to be told apart.
	close := []Sampler{{Name: "a", Returned: 1, Sampled: 1, Accuracy: stats.Summary{Mean: 0.90, SE: 0.01, N: 3}},
		{Name: "b", Returned: 1, Sampled: 1, Accuracy: stats.Summary{Mean: 0.89, SE: 0.01, N: 3}}}
	if text := SamplerSummary(close); !strings.Contains(text, "0.7 combined standard errors, within two of them: 3 seeds do not tell") || strings.Contains(text, "dropouts") {
		t.Errorf("close accuracies: %q", text)
	}
	for _, tc := range []struct {
		name  string
		runs  []results.Run
		sizes []int
		want  string
	}{
		{"no sizes", runs, nil, "no client sizes"},
		{"client out of range", []results.Run{samplingRun("x", 0, 1, [2][]int{{7}, nil})}, sizes, "client 7 of 4"},
		{"no clients recorded", []results.Run{samplingRun("x", 0, 1, [2][]int{nil, nil})}, sizes, "no row naming its clients"},
	} {
		if _, err := Samplers(tc.runs, "variant", tc.sizes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
