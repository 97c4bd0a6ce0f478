package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

// TestVerdictOfPreconditions checks the verdict rule with preconditions on hand-made tallies: an unmet
// precondition sets aside only the checks that need its mechanism (so it never hides a significant
// result of another mechanism), makes the finding not testable only when it sets aside every check,
// and with givenOnly sets aside the checks whose outcome the set-up gives (agreement, or for a check
// whose formulas give the reverse order, a contradiction) but keeps an outcome against it.
func TestVerdictOfPreconditions(t *testing.T) {
	agree := func(m mechanism) check { return check{outcome: agrees, needs: m, given: agrees} }
	contra := func(m mechanism) check { return check{outcome: contradicts, needs: m, given: agrees} }
	open := func(m mechanism) check { return check{outcome: undecided, needs: m, given: agrees} }
	// reversed: a check whose set-up alone gives a contradiction (the formulas order the pair the
	// other way), with the outcome o.
	reversed := func(m mechanism, o outcome) check { return check{outcome: o, needs: m, given: contradicts} }
	unmet := precondition{needs: varianceWeighting, why: "equal client variances"}
	met := precondition{needs: varianceWeighting, met: true, why: "they differ"}
	arith := precondition{needs: spreadArithmetic, givenOnly: true, why: "equal client variances"}
	frozen := precondition{needs: frozenArithmetic, why: "frozen variances"}
	untrained := precondition{needs: trainedReference, givenOnly: true, why: "the reference did not train"}
	for _, tc := range []struct {
		name   string
		checks []check
		pres   []precondition
		want   Verdict
		tally  [3]int
		aside  int
	}{
		{"no checks", nil, []precondition{unmet}, NotRun, [3]int{}, 0},
		{"another mechanism's contradiction still counts", []check{agree(varianceWeighting), contra(""), contra("")}, []precondition{unmet}, Fails, [3]int{0, 2, 0}, 1},
		{"another mechanism's agreement still counts", []check{contra(varianceWeighting), agree(""), agree(learnedVariances)}, []precondition{unmet}, Holds, [3]int{2, 0, 0}, 1},
		{"every check needs it", []check{agree(varianceWeighting), contra(varianceWeighting)}, []precondition{unmet}, NotTestable, [3]int{}, 2},
		{"none needs it", []check{agree(""), agree(""), open("")}, []precondition{unmet}, Partly, [3]int{2, 0, 1}, 0},
		{"met", []check{agree(varianceWeighting), contra(varianceWeighting)}, []precondition{met}, Partly, [3]int{1, 1, 0}, 0},
		{"agreement only: the reversal counts", []check{agree(spreadArithmetic), agree(spreadArithmetic), contra(spreadArithmetic), agree("")}, []precondition{arith}, Partly, [3]int{1, 1, 0}, 2},
		{"agreement only, none left agreeing", []check{agree(spreadArithmetic), contra("")}, []precondition{arith}, Fails, [3]int{0, 1, 0}, 1},
		// The text-mode spread order: three pairs the formulas order as the claim, agreeing, and one
		// (AALV < GAA) they order the other way, contradicting: every outcome is the formulas'.
		{"formula order both ways: every check set aside", []check{agree(spreadArithmetic), reversed(spreadArithmetic, contradicts), agree(spreadArithmetic), agree(spreadArithmetic)},
			[]precondition{arith}, NotTestable, [3]int{}, 4},
		{"formula order reversed, the claim's order measured: it counts", []check{agree(spreadArithmetic), reversed(spreadArithmetic, agrees)},
			[]precondition{arith}, Holds, [3]int{1, 0, 0}, 1},
		// A frozen spread says nothing whichever way it falls; the other rules' misses count.
		{"frozen: agreement and miss set aside", []check{contra(""), agree(frozenArithmetic), contra(frozenArithmetic), open(frozenArithmetic), contra("")},
			[]precondition{frozen}, Fails, [3]int{0, 2, 0}, 3},
		// An untrained reference hides a harm (contradiction set aside) but cannot create one.
		{"untrained reference: the harm counts", []check{reversed(trainedReference, agrees), reversed(trainedReference, contradicts)},
			[]precondition{untrained}, Holds, [3]int{1, 0, 0}, 1},
		{"untrained reference: no harm shown", []check{reversed(trainedReference, contradicts)}, []precondition{untrained}, NotTestable, [3]int{}, 1},
	} {
		v, why, marked := verdictOf(tc.checks, tc.pres)
		n, aside := tallyOf(marked)
		if v != tc.want || n != tc.tally || aside != tc.aside {
			t.Errorf("%s: verdict %q, tally %v, %d set aside; want %q, %v, %d", tc.name, v, n, aside, tc.want, tc.tally, tc.aside)
		}
		if (v == NotTestable) != (why != "") {
			t.Errorf("%s: verdict %q with reason %q", tc.name, v, why)
		}
	}
}

