package groundtruth

import (
	"math"

	"fedbayes.dev/fedbayes/stats"
)

// ExcessOver is the lab's one excess formula: how far a diagonal Gaussian with divergences
// KL(q || p) = klToTruth and KL(p || q) = klFromTruth is from the mean-field floors of the same
// problem, the larger of klToTruth − floorToTruth (the global mean-field VI's KL(q || p)) and
// klFromTruth − floorFromTruth (the global marginals' KL(p || q)); +Inf for a point mass. The
// one-round tables (Summary.Excess), the rounds (RoundsSummary.Excess), EP-MCMC's draw sets and the
// paired comparisons (Summary.SeedExcess) all read it per seed, against that seed's floors.
func ExcessOver(klToTruth, klFromTruth, floorToTruth, floorFromTruth float64) float64 {
	return math.Max(klToTruth-floorToTruth, klFromTruth-floorFromTruth)
}

// CILevel is the significance level of the page's paired intervals: 95 % confidence.
const CILevel = stats.DefaultLevel

// scored returns the run's method or reference labelled label.
func (r *Result) scored(label string) (Scored, bool) {
	for _, list := range [][]Scored{r.Rules, r.References} {
		for _, s := range list {
			if s.Label == label {
				return s, true
			}
		}
	}
	return Scored{}, false
}

// floors returns the run's mean-field floors: the global mean-field VI's KL(q || p) and the global
// marginals' KL(p || q).
func (r *Result) floors() (toTruth, fromTruth float64) {
	vi, _ := r.scored(RefMeanFieldVI)
	mom, _ := r.scored(RefMoment)
	return float64(vi.Distances.KLToTruth), float64(mom.Distances.KLFromTruth)
}

// seedExcess is the excess (ExcessOver) of the run's method labelled label over the run's own floors;
// ok is false when the run lacks it or it gave no posterior there.
func (r *Result) seedExcess(label string) (e float64, ok bool) {
	sc, found := r.scored(label)
	if !found || sc.Failed != "" {
		return 0, false
	}
	vi, mom := r.floors()
	return ExcessOver(float64(sc.Distances.KLToTruth), float64(sc.Distances.KLFromTruth), vi, mom), true
}

// SeedExcess returns the excess of the method labelled label in each of the summary's runs (one per
// seed, in the order of Summary.Runs), NaN where that seed's method gave no posterior; nil for a
// summary without runs or a label some run lacks.
func (s Summary) SeedExcess(label string) []float64 {
	if len(s.Runs) == 0 {
		return nil
	}
	out := make([]float64, len(s.Runs))
	for i, r := range s.Runs {
		if _, found := r.scored(label); !found {
			return nil
		}
		e, ok := r.seedExcess(label)
		if !ok {
			e = math.NaN()
		}
		out[i] = e
	}
	return out
}

// Lead compares two methods' excesses seed by seed: Diff is the mean over the seeds where both gave
// a posterior of Behind's excess minus Ahead's, with its two-sided 95 % confidence interval [Lo, Hi]
// (Student's t on the paired differences, stats.MeanCI); Wins counts the seeds where Ahead's excess
// is the smaller. Decided says the interval lies above 0: Ahead's lead is more than the seeds'
// noise. Untestable gives the reason when no interval exists (fewer than two seeds, a point mass).
type Lead struct {
	Ahead, Behind string
	Pairs, Wins   int
	Diff, Lo, Hi  float64
	Decided       bool
	Untestable    string
}

// PairedLead returns the Lead of the method labelled ahead over the one labelled behind, read from the
// summary's runs.
func (s Summary) PairedLead(ahead, behind string) Lead {
	out := Lead{Ahead: ahead, Behind: behind}
	a, b := s.SeedExcess(ahead), s.SeedExcess(behind)
	if a == nil || b == nil {
		out.Untestable = "no per-seed runs"
		return out
	}
	var d []float64
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			continue
		}
		if a[i] < b[i] {
			out.Wins++
		}
		d = append(d, b[i]-a[i])
	}
	out.Pairs = len(d)
	for _, v := range d {
		out.Diff += v / float64(len(d))
	}
	lo, hi, err := stats.MeanCI(d, CILevel)
	if err != nil {
		out.Untestable = "fewer than two seeds with finite excesses"
		out.Lo, out.Hi = math.NaN(), math.NaN()
		return out
	}
	out.Lo, out.Hi, out.Decided = lo, hi, lo > 0
	return out
}

// SeedBest counts, among the given labels, the seeds where the method labelled label has the
// smallest excess (ties to the earlier label in labels), of the seeds where every one gave a
// posterior (n).
func (s Summary) SeedBest(label string, labels []string) (k, n int) {
	ex := make([][]float64, len(labels))
	for j, l := range labels {
		if ex[j] = s.SeedExcess(l); ex[j] == nil {
			return 0, 0
		}
	}
	for i := range s.Runs {
		best, bestJ, ok := math.Inf(1), -1, true
		for j := range labels {
			e := ex[j][i]
			if math.IsNaN(e) {
				ok = false
				break
			}
			if bestJ < 0 || e < best {
				best, bestJ = e, j
			}
		}
		if !ok {
			continue
		}
		n++
		if labels[bestJ] == label {
			k++
		}
	}
	return k, n
}
