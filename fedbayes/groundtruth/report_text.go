package groundtruth

import (
	"fmt"
	"math"
	"strings"
)

// isFedPA reports whether label is one of the FedPA rows, which combine full shrunk sample
// covariances rather than diagonal messages.
func isFedPA(label string) bool { return label == LabelFedPA || label == LabelFedPAIterated }

// misspecifiedText is the findings' reading of a misspecified regime (Config.Misspecified): p is
// the posterior of the wrong shared-w model, so the ΔNLL below 0 and the coverage above p's that
// it counts among the diagonal methods with a variance do not mean they beat the posterior. It is
// "" for a well-specified regime.
func misspecifiedText(s Summary) string {
	if !s.Scenario.Config.Misspecified() {
		return ""
	}
	var n, neg, above int
	var widest Row
	held := s.Scenario.Config.Test * len(s.Runs)
	margin := coverageMargin(s.ExactCoverage90, held)
	for _, r := range diagonal(usable(s.Main())) {
		if r.VarRatio == 0 {
			continue // a point mass
		}
		n++
		if r.NLLExcess < 0 {
			neg++
		}
		if r.Coverage90 > s.ExactCoverage90+margin {
			above++
			if widest.Label == "" || r.Coverage90 > widest.Coverage90 {
				widest = r
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, " Here p is the posterior of a misspecified model: each client's targets come from its own weights, but the model and p keep one shared w, so p's 90 %% interval covers %s of the held-out targets, not 90 %%.", pct(s.ExactCoverage90))
	if neg+above > 0 {
		fmt.Fprintf(&b, " Against it, %d of the %d diagonal methods with a variance have ΔNLL below 0 and %d cover more than p does by more than %s points (two binomial standard errors of p's coverage over its %d held-out targets; a fixed margin, not a paired test, though each method is scored on the same targets)", neg, n, above, num(100*margin), held)
		if above > 0 {
			fmt.Fprintf(&b, " (up to %s, %s, variance ratio ×%s)", pct(widest.Coverage90), widest.Label, num(widest.VarRatio))
		}
		b.WriteString(": a predictive wider than p's is rewarded here, so neither says that a method beats the posterior;")
	}
	b.WriteString(" KL to p measures agreement with that posterior, not predictive quality.")
	return b.String()
}

// coverageMargin is two binomial standard errors of a 90 % interval's coverage c estimated on n
// held-out targets, 2·sqrt(c(1 − c)/n): a margin the size of the held-out sample's noise in c
// itself, not a test of a method against p on the same targets. It is 0 when n is not positive.
func coverageMargin(c float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return 2 * math.Sqrt(c*(1-c)/float64(n))
}

// predictiveMisspecifiedText is the predictive-space findings' caveat for a misspecified regime:
// β-PredBayes fits β on server examples drawn from the clients' own weights, which p and the
// parameter-space rules do not model. It is "" for a well-specified regime or one without a
// β-PredBayes row.
func predictiveMisspecifiedText(s Summary) string {
	if !s.Scenario.Config.Misspecified() {
		return ""
	}
	for _, r := range s.PredRows {
		if r.Label == LabelBetaPredBayes {
			return fmt.Sprintf(" (p is misspecified here; %s fits β = %s on %d server examples drawn from the clients' own weights, data of the true shifted distribution that p and the parameter-space rules never see, so its ΔNLL %s is no sign of a better posterior)",
				r.Label, num(r.Beta), ServerExamples, num(r.NLLExcess))
		}
	}
	return ""
}

// sameFloors reports whether two regimes have the same two floors to a relative 1e-9: the same
// global covariance in every seed, as where the pooled inputs are the same.
func sameFloors(a, b Summary) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)) }
	return eq(float64(a.reference(RefMoment).KLFromTruth), float64(b.reference(RefMoment).KLFromTruth)) &&
		eq(float64(a.reference(RefMeanFieldVI).KLToTruth), float64(b.reference(RefMeanFieldVI).KLToTruth))
}

// sharedFloorsText says which regimes have the first regime's floors (sameFloors), so that a count
// over the regimes is not read as that many independent confirmations; "" when none has.
func sharedFloorsText(regimes []Summary) string {
	if len(regimes) < 2 {
		return ""
	}
	var same []string
	for _, s := range regimes[1:] {
		if sameFloors(regimes[0], s) {
			same = append(same, s.Scenario.Name)
		}
	}
	if len(same) == 0 {
		return ""
	}
	return fmt.Sprintf(" The %d regimes share their seeds, and %s %s %s's floors (to a relative 1e-9: the same pooled inputs, so the same global covariance; they differ in how the examples are dealt out or in the targets): the count of %d is not that many independent confirmations.",
		len(regimes), strings.Join(same, ", "), map[bool]string{true: "has", false: "have"}[len(same) == 1], regimes[0].Scenario.Name, len(regimes))
}

// meanErrorText explains the mean errors of the linear regimes, each cause with its own minimum
// over the regimes: the methods that combine one diagonal Gaussian per client (the rules of
// `aggregate`, the diagonal EP-MCMC) drop the off-diagonal precision the exact mean needs; FedPA
// combines full shrunk sample covariances, so its error comes from the draws and the shrinkage.
func meanErrorText(regimes []Summary) string {
	type least struct {
		err           float64
		label, regime string
	}
	diag, fedpa := least{err: math.Inf(1)}, least{err: math.Inf(1)}
	for _, s := range regimes {
		for _, r := range diagonal(usable(s.Main())) {
			l := &diag
			if isFedPA(r.Label) {
				l = &fedpa
			}
			if r.MeanErrorSD < l.err {
				*l = least{r.MeanErrorSD, r.Label, s.Scenario.Name}
			}
		}
	}
	var b strings.Builder
	switch {
	case math.IsInf(diag.err, 1):
	case diag.err > 1e-6:
		fmt.Fprintf(&b, " No method that combines diagonal messages (the parameter-space rules of `aggregate`, the diagonal EP-MCMC) gets the exact mean in any regime: the smallest error among them is %s sd (%s, %s); each sees one diagonal Gaussian per client, which drops the off-diagonal precision that the exact combination Λ⁻¹ Σ_k Λ_k m_k needs.",
			num(diag.err), diag.label, diag.regime)
	default:
		fmt.Fprintf(&b, " Among the methods that combine diagonal messages, %s gets the exact mean in %s (error %s sd).", diag.label, diag.regime, num(diag.err))
	}
	if !math.IsInf(fedpa.err, 1) {
		fmt.Fprintf(&b, " FedPA's error has another cause: it combines the clients' full sample covariances, shrunk by ρ = %g, so it misses by the Monte Carlo error of the draws and the shrinkage (the iterated form's limit with exact client moments is the exact mean; the one-step form also stops after one step from x0 = 0, with the prior not divided out); its smallest error is %s sd (%s, %s).",
			predictiveFedPARho(), num(fedpa.err), fedpa.label, fedpa.regime)
	}
	return b.String()
}