// TestDecideSetsAside runs the rule end to end on samples: a significant paired difference of a check
// with no mechanism keeps the finding decided while the check that needs equal-variance weighting is
// set aside and listed.
func TestDecideSetsAside(t *testing.T) {
	a := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.70, 0.71, 0.72}}
	b := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.80, 0.815, 0.82}}
	w := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.705, 0.716, 0.722}}
	var c claims
	c.below("a < b", a, b, colAcc)
	c.below("w < a", w, a, colAcc)
	c.tag(varianceWeighting)
	var f Finding
	f.decide(c.checks(), "", precondition{needs: varianceWeighting, why: "equal client variances"})
	if f.Verdict != Holds || f.Aside != 1 || f.Tally != [3]int{1, 0, 0} {
		t.Errorf("verdict %q, tally %v, %d set aside; want holds, [1 0 0], 1", f.Verdict, f.Tally, f.Aside)
	}
	for _, want := range []string{"1 of 1 check agree", "Set aside: w < a", "Precondition not met"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence %q lacks %q", f.Evidence, want)
		}
	}
	if !strings.HasPrefix(f.RuleNote, "1 of its 2 checks set aside") {
		t.Errorf("rule note %q, want the check set aside", f.RuleNote)
	}
	if !strings.HasPrefix(f.Effect, "a < b: Δ -10.17") {
		t.Errorf("effect %q, want a < b's Δ -10.17", f.Effect)
	}
}

// TestCaveatMostlyContradicted checks that a finding that holds in part with more contradicting than
// agreeing checks says so beside its verdict.
func TestCaveatMostlyContradicted(t *testing.T) {
	var f Finding
	f.decide([]check{{outcome: agrees}, {outcome: contradicts}, {outcome: contradicts}}, "")
	if f.Verdict != Partly || f.Caveat != "more of its checks contradict it (2) than agree (1)" {
		t.Errorf("verdict %q, caveat %q", f.Verdict, f.Caveat)
	}
	f = Finding{}
	f.decide([]check{{outcome: agrees}, {outcome: contradicts}}, "")
	if f.Caveat != "" {
		t.Errorf("as many agree as contradict: caveat %q, want none", f.Caveat)
	}
}

// TestEffectCIHolm checks the summary's interval against hand-computed t quantiles of 2 degrees of
// freedom (t(p) = a √(2/(1 − a²)), a = 2p − 1): Δ 1.00 ± 0.10 points gives 0.57 to 1.43 at the last
// Holm step (t(0.975) = 4.303) and -0.09 to 2.09 at the first of 6 (t(1 − 0.05/12) = 10.886), where an
// unadjusted interval would exclude 0 beside a comparison Holm does not find.
func TestEffectCIHolm(t *testing.T) {
	for _, tc := range []struct {
		step int
		want string
	}{
		{0, "+1.00 (95 % CI 0.57 to 1.43)"},
		{1, "+1.00 (95 % CI 0.57 to 1.43)"},
		{6, "+1.00 (95 % CI, Holm α/6: -0.09 to 2.09)"},
	} {
		c := check{step: tc.step, col: colAcc, res: stats.Result{Diff: 0.01, SE: 0.001, DF: 2}}
		if got := effectCI(c); got != tc.want {
			t.Errorf("step %d: %q, want %q", tc.step, got, tc.want)
		}
	}
	// The steps of a family: the smallest p at level/m, the largest at level/1, a NaN none.
	if got, want := holmSteps([]float64{0.03, math.NaN(), 0.001, 0.2}), []int{2, 0, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("holmSteps = %v, want %v", got, want)
	}
}

