package reproduce

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/internal/words"
	"fedbayes.dev/fedbayes/report"

	"fedbayes.dev/fedbayes/results"
)

// coincideTolerance is the relative gap below which two rows' final spreads count as equal in
// varianceRulesCoincide.
const coincideTolerance = 1e-3

// varianceRulesCoincide says whether the rules that differ only in how they average the clients'
// variances give the same model on a setting's runs, and if so why, in words for the report. It is the
// report's one test of posterior health.
//
// It reads it off two rows that average the same clients' variances in two ways, a and b (EAA's
// arithmetic and AALV's geometric mean, or one average under two client weightings): they end at the
// same learned spread only when the clients' variances are equal. When both rows ran and their final
// spreads agree within coincideTolerance in every seed they share, the rules coincide. A pair missing
// either row, or any seed apart, says nothing (false).
//
// The reason comes from the runs' recorded posterior health (report.RunHealth) where they hold it:
// variances that did not move from their initial value (frozen, or held at a clamp), or variances that
// moved alike on every client (uniform). Records from before fedbayes measured it cannot tell the two
// apart; the reason then says so and gives the spread's first and last recorded values.
func varianceRulesCoincide(rs runSet, a, b string) (bool, string) {
	ra, rb := rs.where("variant", a), rs.where("variant", b)
	_, worst, n := spreadGaps(rs, a, b)
	if n == 0 || !(worst < coincideTolerance) {
		return false, ""
	}
	same := fmt.Sprintf("%s and %s end at the same learned spread (%s and %s, within %.0e of each other in every one of %d %s), "+
		"which two different averages of the clients' variances give only when the clients' variances are equal",
		a, b, ra.summary(results.Spread).format(1, 4), rb.summary(results.Spread).format(1, 4), math.Max(worst, 1e-12), n, words.Plural(n, "seed"))
	return true, coincideReason(append(ra, rb...)) + ": " + same
}

// spreadGaps is the least and largest relative gap |spread_a / spread_b - 1| between rows a and b
// of a run set over the seeds both ran (paired by seed), with the number of seeds compared.
func spreadGaps(rs runSet, a, b string) (lo, hi float64, n int) {
	va, vb := rs.where("variant", a).sample(results.Spread), rs.where("variant", b).sample(results.Spread)
	byA := map[int64]float64{}
	for i, s := range va.Seeds {
		byA[s] = va.Values[i]
	}
	lo = math.Inf(1)
	for i, s := range vb.Seeds {
		x, ok := byA[s]
		if !ok || !(vb.Values[i] > 0) {
			continue
		}
		g := math.Abs(x/vb.Values[i] - 1)
		lo, hi, n = math.Min(lo, g), math.Max(hi, g), n+1
	}
	return lo, hi, n
}

// gapRange prints a range of relative gaps in percent: "0.59-1.10 %", or "0.59 %" for one value.
func gapRange(lo, hi float64) string {
	if fmt.Sprintf("%.2f", 100*lo) == fmt.Sprintf("%.2f", 100*hi) {
		return fmt.Sprintf("%.2f %%", 100*hi)
	}
	return fmt.Sprintf("%.2f–%.2f %%", 100*lo, 100*hi)
}

// posteriorsDidNotLearn says whether a setting's variational nets did not learn their variances, for
// the findings that compare variational nets with other nets (deterministic, MC dropout, fewer
// variational layers) rather than variance rules with one another. It is varianceRulesCoincide (a and
// b as there) less the case where the recorded posterior health says the variances learned, alike on
// every client (uniform) or not: then the variational nets are what the paper trained, and a
// comparison with other nets tests the finding even though the variance rules coincide. Records from
// before fedbayes measured the health cannot tell the cases apart and count as not learned.
func posteriorsDidNotLearn(rs runSet, a, b string) (bool, string) {
	ok, why := varianceRulesCoincide(rs, a, b)
	if !ok {
		return false, ""
	}
	for _, r := range append(rs.where("variant", a), rs.where("variant", b)...) {
		if st := report.RunHealth(r).State; st == report.HealthUniform || st == report.HealthLearned {
			return false, ""
		}
	}
	return true, why
}

