package groundtruth

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
	"gonum.org/v1/gonum/mat"
)

// twoClientProblem is one weight, prior N(0, 1), noise 1, client A with (x, y) = (1, 2) and client B
// with (1, 1), (1, 3): posteriors N(1, 1/2) (precision 2, h 2) and N(4/3, 1/3) (precision 3, h 4),
// size weights 1/3 and 2/3; the exact global has precision 1 + 1 + 2 = 4 and h 6: N(3/2, 1/4).
func twoClientProblem(t *testing.T) *Problem {
	t.Helper()
	prior, err := NewGaussian([]float64{0}, mat.NewSymDense(1, []float64{1}))
	if err != nil {
		t.Fatal(err)
	}
	return &Problem{
		Config: Config{Split: IID, Clients: 2, Dims: 1, PerClient: 1, Test: 1, NoiseVar: 1, PriorVar: 1},
		Model:  LinearModel{Prior: prior, NoiseVar: 1},
		Clients: []Data{
			{X: mat.NewDense(1, 1, []float64{1}), Y: []float64{2}},
			{X: mat.NewDense(2, 1, []float64{1, 1}), Y: []float64{1, 3}},
		},
	}
}

// TestRoundsTwoClientsByHand checks two rounds of EAA, GAA, Conflation and DWC under both prior
// policies against values worked out by hand (one weight, so the mean-field messages are exact).
// Under the updated prior, round 2's prior is round 1's global N(m, v): client k's posterior has
// precision 1/v + n_k-term and h = m/v + x^T y (Bishop (2006), Eqs. 3.50-3.51).
func TestRoundsTwoClientsByHand(t *testing.T) {
	p := twoClientProblem(t)
	for _, tc := range []struct {
		rule     aggregate.Rule
		policy   PriorPolicy
		round    int
		mean, va float64
	}{
		// EAA/size, round 1: mean 1/3 + 2/3 * 4/3 = 11/9, variance 1/3 * 1/2 + 2/3 * 1/3 = 7/18.
		{aggregate.EAA, FixedPrior, 1, 11.0 / 9, 7.0 / 18},
		{aggregate.EAA, FixedPrior, 2, 11.0 / 9, 7.0 / 18},
		// Updated: prior N(11/9, 7/18), precision 18/7, h 22/7. A: precision 25/7, h 36/7, N(36/25, 7/25);
		// B: precision 32/7, h 50/7, N(25/16, 7/32). EAA/size: 12/25 + 25/24 = 913/600, 7/75 + 7/48.
		{aggregate.EAA, UpdatedPrior, 1, 11.0 / 9, 7.0 / 18},
		{aggregate.EAA, UpdatedPrior, 2, 913.0 / 600, 7.0/75 + 7.0/48},
		// GAA/size, round 1: mean 11/9, variance 1/9 * 1/2 + 4/9 * 1/3 = 11/54.
		{aggregate.GAA, FixedPrior, 2, 11.0 / 9, 11.0 / 54},
		// Updated: prior precision 54/11, h 6. A: precision 65/11, h 8, N(88/65, 11/65);
		// B: precision 76/11, h 10, N(55/38, 11/76).
		{aggregate.GAA, UpdatedPrior, 1, 11.0 / 9, 11.0 / 54},
		{aggregate.GAA, UpdatedPrior, 2, 88.0/195 + 55.0/57, 11.0/585 + 44.0/684},
		// Conflation, round 1: precision 2 + 3, h 6: N(6/5, 1/5). Updated: A precision 6, h 8; B 7, 10:
		// N(18/13, 1/13).
		{aggregate.Conflation, FixedPrior, 2, 6.0 / 5, 1.0 / 5},
		{aggregate.Conflation, UpdatedPrior, 2, 18.0 / 13, 1.0 / 13},
		// DWC, round 1 with the prior as the previous global: precision 2 + 3 - 1 = 4, h 6: the exact
		// N(3/2, 1/4). Fixed prior, round 2, previous N(3/2, 1/4): precision 5 - 4 = 1, h 6 - 6 = 0:
		// back to N(0, 1), and round 3 to N(3/2, 1/4) again (period 2).
		{aggregate.DWC, FixedPrior, 1, 1.5, 0.25},
		{aggregate.DWC, FixedPrior, 2, 0, 1},
		{aggregate.DWC, FixedPrior, 3, 1.5, 0.25},
		// Updated: A precision 5, h 8; B 6, 10; DWC 11 - 4 = 7, 18 - 6 = 12: N(12/7, 1/7), the data
		// counted twice.
		{aggregate.DWC, UpdatedPrior, 2, 12.0 / 7, 1.0 / 7},
	} {
		t.Run(string(tc.rule)+"/"+string(tc.policy), func(t *testing.T) {
			res, err := RunRounds(p, RoundsOptions{Rounds: tc.round, Prior: tc.policy, Rules: []aggregate.Rule{tc.rule}})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Trajectories[0]
			if tr.Stopped != "" || len(tr.Points) != tc.round {
				t.Fatalf("%d rounds, stopped %q", len(tr.Points), tr.Stopped)
			}
			if !near(tr.Final.Mean[0], tc.mean, 1e-13) || !near(tr.Final.Var[0], tc.va, 1e-13) {
				t.Errorf("round %d: N(%v, %v), want N(%v, %v)", tc.round, tr.Final.Mean[0], tr.Final.Var[0], tc.mean, tc.va)
			}
			exact := &Gaussian{Mean: mat.NewVecDense(1, []float64{1.5}), Cov: mat.NewSymDense(1, []float64{0.25})}
			want, err := compareMoments(tr.Final, exact)
			if err != nil {
				t.Fatal(err)
			}
			last := tr.Points[len(tr.Points)-1]
			if !near(float64(last.KLFromTruth), float64(want.KLFromTruth), 1e-12) || math.Abs(last.W2-want.W2) > 1e-7 {
				t.Errorf("distances %v, %v; want %v, %v", last.KLFromTruth, last.W2, want.KLFromTruth, want.W2)
			}
		})
	}
	res, err := RunRounds(p, RoundsOptions{Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.FloorKLToTruth != 0 || res.FloorKLFromTruth != 0 {
		t.Errorf("one weight: floors %v, %v; want 0", res.FloorKLToTruth, res.FloorKLFromTruth)
	}
}

// TestRoundsFirstRoundIsOneRound checks that round 1 gives every rule's one-round global of
// RunProblem bit for bit, under both policies and both weightings.
func TestRoundsFirstRoundIsOneRound(t *testing.T) {
	for _, tc := range []struct {
		split Split
		h     float64
		wt    Weighting
	}{
		{IID, 0, Size},
		{CovariateShift, 1, Size},
		{TargetSkew, 1, Equal},
		{UnequalSizes, 1, Size},
	} {
		cfg := DefaultConfig()
		cfg.Split, cfg.Heterogeneity, cfg.Test, cfg.Seed = tc.split, tc.h, 50, 3
		p, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		one, err := RunProblem(p, RuleOptions{Seed: 3, PopulationSize: 200})
		if err != nil {
			t.Fatal(err)
		}
		byLabel := map[string]Scored{}
		for _, s := range one.Rules {
			byLabel[s.Label] = s
		}
		for _, pol := range PriorPolicies() {
			res, err := RunRounds(p, RoundsOptions{Rounds: 2, Prior: pol, Weighting: tc.wt, Seed: 3, PopulationSize: 200})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Trajectories) != len(aggregate.Rules()) {
				t.Fatalf("%d trajectories, want %d", len(res.Trajectories), len(aggregate.Rules()))
			}
			for _, tr := range res.Trajectories {
				s, ok := byLabel[tr.Label]
				if !ok {
					t.Fatalf("%s: not among the one-round rules", tr.Label)
				}
				// Round 1's global is what round 2 started from; rerun one round to read it.
				r1, err := RunRounds(p, RoundsOptions{Rounds: 1, Prior: pol, Weighting: tc.wt, Seed: 3, PopulationSize: 200,
					Rules: []aggregate.Rule{aggregate.Rule(tr.Rule)}})
				if err != nil {
					t.Fatal(err)
				}
				q := r1.Trajectories[0].Final
				if !reflect.DeepEqual(q, s.Q) {
					t.Errorf("%s %s %s: round 1 %v, one round %v", tc.split, pol, tr.Label, q, s.Q)
				}
				pt := tr.Points[0]
				if pt.KLFromTruth != s.Distances.KLFromTruth || pt.KLToTruth != s.Distances.KLToTruth || pt.W2 != s.Distances.W2 ||
					pt.MeanErrorSD != s.Distances.MeanErrorSD || pt.VarRatio != s.Distances.VarRatio {
					t.Errorf("%s %s %s: round 1's distances %+v differ from one round's", tc.split, pol, tr.Label, pt)
				}
			}
			if res.FloorKLToTruth != float64(one.References[0].Distances.KLToTruth) ||
				res.FloorKLFromTruth != float64(one.References[1].Distances.KLFromTruth) {
				t.Errorf("floors %v, %v differ from the one-round references", res.FloorKLToTruth, res.FloorKLFromTruth)
			}
		}
	}
}

// TestRoundsFixedPriorStands checks that under the fixed prior every rule but DWC repeats its round-1
// global (exact clients forget their starting point), that DWC with ten clients is held at its
// round-1 global by the keep-previous policy (its round-2 precision sum_k L_k - 9 L_1 is negative),
// and that the same seed gives the same result.
func TestRoundsFixedPriorStands(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Split, cfg.Heterogeneity, cfg.Test = CovariateShift, 1, 20
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opt := RoundsOptions{Rounds: 4, Seed: 1, PopulationSize: 100}
	res, err := RunRounds(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trajectories {
		for _, pt := range tr.Points[1:] {
			if pt.Change != 0 {
				t.Errorf("%s round %d: change %v", tr.Label, pt.Round, pt.Change)
			}
			if pt.Held != cfg.Dims {
				t.Errorf("%s round %d: %d weights held", tr.Label, pt.Round, pt.Held)
			}
		}
	}
	for _, pol := range PriorPolicies() {
		opt.Prior = pol
		a, err := RunRounds(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RunRounds(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the same seed gave different results", pol)
		}
	}
}

// TestRoundsBadInput checks that bad options are errors.
func TestRoundsBadInput(t *testing.T) {
	p := twoClientProblem(t)
	logistic := *p
	logistic.Config.Likelihood = Logistic
	for _, tc := range []struct {
		name string
		p    *Problem
		opt  RoundsOptions
		want string
	}{
		{"logistic", &logistic, RoundsOptions{}, "linear"},
		{"rounds", p, RoundsOptions{Rounds: -1}, "rounds"},
		{"policy", p, RoundsOptions{Prior: "sometimes"}, "prior policy"},
		{"weighting", p, RoundsOptions{Weighting: "maxdisc"}, "weighting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RunRounds(tc.p, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one about %q", err, tc.want)
			}
		})
	}
}