// TestDistinctHypotheses checks that the summary's tally counts one comparison made twice once among
// the distinct hypotheses, and says so only where they are fewer than the checks.
func TestDistinctHypotheses(t *testing.T) {
	a := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.70, 0.71, 0.72}}
	b := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.80, 0.815, 0.82}}
	w := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.90, 0.905, 0.93}}
	for _, tc := range []struct {
		name  string
		pairs [][2]stats.Sample
		cell  string
	}{
		{"one comparison twice", [][2]stats.Sample{{a, b}, {a, b}, {a, w}}, "3 / 0 / 0, 2 distinct"},
		{"all distinct", [][2]stats.Sample{{a, b}, {a, w}}, "2 / 0 / 0"},
	} {
		var c claims
		for i, p := range tc.pairs {
			c.below(fmt.Sprint("check ", i), p[0], p[1], colAcc)
		}
		var f Finding
		f.decide(c.checks(), "")
		if got := tallyCell(f); got != tc.cell {
			t.Errorf("%s: tally %q, want %q", tc.name, got, tc.cell)
		}
	}
}

// TestPowerTextIsAnEstimate checks that the power statement calls its seeds an estimate, names the
// SD's degrees of freedom, and says that an equivalence check's count is its difference test's.
func TestPowerTextIsAnEstimate(t *testing.T) {
	a := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.70, 0.74, 0.71}}
	b := stats.Sample{Seeds: []int64{0, 1, 2}, Values: []float64{0.72, 0.73, 0.75}}
	for _, tc := range []struct {
		name  string
		same  bool
		wants []string
	}{
		{"difference", false, []string{"an estimate of the seeds", "2 degrees of freedom", "errs low"}},
		{"equivalence", true, []string{"an estimate of the seeds", "its difference test's, not its TOST's"}},
	} {
		var c claims
		if tc.same {
			c.same("a ≈ b", a, b, 0.001, colAcc)
		} else {
			c.below("a < b", a, b, colAcc)
		}
		got := powerText(c.checks())
		for _, w := range tc.wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		if !tc.same && strings.Contains(got, "TOST") {
			t.Errorf("%s: %q mentions TOST", tc.name, got)
		}
	}
}

// TestScopedPrecondition checks a precondition scoped to one part of the set-up: it sets aside only
// the checks of its scope, the evidence tallies what the set-aside checks said, and the rule note
// names the scopes once per mechanism.
func TestScopedPrecondition(t *testing.T) {
	in := func(o outcome, scope string) check {
		return check{outcome: o, needs: varianceWeighting, given: agrees, scope: scope, text: scope}
	}
	checks := []check{in(agrees, "n = 1"), in(contradicts, "n = 1"), in(undecided, "n = 2"), in(agrees, "n = 2"), in(agrees, "n = 3")}
	pres := []precondition{
		{needs: varianceWeighting, why: "alike", scope: "n = 1"},
		{needs: varianceWeighting, why: "alike", scope: "n = 2"},
		{needs: varianceWeighting, met: true, why: "they differ", scope: "n = 3"},
	}
	var f Finding
	f.decide(checks, "", pres...)
	if f.Verdict != Holds || f.Aside != 4 || f.Tally != [3]int{1, 0, 0} {
		t.Errorf("verdict %q, tally %v, %d set aside; want holds, [1 0 0], 4", f.Verdict, f.Tally, f.Aside)
	}
	for _, want := range []string{"4 more set aside by a precondition (below), of which 2 agree, 1 contradict, 1 not decisive",
		"Precondition not met at n = 1", "Precondition met at n = 3"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence %q lacks %q", f.Evidence, want)
		}
	}
	if want := "4 of its 5 checks set aside, not counted, because " + string(varianceWeighting) +
		" and the records do not provide it at n = 1, n = 2"; f.RuleNote != want {
		t.Errorf("rule note %q, want %q", f.RuleNote, want)
	}
}