// coincideReason says why the clients' variances were equal in runs whose variance-combining rules
// coincide: from the recorded posterior health of the first run that holds it, else with the spread's
// first and last recorded values.
func coincideReason(rs runSet) string {
	for _, r := range rs {
		h := report.RunHealth(r)
		switch {
		case h.Frozen():
			return "the posteriors did not learn (" + h.Message + "); the variational nets behave as deterministic ones, " +
				"rules that differ only in how they average the clients' variances give the same model, and more rounds do not help a variance that gets no gradient to speak of"
		case h.State == report.HealthUniform:
			return "the variances learned but alike on every client (" + h.Message + "), so rules that differ only in how they average " +
				"the clients' variances give the same model here"
		case h.State == report.HealthLearned:
			return "the variances learned and the clients disagreed on them (" + h.Message + "), yet the rules end alike"
		}
	}
	for _, r := range rs {
		first, last := math.NaN(), math.NaN()
		for _, row := range r.Rows {
			if v, ok := row.Metrics[results.Spread]; ok {
				if math.IsNaN(first) {
					first = v
				}
				last = v
			}
		}
		if first > 0 {
			return fmt.Sprintf("the clients' variances were equal (the records predate the posterior-health measures, so whether they stayed at "+
				"their initial value or moved alike is not recorded; the spread went from %.4g in the first recorded round to %.4g in %s), "+
				"so rules that differ only in how they average the clients' variances give the same model here", first, last, r.Meta.Setting)
		}
	}
	return "the clients' variances were equal (the records predate the posterior-health measures), so rules that differ only in how they " +
		"average the clients' variances give the same model here"
}

// clientVariancesAlike is the report's one criterion for "the clients' variances differ", which every
// precondition that asks it reads: they are alike (near-equal) on a setting's runs when rows a and b,
// two averages of the same clients' variances, end at the same learned spread
// (varianceRulesCoincide), or when every run of a and b with recorded posterior health says the
// clients' log σ² differ by less than report.MinDisagreement (uniform) or did not move (frozen or
// clamped: report.Health.Flagged). why says what the runs show, with the numbers.
func clientVariancesAlike(rs runSet, a, b string) (alike bool, why string) {
	if ok, why := varianceRulesCoincide(rs, a, b); ok {
		return true, why
	}
	n, flagged, msg := 0, 0, ""
	for _, r := range append(rs.where("variant", a), rs.where("variant", b)...) {
		h := report.RunHealth(r)
		if h.State == report.HealthUnmeasured || h.State == report.HealthNotVariational {
			continue
		}
		n++
		if h.Flagged() {
			flagged++
			if msg == "" {
				msg = h.Message
			}
		}
	}
	gap := ""
	if lo, hi, k := spreadGaps(rs, a, b); k > 0 {
		gap = fmt.Sprintf("; %s and %s end %s apart in spread over %d %s", a, b, gapRange(lo, hi), k, words.Plural(k, "seed"))
	}
	switch {
	case n > 0 && flagged == n:
		return true, fmt.Sprintf("the clients' variances were near-equal (within %g in log σ², a convention of this report) in all %d runs of %s and %s with recorded health (first: %s)%s",
			report.MinDisagreement, n, a, b, msg, gap)
	case n > 0:
		return false, fmt.Sprintf("the clients' variances differed in %d of %d runs of %s and %s with recorded health%s", n-flagged, n, a, b, gap)
	}
	return false, fmt.Sprintf("%s and %s do not end at the same learned spread (within %.1f %% in every seed), and no run records its posterior health%s",
		a, b, 100*coincideTolerance, gap)
}
