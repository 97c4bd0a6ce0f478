package groundtruth

import (
	"fmt"
	"strings"
)

// writeSites writes the section "Site-based methods to their fixed points" from the regimes' SiteRuns
// (nothing when none ran).
func writeSites(b *strings.Builder, regimes []Summary) {
	var with []Summary
	for _, s := range regimes {
		if len(s.Sites) > 0 {
			with = append(with, s)
		}
	}
	if len(with) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("### Site-based methods to their fixed points\n\n")
	p("PVI and FedEP of \"Over rounds\" run on until they reach their fixed points (at most %d rounds), on the same problems and seeds. ", SiteRounds)
	p("Both run the parallel schedule damped at ρ = min(1, bound/2), where the bound is the largest damping under which parallel PVI converges (`groundtruth.PVIStability`: the eigenvalues of the linearised round; tested against the iteration, which converges at 0.9 × the bound and diverges at 1.1 ×). ")
	p("PVI's rounds count until its KL(q ‖ p) is within %g nat of mean-field VI's, its fixed point; FedEP's until its global moves by at most %g posterior sd (and log-variance) in a round. ", ConvergedNats, SettledChange)
	p("At its fixed point FedEP's mean is the exact posterior mean (tested), and its variances are those at which every client's tilted distribution has the global's marginals; the columns give what that costs against the floors. ")
	p("Ranges are over the %d seeds; \"> %d\" means some seed did not get there.\n\n", len(with[0].Sites), SiteRounds)
	p("| regime | K | stability bound | damping | PVI: rounds to mean-field VI | FedEP: rounds to settle | FedEP: KL(p ‖ q) over its floor | FedEP: KL(q ‖ p) over its floor | FedEP: variance / mean-field VI's |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range with {
		var bound, rho, fromT, toT, ratio []float64
		var pvi, ep []int
		for _, r := range s.Sites {
			bound, rho = append(bound, r.Bound), append(rho, r.Damping)
			pvi, ep = append(pvi, r.PVIRounds), append(ep, r.EPRounds)
			fromT, toT, ratio = append(fromT, r.EPExcessFromTruth), append(toT, r.EPExcessToTruth), append(ratio, r.EPVarOverVI)
		}
		p("| %s | %d | %s | %s | %s | %s | %s | %s | ×%s |\n", s.Scenario.Name, s.Clients, rangeText(bound, num), rangeText(rho, num),
			roundsRange(pvi), roundsRange(ep), rangeText(fromT, numR), rangeText(toT, numR), rangeText(ratio, num))
	}
	p("\n")
}

// roundsRange writes the range of a set of round counts, "> SiteRounds" when one is 0 (not reached).
func roundsRange(rounds []int) string {
	lo, hi := rounds[0], rounds[0]
	for _, r := range rounds {
		if r == 0 {
			return fmt.Sprintf("> %d", SiteRounds)
		}
		lo, hi = min(lo, r), max(hi, r)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
