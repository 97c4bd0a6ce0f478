package groundtruth

import (
	"math"
	"strings"
	"testing"
)

// textRegime is a hand-made regime summary with the floors vi (KL(q ‖ p) of mean-field VI) and mom
// (KL(p ‖ q) of the marginals).
func textRegime(name string, cfg Config, vi, mom float64, cover float64, rows ...Row) Summary {
	return Summary{Scenario: Scenario{Group: GroupRegimes, Name: name, Config: cfg}, ExactCoverage90: cover,
		References: []Row{{Label: RefMeanFieldVI, Reference: true, KLToTruth: Value(vi)}, {Label: RefMoment, Reference: true, KLFromTruth: Value(mom)}},
		Rows:       rows}
}

// TestMisspecifiedText checks that the reading of a misspecified regime appears only under concept
// shift at h > 0, with its counts and p's coverage computed from the rows.
func TestMisspecifiedText(t *testing.T) {
	rows := []Row{
		{Label: "A", Rule: "GAA", VarRatio: 0.6, NLLExcess: -0.01, Coverage90: 0.78},
		{Label: "B", Rule: "LP", VarRatio: 30, NLLExcess: -0.2, Coverage90: 0.913},
		{Label: "C", Rule: "DWC", VarRatio: 0.5, NLLExcess: 0.05, Coverage90: 0.7},
		{Label: LabelFedPA, VarRatio: 0, NLLExcess: -1, Coverage90: 0.99}, // a point mass: not counted
	}
	for _, cfg := range []Config{{Split: IID, Heterogeneity: 1}, {Split: ConceptShift, Heterogeneity: 0}} {
		if got := misspecifiedText(textRegime("x", cfg, 1, 1, 0.9, rows...)); got != "" {
			t.Errorf("%s at h = %g: %q, want none", cfg.Split, cfg.Heterogeneity, got)
		}
	}
	got := misspecifiedText(textRegime("cs", Config{Split: ConceptShift, Heterogeneity: 1}, 1, 1, 0.763, rows...))
	for _, want := range []string{"misspecified", "covers 76.3 % of the held-out targets", "2 of the 3 diagonal methods with a variance have ΔNLL below 0",
		"2 cover more than p does by more than 0 points (two binomial standard errors", "(up to 91.3 %, B, variance ratio ×30)", "not predictive quality"} {
		if !strings.Contains(got, want) {
			t.Errorf("misspecified text lacks %q: %s", want, got)
		}
	}
	// No method below p's NLL or above its coverage: only the reading of p itself.
	got = misspecifiedText(textRegime("cs", Config{Split: ConceptShift, Heterogeneity: 1}, 1, 1, 0.95, rows[2]))
	if strings.Contains(got, "Against it") || !strings.Contains(got, "covers 95.0 %") {
		t.Errorf("with no method beyond p: %s", got)
	}
	s := textRegime("cs", Config{Split: ConceptShift, Heterogeneity: 1}, 1, 1, 0.763)
	if predictiveMisspecifiedText(s) != "" {
		t.Error("a caveat on β-PredBayes without its row")
	}
	s.PredRows = []PredRow{{Label: LabelBetaPredBayes, Beta: 0.5, NLLExcess: -0.221}}
	if got := predictiveMisspecifiedText(s); !strings.Contains(got, "β = 0.5") || !strings.Contains(got, "ΔNLL -0.221") {
		t.Errorf("β-PredBayes caveat: %q", got)
	}
	s.Scenario.Config.Heterogeneity = 0
	if predictiveMisspecifiedText(s) != "" {
		t.Error("a caveat on β-PredBayes in a well-specified regime")
	}
}

// TestSharedFloorsText checks which regimes are named as having the first regime's floors.
func TestSharedFloorsText(t *testing.T) {
	a := textRegime("IID", Config{}, 0.916, 0.486, 0.9)
	b := textRegime("skew", Config{}, 0.916*(1+1e-12), 0.486, 0.9)
	c := textRegime("low noise", Config{}, 0.924, 0.49, 0.9)
	if got := sharedFloorsText([]Summary{a, c}); got != "" {
		t.Errorf("different floors: %q", got)
	}
	got := sharedFloorsText([]Summary{a, b, c})
	if !strings.Contains(got, "The 3 regimes share their seeds, and skew has IID's floors") || strings.Contains(got, "low noise") ||
		!strings.Contains(got, "the count of 3 is not that many independent confirmations") {
		t.Errorf("shared floors: %q", got)
	}
}

// TestMeanErrorText checks that the diagonal-message rules' minimum and FedPA's are stated apart.
func TestMeanErrorText(t *testing.T) {
	r1 := textRegime("R1", Config{}, 1, 1, 0.9,
		Row{Label: "DWC", Rule: "DWC", MeanErrorSD: 0.3}, Row{Label: LabelFedPAIterated, Rule: LabelFedPAIterated, MeanErrorSD: 0.07})
	r2 := textRegime("R2", Config{}, 1, 1, 0.9,
		Row{Label: "GAA/size", Rule: "GAA", Weighting: Size, MeanErrorSD: 0.2}, Row{Label: LabelFedPA, Rule: LabelFedPA, MeanErrorSD: 0.5})
	got := meanErrorText([]Summary{r1, r2})
	for _, want := range []string{"the smallest error among them is 0.2 sd (GAA/size, R2)", "its smallest error is 0.07 sd (FedPA, iterated, R1)", "ρ = "} {
		if !strings.Contains(got, want) {
			t.Errorf("mean error text lacks %q: %s", want, got)
		}
	}
	// Without FedPA rows, no sentence on FedPA; an exact mean is said as such.
	r1.Rows = r1.Rows[:1]
	r1.Rows[0].MeanErrorSD = 0
	got = meanErrorText([]Summary{r1})
	if strings.Contains(got, "FedPA") || !strings.Contains(got, "DWC gets the exact mean in R1") {
		t.Errorf("without FedPA: %s", got)
	}
}

