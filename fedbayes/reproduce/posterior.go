package reproduce

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/results"
)

// frozenTolerance is the relative gap below which two rows' final spreads count as equal in
// frozenVariances.
const frozenTolerance = 1e-3

// frozenVariances says whether the variances of a setting's runs stayed at their initial value, and
// if so why we think so, in words for the report. It is the report's one test of posterior health.
//
// The runs' records do not yet hold the variances' movement per round, so it reads it off two rows
// that average the same clients' variances in two ways, a and b (EAA's arithmetic and AALV's
// geometric mean, or one average under two client weightings): the two agree only when every
// client's variances are equal, which local training on different data cannot leave them unless
// they did not move from the shared initial value. When both rows ran and their final spreads agree
// within frozenTolerance in every seed they share, the variances did not learn. A pair missing
// either row, or any seed apart, says nothing (false).
func frozenVariances(rs runSet, a, b string) (bool, string) {
	va, vb := rs.where("variant", a).sample(results.Spread), rs.where("variant", b).sample(results.Spread)
	byA := map[int64]float64{}
	for i, s := range va.Seeds {
		byA[s] = va.Values[i]
	}
	worst, n := 0.0, 0
	for i, s := range vb.Seeds {
		x, ok := byA[s]
		if !ok || !(vb.Values[i] > 0) {
			continue
		}
		worst, n = math.Max(worst, math.Abs(x/vb.Values[i]-1)), n+1
	}
	if n == 0 || !(worst < frozenTolerance) {
		return false, ""
	}
	return true, fmt.Sprintf("the posteriors did not learn: %s and %s end at the same learned spread (%s and %s, within %.0e of each other in every one of %d %s), "+
		"which two different averages of the clients' variances give only when every client's variances are equal, that is, still at their initial value; "+
		"the variational nets behave as deterministic ones, rules that differ in how they combine variances give the same model, "+
		"and more rounds do not help a variance that gets no gradient to speak of",
		a, b, rs.where("variant", a).summary(results.Spread).format(1, 4), rs.where("variant", b).summary(results.Spread).format(1, 4),
		math.Max(worst, 1e-12), n, plural(n, "seed"))
}
