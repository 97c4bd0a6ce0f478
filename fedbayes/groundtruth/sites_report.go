package groundtruth

import (
	"fmt"
	"strings"
)

// writeSites writes the section "Site methods to their fixed points" from the regimes' SiteRuns
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
	p("### Site methods to their fixed points\n\n")
	p("PVI and FedEP of \"Over rounds\" run on, on the same problems and seeds, for up to %d rounds. ", SiteMaxRounds)
	p("Each runs the parallel schedule damped at ρ = min(1, bound/2), half its own stability bound: the largest damping under which its round converges near its fixed point. ")
	p("PVI's bound is closed-form (`groundtruth.PVIStability`, the eigenvalues of its linearised round); FedEP's comes from a finite-difference Jacobian of its round at its fixed point (`groundtruth.SiteStability`, which gives PVI's closed form back, tested). ")
	p("Both are tested against the iteration, which converges at 0.9 × the bound and diverges at 1.1 × where that is a damping at most 1. ")
	p("*Rounds* is the first round from which every later global is within %g (posterior sd for the means, log-variance) of the method's own fixed point, the same criterion for both; \"> %d\" means some seed's run had not settled. ", SiteNear, SiteMaxRounds)
	p("PVI's fixed point is the global mean-field VI (its KL(q ‖ p) excess is rounding error); FedEP's has the exact mean (tested), with the variances at which every client's tilted distribution has the global's marginals; the last columns say where it stands against the two floors. ")
	p("Ranges are over the %d seeds.\n\n", len(with[0].Sites))
	p("| regime | K | PVI: bound | damping | rounds | KL(q ‖ p) over its floor | FedEP: bound | damping | rounds | KL(p ‖ q) over its floor | KL(q ‖ p) over its floor | variance / mean-field VI's |\n")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range with {
		cells := []string{s.Scenario.Name, fmt.Sprint(s.Clients)}
		for _, label := range []string{PVILabel, EPLabel} {
			runs := siteRunsOf(s.Sites, label)
			cells = append(cells, siteCells(runs, label == EPLabel)...)
		}
		p("| %s |\n", strings.Join(cells, " | "))
	}
	p("\n")
}

// siteRunsOf returns the method label's runs over the seeds.
func siteRunsOf(sites []SiteRun, label string) []SiteMethodRun {
	var out []SiteMethodRun
	for _, s := range sites {
		for _, m := range s.Methods {
			if m.Label == label {
				out = append(out, m)
			}
		}
	}
	return out
}

// siteCells are one method's cells of the sites table: bound, damping, rounds, then KL(q || p) over
// its floor (PVI) or both excesses and the variance against mean-field VI's (withBoth, FedEP); "—"
// where some seed's run stopped.
func siteCells(runs []SiteMethodRun, withBoth bool) []string {
	var bound, rho, from, to, ratio []float64
	var rounds []int
	for _, r := range runs {
		if !r.Ran {
			n := 3
			if withBoth {
				n = 5
			}
			return append([]string{"stopped: " + r.Stopped}, strings.Split(strings.Repeat("—,", n), ",")[:n]...)
		}
		bound, rho, rounds = append(bound, r.Bound), append(rho, r.Damping), append(rounds, r.Rounds)
		from, to, ratio = append(from, r.ExcessFromTruth), append(to, r.ExcessToTruth), append(ratio, r.VarOverVI)
	}
	cells := []string{rangeText(bound, num), rangeText(rho, num), roundsRange(rounds)}
	if withBoth {
		return append(cells, rangeText(from, numR), rangeText(to, numR), "×"+rangeText(ratio, num))
	}
	return append(cells, rangeText(to, numR))
}

// roundsRange writes the range of a set of round counts, "> SiteMaxRounds" when one is 0 (not settled).
func roundsRange(rounds []int) string {
	lo, hi := rounds[0], rounds[0]
	for _, r := range rounds {
		if r == 0 {
			return fmt.Sprintf("> %d", SiteMaxRounds)
		}
		lo, hi = min(lo, r), max(hi, r)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