// TestSweepAboveFloor checks that a sweep whose floor moves is also read above the floor, and one
// whose floor stays is not.
func TestSweepAboveFloor(t *testing.T) {
	point := func(name string, floor, kl float64) Summary {
		s := textRegime(name, Config{}, 1, floor, 0.9, Row{Label: "A", KLFromTruth: Value(kl)}, Row{Label: LabelEPMCMCFull, KLFromTruth: Value(kl)})
		s.Scenario.Group = GroupSweepPrefix + "dimension"
		return s
	}
	var b strings.Builder
	// KL(p ‖ q) grows 1 → 2 → 5, its floor 0.5 → 1.8 → 4.6: above the floor 0.5, 0.2, 0.4.
	writeSweep(&b, GroupSweepPrefix+"dimension", []Summary{point("d=2", 0.5, 1), point("d=5", 1.8, 2), point("d=10", 4.6, 5)})
	got := b.String()
	if i := strings.Index(got, "above that floor"); i < 0 || strings.Contains(got[i:], LabelEPMCMCFull) {
		t.Errorf("a full-covariance row read above the diagonal floor: %s", got)
	}
	if !strings.Contains(got, "KL(p ‖ q) grows at every step for A, "+LabelEPMCMCFull) || !strings.Contains(got, "0.5 at d=2 to 4.6 at d=10") ||
		!strings.Contains(got, "above that floor, KL(p ‖ q) of the diagonal methods grows at every step for none; falls at every step for none; moves both ways for A") {
		t.Errorf("moving floor: %s", got)
	}
	b.Reset()
	writeSweep(&b, GroupSweepPrefix+"dimension", []Summary{point("d=2", 0.5, 1), point("d=5", 0.52, 2)})
	if strings.Contains(b.String(), "above that floor") {
		t.Errorf("a floor that stays: %s", b.String())
	}
}

// TestSamePolicyRows checks that a site method is named as the fixed prior's only when its seeds'
// excesses match round by round in every regime.
func TestSamePolicyRows(t *testing.T) {
	rs := func(pol PriorPolicy, pvi, rule float64) RoundsSummary {
		return RoundsSummary{Prior: pol, Rounds: 2, Rows: []RoundsRow{
			{Label: "PVI", SeedExcess: [][]Value{{1, Value(pvi)}}},
			{Label: "DWC", SeedExcess: [][]Value{{1, Value(rule)}}},
		}}
	}
	s1 := Summary{Rounds: []RoundsSummary{rs(FixedPrior, 0.5, 2), rs(UpdatedPrior, 0.5, 2)}}
	s2 := Summary{Rounds: []RoundsSummary{rs(FixedPrior, 0.5, 2), rs(UpdatedPrior, 0.4, 2)}}
	if got := samePolicyRows([]Summary{s1}, UpdatedPrior, []string{"PVI", "DWC"}); len(got) != 1 || got[0] != "PVI" {
		t.Errorf("equal trajectories: %v, want [PVI] (DWC is no site method)", got)
	}
	if got := samePolicyRows([]Summary{s1, s2}, UpdatedPrior, []string{"PVI"}); len(got) != 0 {
		t.Errorf("a regime where PVI differs: %v", got)
	}
	if got := samePolicyRows([]Summary{s1}, FixedPrior, []string{"PVI"}); len(got) != 0 {
		t.Errorf("the fixed prior against itself: %v", got)
	}
}

// TestMisspecifiedTextCoverageMargin checks that a coverage above p's by less than two binomial
// standard errors over the pooled held-out targets is not counted as covering more than p.
func TestMisspecifiedTextCoverageMargin(t *testing.T) {
	s := textRegime("cs", Config{Split: ConceptShift, Heterogeneity: 1, Test: 2000}, 1, 1, 0.763,
		Row{Label: "A", Rule: "GAA", VarRatio: 0.6, NLLExcess: -0.01, Coverage90: 0.764},
		Row{Label: "B", Rule: "LP", VarRatio: 30, NLLExcess: -0.2, Coverage90: 0.913})
	s.Runs = make([]*Result, 5)
	if m := coverageMargin(0.763, 10000); math.Abs(m-2*math.Sqrt(0.763*0.237/10000)) > 1e-15 || m < 0.008 || m > 0.009 {
		t.Fatalf("coverageMargin(0.763, 10000) = %g", m)
	}
	got := misspecifiedText(s)
	if !strings.Contains(got, "and 1 cover more than p does") || !strings.Contains(got, "over its 10000 held-out targets") {
		t.Errorf("the margin should leave A (76.4 %% against 76.3 %%) out: %s", got)
	}
}