// TestRoundsVerdict checks the trend words on made-up trajectories.
func TestRoundsVerdict(t *testing.T) {
	rs := RoundsSummary{FloorKLToTruth: 1, FloorKLFromTruth: 0.5}
	mk := func(vr []float64, change []float64, stopped int) RoundsRow {
		row := RoundsRow{Seeds: 2, Stopped: stopped, VarRatio: vr, Change: change}
		for i := range vr {
			row.KLToTruth = append(row.KLToTruth, Value(1+float64(i)))
			row.KLFromTruth = append(row.KLFromTruth, Value(0.5+math.Abs(float64(i)-2)))
			row.Held = append(row.Held, 0)
		}
		return row
	}
	geo := func(a, f float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = a * math.Pow(f, float64(i))
		}
		return out
	}
	ones := geo(1, 1, 8)
	zeros := make([]float64, 8)
	moving := []float64{1, 2, 1, 2, 1, 2, 1, 2}
	for _, tc := range []struct {
		name string
		row  RoundsRow
		want string
		from int
	}{
		{"fixed", mk(ones, append([]float64{3, 1, 0.5}, zeros[:5]...), 0), TrendFixed, 3},
		{"collapses", mk(geo(1, 0.5, 8), ones, 0), TrendCollapses, 0},
		{"shrinking", mk(geo(100, 0.8, 8), ones, 0), TrendShrinking, 0},
		{"growing", mk(geo(1, 1.5, 8), ones, 0), TrendGrowing, 0},
		{"moving", mk(moving, ones, 0), TrendMoving, 0},
		{"stops", mk(geo(1, 0.5, 8), ones, 1), TrendStops, 0},
		{"point mass", mk(zeros, ones, 0), TrendPointMass, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := rs.Verdict(tc.row)
			if v.Kind != tc.want || v.FixedFrom != tc.from {
				t.Errorf("%s from %d, want %s from %d", v.Kind, v.FixedFrom, tc.want, tc.from)
			}
			// KL(q || p) - 1 = i rises, KL(p || q) - 0.5 = |i - 2|: the excess is max(i, |i - 2|), smallest (1) at round 2.
			if v.Kind != TrendPointMass && (v.BestRound != 2 || v.Best != 1 || v.First != 2 || v.Final != 7) {
				t.Errorf("excess %v at round 1, best %v at round %d, %v at the end", v.First, v.Best, v.BestRound, v.Final)
			}
		})
	}
	if v := rs.Verdict(mk(geo(1, 0.5, 8), ones, 0)); !near(v.Factor, 0.5, 1e-12) {
		t.Errorf("factor %v, want 0.5", v.Factor)
	}
	// A variance falling to 0.9^7 = 0.478 of the marginals collapses against the marginals (the
	// floor's variance ratio unknown), but not when mean-field VI's own ratio is 0.5 (0.478 > 0.8 × 0.5).
	if v := rs.Verdict(mk(geo(1, 0.9, 8), ones, 0)); v.Kind != TrendCollapses {
		t.Errorf("without the floor's variance ratio: %s, want %s", v.Kind, TrendCollapses)
	}
	withFloor := rs
	withFloor.FloorVarRatio = 0.5
	if v := withFloor.Verdict(mk(geo(1, 0.9, 8), ones, 0)); v.Kind != TrendShrinking {
		t.Errorf("against mean-field VI's variance ratio 0.5: %s, want %s", v.Kind, TrendShrinking)
	}
	// KL(q || p) = 1 + 10 × 0.01^(t-1) falls to within ConvergedNats of its floor 1 at round 3 and
	// stays there while the global still moves: at mean-field VI from round 3, whatever its variance
	// does.
	conv := mk(geo(1, 0.9, 8), ones, 0)
	for i := range conv.KLToTruth {
		conv.KLToTruth[i] = Value(1 + 10*math.Pow(0.01, float64(i)))
	}
	if v := withFloor.Verdict(conv); v.Kind != TrendAtMeanFieldVI || v.ConvergedRound != 3 {
		t.Errorf("%s from round %d, want %s from round 3", v.Kind, v.ConvergedRound, TrendAtMeanFieldVI)
	}
	// A KL(q || p) that only reaches the floor in the last round (a rule crossing it) is not at it.
	cross := mk(geo(1, 0.5, 8), ones, 0)
	for i := range cross.KLToTruth {
		cross.KLToTruth[i] = Value(1 + float64(7-i))
	}
	if v := withFloor.Verdict(cross); v.Kind == TrendAtMeanFieldVI || v.ConvergedRound != 8 {
		t.Errorf("a KL crossing its floor at the last round: %s (from round %d), want another kind (the run starting at 8)", v.Kind, v.ConvergedRound)
	}
	// Changes halving every round: converging at a rate of 0.5, within 0.5^7 of the limit; changes
	// falling as 1/t (a variance ∝ 1/t) are not.
	halving := mk(geo(1, 0.9, 8), geo(1, 0.5, 8), 0)
	if v := withFloor.Verdict(halving); v.Kind != TrendConverging || !near(v.Rate, 0.5, 1e-12) || !near(v.Remaining, math.Pow(0.5, 7), 1e-12) {
		t.Errorf("halving changes: %s at rate %v, remaining %v; want %s at 0.5, %v", v.Kind, v.Rate, v.Remaining, TrendConverging, math.Pow(0.5, 7))
	}
	harmonic := make([]float64, 8)
	for i := range harmonic {
		harmonic[i] = 1 / float64(i+12)
	}
	if v := withFloor.Verdict(mk(geo(1, 0.9, 8), harmonic, 0)); v.Kind == TrendConverging {
		t.Errorf("changes falling as 1/t: %s at rate %v, want another kind", v.Kind, v.Rate)
	}
}

