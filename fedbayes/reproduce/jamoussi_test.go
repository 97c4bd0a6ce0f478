package reproduce

import (
	"fmt"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// TestHolmPerFamily checks that claims of separate families are corrected within their own family:
// a comparison with p about 0.02 passes Holm over its family of 2 but would fail over the 4 of both
// families together, and judged names each family.
func TestHolmPerFamily(t *testing.T) {
	seeds := []int64{0, 1, 2}
	base := stats.Sample{Seeds: seeds, Values: []float64{0.50, 0.52, 0.51}}
	// Paired differences -0.10, -0.11, -0.12 give p 0.0027; -0.05, -0.03, -0.07 give 0.049: below 0.05
	// as the second of a family of 2, above it (0.099) as the third of 4.
	strong := stats.Sample{Seeds: seeds, Values: []float64{0.40, 0.41, 0.39}}
	weak := stats.Sample{Seeds: seeds, Values: []float64{0.45, 0.49, 0.44}}
	// shift moves a sample's values (the paired differences stay), so that the two families' samples
	// differ and are four hypotheses.
	shift := func(s stats.Sample, by float64) stats.Sample {
		out := stats.Sample{Seeds: s.Seeds}
		for _, v := range s.Values {
			out.Values = append(out.Values, v+by)
		}
		return out
	}
	family := func(name string, by float64) claims {
		c := claims{family: name}
		c.below(name+" strong", shift(strong, by), shift(base, by), colAcc)
		c.below(name+" weak", shift(weak, by), shift(base, by), colAcc)
		return c
	}
	a, b := family("Acc", 0), family("NLL", 0.001)
	split := append(a.checks(), b.checks()...)
	var joined claims
	joined.items = append(append(joined.items, a.items...), b.items...)
	for _, tc := range []struct {
		name   string
		checks []check
		want   Verdict
		holm   int
		judged string
	}{
		{"one family per metric", split, Holds, 2, "4 paired t-tests, Holm within each metric: Acc over 2, NLL over 2; seeds 0–2"},
		{"one family for all", joined.checks(), Partly, 4, "4 paired t-tests, Holm over 4; seeds 0–2"},
	} {
		if v := judge(tc.checks); v != tc.want || tc.checks[1].holm != tc.holm {
			t.Errorf("%s: %s, Holm over %d; want %s over %d (%v)", tc.name, v, tc.checks[1].holm, tc.want, tc.holm, tc.checks)
		}
		if tc.name == "one family per metric" && judged(tc.checks) != tc.judged {
			t.Errorf("%s: judged %q, want %q", tc.name, judged(tc.checks), tc.judged)
		}
	}
}

// TestJamoussiExceptions checks that the same-layers finding names a rule more than twice the margin
// from every other rule with the same n, and only such a rule.
func TestJamoussiExceptions(t *testing.T) {
	runs := func(off map[string]float64) runSet {
		var rs runSet
		for n := 1; n <= 3; n++ {
			for _, r := range jamoussiRules {
				v := fmt.Sprintf("n%d-%s", n, r)
				for seed := int64(0); seed < 3; seed++ {
					rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v}, map[string]float64{
						results.Accuracy: 0.82 + off[v] + jitter(seed, v), results.ECE: 0.03 + jitter(seed, v+"e"), results.NLL: 0.48 + 4*off[v] + jitter(seed, v+"n")}))
				}
			}
		}
		return rs
	}
	for _, tc := range []struct {
		name string
		off  map[string]float64
		want []string
	}{
		{"alike", nil, nil},
		{"GAA apart at n = 3", map[string]float64{"n3-GAA": 0.021}, []string{"GAA at n = 3", "Acc by 2.10-2.10 points", "NLL by 0.084-0.084"}},
		// 0.9 points and 0.036 NLL from the others: within twice the margins (the NLL's beyond it).
		{"within twice the margin", map[string]float64{"n3-GAA": 0.009}, nil},
		// Two rules apart from the rest but not from each other: neither is apart from every other.
		{"two apart together", map[string]float64{"n3-GAA": 0.03, "n3-WB": 0.03}, nil},
	} {
		got := jamoussiExceptions(runs(tc.off))
		if (got == "") != (len(tc.want) == 0) {
			t.Errorf("%s: %q", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		if f := jamoussiAlike(runs(tc.off)); f.Caveat != got {
			t.Errorf("%s: caveat %q, want %q", tc.name, f.Caveat, got)
		}
	}
}

// TestJamoussiAlikeByLayers checks that the same-layers finding judges "the clients' variances
// differ" per layer count: with n1-EAA and n1-AALV at the same spread (alike) and n = 2, 3 apart by
// 50 %, only n = 1's weighting pairs are set aside: 6 pairs of AALV, EAA, RKLB and WB in 3 metrics,
// 18 of the 90 checks.
func TestJamoussiAlikeByLayers(t *testing.T) {
	var rs runSet
	for n := 1; n <= 3; n++ {
		for _, r := range jamoussiRules {
			v := fmt.Sprintf("n%d-%s", n, r)
			spread := 2.0
			if r == "AALV" && n > 1 {
				spread = 3.0
			}
			for seed := int64(0); seed < 3; seed++ {
				rs = append(rs, fakeRun("x-"+v, seed, map[string]string{"variant": v}, map[string]float64{
					results.Accuracy: 0.82 + jitter(seed, v), results.ECE: 0.03 + jitter(seed, v+"e"), results.NLL: 0.48 + jitter(seed, v+"n"),
					results.Spread: spread}))
			}
		}
	}
	f := jamoussiAlike(rs)
	if f.Aside != 18 || f.Tally[0]+f.Tally[1]+f.Tally[2] != 72 {
		t.Errorf("%d set aside, tally %v; want 18 aside of 90 (%s)", f.Aside, f.Tally, f.Evidence)
	}
	for _, want := range []string{"Precondition not met at n = 1", "Precondition met at n = 2", "Precondition met at n = 3", "18 more set aside by a precondition (below), of which"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence lacks %q: %s", want, f.Evidence)
		}
	}
}
