package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"fedbayes.dev/fedbayes/internal/words"
	"fedbayes.dev/fedbayes/stats"
)

// powerTarget is the power the report states seeds for, and powerMaxSeeds the most seeds it looks at.
const (
	powerTarget   = 0.8
	powerMaxSeeds = 200
)

// upperFirst capitalises the first letter of s.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// effectCI is a tested check's difference with its 95 % confidence interval at its step in Holm's
// procedure, Δ ± t(1 − 0.05/(2k), df) SE, where the comparison is tested at level 0.05/k (check.step;
// k = 1 alone or last), in the check's units: "+5.52 (95 % CI 4.43 to 6.61)" for k = 1, "+5.52 (95 % CI,
// Holm α/6: 3.10 to 7.94)". A comparison Holm's correction finds has p below 0.05/k, so its interval
// excludes 0; an interval that excludes 0 belongs to one it finds unless an earlier step stopped it.
func effectCI(c check) string {
	k := max(c.step, 1)
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: c.res.DF}.Quantile(1-Level/float64(2*k)) * c.res.SE
	d, s := c.res.Diff*c.col.scale, half*c.col.scale
	at := ""
	if k > 1 {
		at = fmt.Sprintf(", Holm α/%d:", k)
	}
	return fmt.Sprintf("%+.*f (95 %% CI%s %.*f to %.*f)", c.col.digits, d, at, c.col.digits, d-s, c.col.digits, d+s)
}

// largestEffect is the counted tested check with the largest |Δ| (in its units) with its interval
// and label, for the summary; "" without one.
func largestEffect(checks []check) string {
	best := -1
	for i, c := range checks {
		if c.aside != "" || !c.tested || c.col.scale == 0 {
			continue
		}
		if best < 0 || math.Abs(c.res.Diff*c.col.scale) > math.Abs(checks[best].res.Diff*checks[best].col.scale) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("%s: Δ %s", checks[best].label, effectCI(checks[best]))
}

// powerText says, for the counted difference checks that were not decisive, what their test asked
// and how many seeds would have given it power: the |t| Holm's first threshold needs at the seeds run
// (stats.CriticalT), and for the three with the largest |t| the seeds at which the test reaches 80 %
// power for the observed difference, from the observed SD of the paired differences (or of both
// samples, Welch) and the same Holm family (stats.SeedsForPower). "" when every one was decisive.
func powerText(checks []check) string {
	var open []check
	for _, c := range checks {
		if c.aside == "" && c.tested && c.outcome == undecided {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return ""
	}
	slices.SortStableFunc(open, func(a, b check) int {
		return -cmpFloat(math.Abs(a.res.T), math.Abs(b.res.T))
	})
	first := open[0]
	crit, err := stats.CriticalT(first.res.DF, max(first.holm, 1), Level)
	if err != nil {
		return ""
	}
	n := first.res.NA
	out := fmt.Sprintf("Power: %d %s not decisive; at %d seeds a %s over a Holm family of %d needs |t| > %.2f to pass, and the largest |t| here is %.2f",
		len(open), map[bool]string{true: "comparison was", false: "comparisons were"}[len(open) == 1], n, shortTest(first.res.Test)+" t-test", max(first.holm, 1), crit, math.Abs(first.res.T))
	var need []string
	for _, c := range open[:min(3, len(open))] {
		need = append(need, c.label+" "+seedsNeeded(c))
	}
	tost := ""
	for _, c := range open[:min(3, len(open))] {
		if !c.difference {
			tost = "; for an equivalence check the count is its difference test's, not its TOST's"
		}
	}
	return out + fmt.Sprintf("; an estimate of the seeds that would give %.0f %% power to decide it, in either direction (shifted-t approximation, docs/statistics.md), "+
		"from the observed difference and SD (%g degrees of freedom, so the estimate is rough, and an observed difference tends to exceed the true one, "+
		"so it errs low): %s%s", 100*powerTarget, first.res.DF, strings.Join(need, "; "), tost)
}

// seedsNeeded says how many seeds would give a check's test 80 % power: "(Δ +38.2): 5 seeds".
func seedsNeeded(c check) string {
	p := stats.Power{Diff: c.res.Diff, SD: c.res.SE * math.Sqrt(float64(c.res.NA)), Paired: c.res.Test == stats.Paired}
	n, ok, err := stats.SeedsForPower(p, max(c.holm, 1), Level, powerTarget, powerMaxSeeds)
	d := c.col.delta(c.res.Diff, c.res.SE)
	switch {
	case err != nil:
		return fmt.Sprintf("(Δ %s): not computable (%v)", d, err)
	case !ok:
		return fmt.Sprintf("(Δ %s): more than %d seeds (the difference is within the seeds' noise)", d, powerMaxSeeds)
	}
	return fmt.Sprintf("(Δ %s): %d %s", d, n, words.Plural(n, "seed"))
}

// cmpFloat orders two floats.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// finalRoundText judges a windowed finding's comparisons again on each run's final round alone,
// for a scoring window chosen after pilot runs: each pair (lo, hi) is the claim lo < hi on the
// metric, one Holm family as in the window. It gives the evidence sentence and, where the verdict by
// the final round differs from windowed, a caveat for the summary.
func finalRoundText(rs runSet, pairs [][2]string, col metricCol, window string, windowed Verdict) (text, caveat string) {
	var c claims
	for _, p := range pairs {
		a, b := rs.where("variant", p[0]).sample(col.name), rs.where("variant", p[1]).sample(col.name)
		if len(a.Values) > 0 && len(b.Values) > 0 {
			c.below(p[0]+" < "+p[1], a, b, col)
		}
	}
	if c.n() == 0 {
		return "", ""
	}
	checks := c.checks()
	v := judge(checks)
	var parts []string
	for _, ch := range checks {
		parts = append(parts, ch.text)
	}
	text = fmt.Sprintf("The scoring window (%s) was chosen after pilot runs; the final round alone gives %s (%s): %s",
		window, v, tally(checks), strings.Join(parts, "; "))
	if v != windowed {
		caveat = fmt.Sprintf("by the final round alone: %s", v)
	}
	return text, caveat
}