// TestRoundsLogistic checks that round 1 of the logistic rounds gives RunLogistic's globals and
// distances bit for bit, under both policies, and that the updated prior shrinks Conflation's
// variance round after round.
func TestRoundsLogistic(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Likelihood, cfg.Clients, cfg.Dims, cfg.Test = Logistic, 4, 2, 50
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hc := HMCConfig{Chains: 2, Warmup: 200, Samples: 200, Leapfrog: 8, TargetAccept: 0.8, Seed: 1}
	one, err := RunLogistic(p, RuleOptions{Seed: 1, Weightings: []Weighting{Size}}, hc, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range PriorPolicies() {
		res, err := RunRoundsLogistic(p, RoundsOptions{Rounds: 3, Prior: pol, Seed: 1}, hc, dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range res.Trajectories {
			s := one.Rules[i]
			pt := tr.Points[0]
			if tr.Label != s.Label || pt.KLFromTruth != s.Distances.KLFromTruth || pt.W2 != s.Distances.W2 || pt.VarRatio != s.Distances.VarRatio {
				t.Errorf("%s %s: round 1 %+v, one round %+v", pol, tr.Label, pt, s.Distances)
			}
			if tr.Rule == string(aggregate.Conflation) && pol == UpdatedPrior &&
				!(tr.Points[2].VarRatio < tr.Points[1].VarRatio && tr.Points[1].VarRatio < pt.VarRatio) {
				t.Errorf("updated prior: Conflation's variance ratio %v, %v, %v does not fall", pt.VarRatio, tr.Points[1].VarRatio, tr.Points[2].VarRatio)
			}
		}
	}
	if _, err := RunRoundsLogistic(twoClientProblem(t), RoundsOptions{}, hc, dir); err == nil {
		t.Error("a linear problem: no error")
	}
}
