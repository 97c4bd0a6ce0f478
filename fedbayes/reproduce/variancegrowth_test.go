package reproduce

import (
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
)

// growthRuns makes one run per seed of variant, evaluated at rounds 10, 20 and 30 with the given
// accuracies and spreads and the clients' disagreement on log σ² (none recorded when dis < 0).
func growthRuns(variant string, acc, spread [3]float64, dis float64) runSet {
	var rs runSet
	for seed := int64(0); seed < 2; seed++ {
		r := results.Run{Meta: results.Meta{Setting: "s-" + variant, Seed: seed, Labels: map[string]string{"variant": variant}}}
		for i, round := range []int{10, 20, 30} {
			m := map[string]float64{results.Accuracy: acc[i], results.Spread: spread[i]}
			if dis >= 0 {
				m[results.VarDisagreement] = dis
			}
			r.Rows = append(r.Rows, results.Row{Round: round, Metrics: m})
		}
		rs = append(rs, r)
	}
	return rs
}

func TestKeptVarianceGrowth(t *testing.T) {
	shrink := growthRuns("GAA", [3]float64{0.84, 0.86, 0.87}, [3]float64{0.01, 0.01, 0.01}, 0.001)
	for _, tc := range []struct {
		name string
		keep runSet
		want string // "" for no explanation
	}{
		{"falls as its spread grows", growthRuns("AALV", [3]float64{0.82, 0.84, 0.76}, [3]float64{16, 40, 120}, 0.004),
			"AALV peaks at round 20 (84.0%) and ends at 76.0% in round 30, its spread from 16 (round 10) to 120"},
		{"no fall", growthRuns("AALV", [3]float64{0.82, 0.84, 0.835}, [3]float64{16, 40, 120}, 0.004), ""},
		{"spread did not grow", growthRuns("AALV", [3]float64{0.82, 0.84, 0.76}, [3]float64{16, 20, 30}, 0.004), ""},
		{"clients disagreed", growthRuns("AALV", [3]float64{0.82, 0.84, 0.76}, [3]float64{16, 40, 120}, 0.2), ""},
		{"disagreement not recorded", growthRuns("AALV", [3]float64{0.82, 0.84, 0.76}, [3]float64{16, 40, 120}, -1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keptVarianceGrowth(append(tc.keep, shrink...), []string{"AALV"}, []string{"GAA"})
			if tc.want == "" {
				if got != "" {
					t.Fatalf("an explanation without its evidence: %s", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) || !strings.Contains(got, "GAA ends at 87.0% with spread 0.01") || !strings.Contains(got, "differ by at most 0.004") {
				t.Fatalf("got %q\nwant it to contain %q, GAA's end and the disagreement", got, tc.want)
			}
		})
	}
	if got := keptVarianceGrowth(shrink, []string{"AALV"}, []string{"GAA"}); got != "" {
		t.Fatalf("no runs of the kept rule: %q", got)
	}
}

// TestCollapseCourse checks the courses the collapse claim's evidence gives: each rule's course and,
// seed by seed, the reference's tail mean against the rule's; rules without runs are left out, and
// without runs of the reference there is no course.
func TestCollapseCourse(t *testing.T) {
	gaa := growthRuns("GAA", [3]float64{0.84, 0.86, 0.87}, [3]float64{10, 10, 10}, -1)
	eaa := growthRuns("EAA", [3]float64{0.82, 0.84, 0.76}, [3]float64{16, 40, 120}, -1)
	got := collapseCourse(append(gaa, eaa...), "GAA", []string{"EAA", "PPA"}, 2)
	for _, want := range []string{
		"GAA peaks at round 30 (87.0%) and ends at 87.0% in round 30, its spread from 10 (round 10) to 10",
		"EAA peaks at round 20 (84.0%) and ends at 76.0% in round 30, its spread from 16 (round 10) to 120; " +
			"over the last 2 evaluations, GAA ends above EAA in 2 of 2 seeds (differences +6.5 to +6.5 points)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("got %q\nwant it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "PPA") {
		t.Errorf("a rule without runs is described: %q", got)
	}
	if got := collapseCourse(eaa, "GAA", []string{"EAA"}, 2); got != "" {
		t.Errorf("no runs of the reference: %q", got)
	}
}
