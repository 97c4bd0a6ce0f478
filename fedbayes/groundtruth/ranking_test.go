package groundtruth

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// handRun is a run with the floors vi (KL(q ‖ p) of mean-field VI) and mom (KL(p ‖ q) of the
// marginals), and methods given by their two KL divergences.
func handRun(vi, mom float64, methods map[string][2]float64, order []string) *Result {
	r := &Result{References: []Scored{
		{Label: RefMeanFieldVI, Distances: Distances{KLToTruth: Value(vi), KLFromTruth: Value(vi + 1)}},
		{Label: RefMoment, Distances: Distances{KLToTruth: Value(mom + 1), KLFromTruth: Value(mom)}},
	}}
	for _, l := range order {
		kl := methods[l]
		r.Rules = append(r.Rules, Scored{Label: l, Distances: Distances{KLToTruth: Value(kl[0]), KLFromTruth: Value(kl[1])}})
	}
	return r
}

// TestPairedLeadByHand checks the per-seed excesses, their mean, the paired interval and the seed
// counts on three hand-made seeds.
func TestPairedLeadByHand(t *testing.T) {
	order := []string{"A", "B", "C"}
	// Seed floors (1, 0.5), (2, 1), (0, 0). A's excesses: max(1.5−1, 0.5−0.5) = 0.5,
	// max(2−2, 3−1) = 2, max(1−0, 0.25−0) = 1; B's: 2.5, 5, 5 (differences 2, 3, 4);
	// C's: 0.25, 2.5, 0.5 (below A's in seeds 1 and 3).
	runs := []*Result{
		handRun(1, 0.5, map[string][2]float64{"A": {1.5, 0.5}, "B": {3.5, 0.5}, "C": {1.25, 0.5}}, order),
		handRun(2, 1, map[string][2]float64{"A": {2, 3}, "B": {7, 1}, "C": {4.5, 1}}, order),
		handRun(0, 0, map[string][2]float64{"A": {1, 0.25}, "B": {5, 0}, "C": {0.5, 0.5}}, order),
	}
	s := Summary{Runs: runs, References: []Row{{Label: RefMeanFieldVI}, {Label: RefMoment}}}
	want := map[string][]float64{"A": {0.5, 2, 1}, "B": {2.5, 5, 5}, "C": {0.25, 2.5, 0.5}}
	for l, w := range want {
		got := s.SeedExcess(l)
		for i := range w {
			if !near(got[i], w[i], 1e-12) {
				t.Errorf("%s seed %d: excess %v, want %v", l, i, got[i], w[i])
			}
		}
	}
	// The mean of the seeds' excesses, not the excess of the seed-averaged KLs: A's KLs average to
	// (1.5, 1.25) against floors (1, 0.5), an excess of 0.75; its seeds' mean is 3.5/3.
	if e := s.Excess(Row{Label: "A", KLToTruth: 1.5, KLFromTruth: 1.25}); !near(e, 3.5/3, 1e-12) {
		t.Errorf("A's excess %v, want 3.5/3", e)
	}
	// B − A: 2, 3, 4; mean 3, sd 1, t(0.975, 2) = 4.302652729749464: 3 ± 2.484138.
	l := s.PairedLead("A", "B")
	half := 4.302652729749464 / math.Sqrt(3)
	if l.Pairs != 3 || l.Wins != 3 || !near(l.Diff, 3, 1e-12) || !near(l.Lo, 3-half, 1e-9) || !near(l.Hi, 3+half, 1e-9) || !l.Decided {
		t.Errorf("A over B: %+v, want diff 3, CI %v to %v, decided", l, 3-half, 3+half)
	}
	// C − A: −0.25, 0.5, −0.5; mean −1/12: not decided either way.
	l = s.PairedLead("A", "C")
	if l.Wins != 1 || !near(l.Diff, -1.0/12, 1e-12) || l.Decided || !(l.Lo < 0 && l.Hi > 0) {
		t.Errorf("A over C: %+v", l)
	}
	if k, n := s.SeedBest("A", order); k != 1 || n != 3 {
		t.Errorf("A best in %d of %d seeds, want 1 of 3", k, n)
	}
	if k, n := s.SeedBest("C", order); k != 2 || n != 3 {
		t.Errorf("C best in %d of %d seeds, want 2 of 3", k, n)
	}
	text := leadText(s.PairedLead("A", "C"), 2, 3)
	if !strings.Contains(text, "within the seeds' noise") || !strings.Contains(text, "below in 1 of 3") || !strings.Contains(text, "2 of 3 seeds") {
		t.Errorf("lead text: %s", text)
	}
	// A failed seed is left out of the pairs; one pair left gives no interval.
	runs[1].Rules[1].Failed, runs[2].Rules[1].Failed = "no posterior", "no posterior"
	if l := s.PairedLead("A", "B"); l.Pairs != 1 || l.Untestable == "" || l.Decided {
		t.Errorf("one pair: %+v", l)
	}
	if l := s.PairedLead("A", "missing"); l.Untestable == "" {
		t.Errorf("a label no run has: %+v", l)
	}
}

