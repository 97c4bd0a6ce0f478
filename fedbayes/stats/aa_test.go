package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The A/A simulation: two runs of the same method, which differ by noise only. Every seed adds a
// component shared by both methods' runs of that seed (its partition, initial model and batch order,
// engine/seeds.go), with sd aaSeedSD, and each run adds its own noise, sd aaRunSD: a sweep in which
// the seed matters far more than the method, as in the reproduction runs.
const (
	aaReplicates = 20000
	aaSeedSD     = 1.0
	aaRunSD      = 0.1
	aaLevel      = DefaultLevel
	// aaTolerance is the Monte Carlo allowance above the level: 3 standard errors of a rate of 0.05
	// over aaReplicates replicates, sqrt(0.05 × 0.95 / 20000) = 0.0015.
	aaTolerance = 3 * 0.00154
)

// aaSample draws one method's values at seeds (seedEffect[s] shared by both methods), plus shift.
func aaSample(rng *rand.Rand, seeds []int64, seedEffect map[int64]float64, shift float64) Sample {
	s := Sample{Seeds: seeds, Values: make([]float64, len(seeds))}
	for i, seed := range seeds {
		s.Values[i] = seedEffect[seed] + aaRunSD*rng.NormFloat64() + shift
	}
	return s
}

// oldRule is the rule the tables and the report used before: a gap above 2 combined standard errors
// of two independent means.
func oldRule(a, b Sample) bool {
	_, va := meanVar(a.Values)
	_, vb := meanVar(b.Values)
	ma, _ := meanVar(a.Values)
	mb, _ := meanVar(b.Values)
	return math.Abs(ma-mb) > 2*math.Sqrt(va/float64(a.N())+vb/float64(b.N()))
}

// aaRates runs the simulation with n seeds per method and returns the share of replicates flagged
// significant by Compare (at aaLevel) and by the old rule, the test Compare used, and the number of
// replicates it could not test. shared says both methods run the same seeds (the paired path);
// otherwise the second method runs other seeds (the Welch path). shift is the second method's true
// difference (0 for A/A).
func aaRates(t *testing.T, rng *rand.Rand, n int, shared bool, shift float64) (rate, oldRate float64, used Test) {
	t.Helper()
	seedsA, seedsB := make([]int64, n), make([]int64, n)
	for i := range n {
		seedsA[i], seedsB[i] = int64(i+1), int64(i+1)
		if !shared {
			seedsB[i] = int64(i + 1 + n)
		}
	}
	flagged, oldFlagged := 0, 0
	for range aaReplicates {
		effect := map[int64]float64{}
		for s := range int64(2*n + 1) {
			effect[s] = aaSeedSD * rng.NormFloat64()
		}
		a, b := aaSample(rng, seedsA, effect, 0), aaSample(rng, seedsB, effect, shift)
		r, err := Compare(a, b)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err) // continuous noise: never constant
		}
		used = r.Test
		if r.Significant(aaLevel) {
			flagged++
		}
		if oldRule(a, b) {
			oldFlagged++
		}
	}
	return float64(flagged) / aaReplicates, float64(oldFlagged) / aaReplicates, used
}

// TestAASimulation checks that with no true difference Compare flags at most the level (plus Monte
// Carlo tolerance) of pairs at 2, 3 and 5 seeds, on the paired path (shared seeds) and on the Welch
// path (other seeds), and that the paired test, exact here, does not flag far fewer. The old 2-SE rule is
// measured on the same draws: on independent samples it flags far more than 5 %, which shows the
// simulation can catch a liberal rule. The rates are logged (go test -v) for docs/statistics.md.
func TestAASimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 2026))
	for _, shared := range []bool{true, false} {
		for _, n := range []int{2, 3, 5} {
			rate, oldRate, used := aaRates(t, rng, n, shared, 0)
			want := Welch
			if shared {
				want = Paired
			}
			t.Logf("A/A, %d seeds, %s: %.4f flagged at level %.2f (old 2-SE rule: %.4f)", n, used, rate, aaLevel, oldRate)
			if used != want {
				t.Errorf("%d seeds, shared %v: used %s, want %s", n, shared, used, want)
			}
			if rate > aaLevel+aaTolerance {
				t.Errorf("A/A, %d seeds, %s: %.4f flagged; want at most %.2f + %.4f", n, used, rate, aaLevel, aaTolerance)
			}
			// The paired test is exact under normal noise, so it flags the level itself; Welch's
			// approximation is conservative at few seeds (2.5 % at 2), and is only bounded above.
			if shared && rate < aaLevel-aaTolerance {
				t.Errorf("A/A, %d seeds, paired: %.4f flagged; an exact test should flag %.2f ± %.4f", n, rate, aaLevel, aaTolerance)
			}
			if !shared && n == 2 && oldRate < 0.12 {
				t.Errorf("old rule at 2 independent seeds flags %.4f; the simulation should show its excess (about 0.18)", oldRate)
			}
		}
	}
}

// TestPower checks that a real shift is detected: 3 run-noise sds at 5 shared seeds is found by the
// paired test nearly always, while an unpaired test on the same draws, swamped by the seed component,
// rarely finds it; that is why runs that share seeds are paired.
func TestPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 33))
	const n, shift = 5, 3 * aaRunSD
	paired, _, used := aaRates(t, rng, n, true, shift)
	if used != Paired || paired < 0.8 {
		t.Errorf("paired power at shift %v, %d seeds: %.3f (%s); want at least 0.8", shift, n, paired, used)
	}
	// Welch on the same kind of draws, ignoring the pairing.
	hits := 0
	for range aaReplicates / 10 {
		effect := map[int64]float64{}
		for s := range int64(n + 1) {
			effect[s] = aaSeedSD * rng.NormFloat64()
		}
		seeds := []int64{1, 2, 3, 4, 5}
		a, b := aaSample(rng, seeds, effect, 0), aaSample(rng, seeds, effect, shift)
		if r, err := WelchT(a.Values, b.Values); err == nil && r.Significant(aaLevel) {
			hits++
		}
	}
	welch := float64(hits) / (aaReplicates / 10)
	t.Logf("power at a shift of %v (run sd %v, seed sd %v), %d seeds: paired %.3f, Welch ignoring the pairing %.3f", shift, aaRunSD, aaSeedSD, n, paired, welch)
	if welch > 0.3 {
		t.Errorf("Welch ignoring the pairing found the shift in %.3f of replicates; the seed component should hide it", welch)
	}
}