// TestToFrontierByHand checks the rounds to the frontier on two hand-made seeds.
func TestToFrontierByHand(t *testing.T) {
	rs := RoundsSummary{FrontierExcess: []float64{0.5, 0.2}}
	// Gaps to the frontier: seed 1 2.5, 0.7, 0.05, 0.1; seed 2 0.05, 1.8, 0.7, 0.05.
	row := RoundsRow{SeedExcess: [][]Value{{3, 1.2, 0.55, 0.6}, {0.25, 2, 0.9, 0.25}}}
	for _, tc := range []struct {
		within float64
		rounds []int
	}{{0.1, []int{3, 4}}, {1, []int{2, 3}}, {0.01, []int{0, 0}}} {
		r, ok := rs.ToFrontier(row, tc.within)
		if !ok || r.Rounds[0] != tc.rounds[0] || r.Rounds[1] != tc.rounds[1] || !near(r.Gap, 0.075, 1e-12) {
			t.Errorf("within %g: %+v, want rounds %v and gap 0.075", tc.within, r, tc.rounds)
		}
		reached := 0
		for _, x := range tc.rounds {
			if x > 0 {
				reached++
			}
		}
		if r.Reached != reached {
			t.Errorf("within %g: %d seeds reached, want %d", tc.within, r.Reached, reached)
		}
	}
	// The mean of the seeds' excesses per round.
	if e := rs.Excess(row, 2); !near(e, 1.6, 1e-12) {
		t.Errorf("round 2 excess %v, want 1.6", e)
	}
	if _, ok := (RoundsSummary{}).ToFrontier(row, 1); ok {
		t.Errorf("a summary without frontiers measured a reach")
	}
	if c := reachCell(FrontierReach{Within: 1, Rounds: []int{2, 0, 5}, Reached: 2}); c != "≤ 1: round 2 to 5 (2 of 3)" {
		t.Errorf("cell %q", c)
	}
}

// TestConceptShift checks that concept shift at h = 0 is the IID problem, draw for draw, and that at
// h = 1 the clients' targets follow weights of their own: their residuals about the shared w carry
// the extra variance |w_k − w|²-weighted by the inputs, not the noise alone.
func TestConceptShift(t *testing.T) {
	c := DefaultConfig()
	c.Clients, c.PerClient, c.Correlation = 4, 400, 0
	iid, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	c.Split = ConceptShift
	same, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	for k := range iid.Clients {
		for i, y := range iid.Clients[k].Y {
			if same.Clients[k].Y[i] != y {
				t.Fatalf("h = 0: client %d target %d %v, IID's %v", k, i, same.Clients[k].Y[i], y)
			}
		}
	}
	c.Heterogeneity = 1
	p, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	// Uncorrelated unit inputs: a client's residual variance about the shared w is s2 + |w_k − w|²,
	// whose mean over the clients is about s2 + d (ConceptShiftScale σ0)² = 1 + 5/4.
	var mean float64
	for k, cl := range p.Clients {
		var ss float64
		for i, y := range cl.Y {
			r := y
			for j := range p.WTrue {
				r -= cl.X.At(i, j) * p.WTrue[j]
			}
			ss += r * r
		}
		v := ss / float64(len(cl.Y))
		if v < 1.1 {
			t.Errorf("client %d: residual variance %v about the shared w: no shift", k, v)
		}
		mean += v / float64(len(p.Clients))
	}
	if want := 1 + float64(c.Dims)*ConceptShiftScale*ConceptShiftScale; math.Abs(mean-want) > 0.6*want {
		t.Errorf("mean residual variance %v, want about %v", mean, want)
	}
}

// TestRoundsFrontierIsTheTables checks that the rounds' frontier excess is the one-round tables'
// frontier row read with ExcessOver, and that round 1's per-seed excesses are the tables'.
func TestRoundsFrontierIsTheTables(t *testing.T) {
	c := DefaultConfig()
	c.Clients, c.Dims, c.Split, c.Heterogeneity = 4, 3, CovariateShift, 1
	p, err := Simulate(c)
	if err != nil {
		t.Fatal(err)
	}
	one, err := RunProblem(p, RuleOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := RunRounds(p, RoundsOptions{Rounds: 2, Prior: FixedPrior, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := one.seedExcess(RefFrontier); !ok || !near(f, rr.FrontierExcess, 1e-9) {
		t.Errorf("frontier excess: tables %v, rounds %v", f, rr.FrontierExcess)
	}
	rs, err := SummariseRounds([]*RoundsResult{rr})
	if err != nil {
		t.Fatal(err)
	}
	// FedAvg's point mass has an infinite excess, which the results file must still hold.
	if _, err := json.Marshal(rs); err != nil {
		t.Errorf("rounds summary to JSON: %v", err)
	}
	for _, row := range rs.Rows {
		e, ok := one.seedExcess(row.Label)
		if !ok || math.IsInf(e, 1) {
			continue
		}
		if got := rs.Excess(row, 1); !near(got, e, 1e-9*math.Max(1, e)) {
			t.Errorf("%s: round-1 excess %v, the table's %v", row.Label, got, e)
		}
	}
}
