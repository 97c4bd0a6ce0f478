package groundtruth

import (
	"fmt"
	"math"
	"strings"
)

// frontierWithin are the distances to the frontier the rounds are measured to: NearNats ("near")
// and RecoverNats ("recovers"), the one-round verdicts' thresholds.
var frontierWithin = []float64{NearNats, RecoverNats}

// reachCell writes one FrontierReach: the rounds over the seeds that reach the distance and how many
// do.
func reachCell(r FrontierReach) string {
	var at []int
	for _, t := range r.Rounds {
		if t > 0 {
			at = append(at, t)
		}
	}
	if len(at) == 0 {
		return fmt.Sprintf("≤ %g: none of %d", r.Within, len(r.Rounds))
	}
	return fmt.Sprintf("≤ %g: round %s (%d of %d)", r.Within, intRange(at), r.Reached, len(r.Rounds))
}

// frontierWord is the one-round verdict's word for a mean gap to the frontier.
func frontierWord(gap float64) string {
	switch {
	case math.IsInf(gap, 1):
		return "point mass"
	case gap <= RecoverNats:
		return "recovers"
	case gap <= NearNats:
		return "near"
	}
	return "far"
}

// writeRoundsFrontier writes how many rounds each method under policy pol needs to come within the
// stated distances of the frontier, per regime, for the methods that come within NearNats in some
// seed of some regime (the site methods always), and the verdicts at the last round.
func writeRoundsFrontier(b *strings.Builder, with []Summary, pol PriorPolicy, level string) {
	first := roundsOf(with[0], pol)
	if first == nil {
		return
	}
	if _, ok := first.ToFrontier(first.Rows[0], NearNats); !ok {
		return
	}
	T := first.Rounds
	var tb strings.Builder // the table, written before the intro that lists the methods it leaves out
	t := func(format string, a ...any) { fmt.Fprintf(&tb, format, a...) }
	t("| method |")
	for _, s := range with {
		t(" %s (K = %d) |", s.Scenario.Name, s.Clients)
	}
	t("\n| --- |%s\n", strings.Repeat(" --- |", len(with)))
	var left, shown []string
	words := map[string]map[string]int{}
	for i, row := range first.Rows {
		reached := isSiteMethod(row.Label)
		for _, s := range with {
			rs := roundsOf(s, pol)
			if rs == nil || i >= len(rs.Rows) || rs.Rows[i].Label != row.Label {
				continue
			}
			if r, ok := rs.ToFrontier(rs.Rows[i], NearNats); ok && r.Reached > 0 {
				reached = true
			}
		}
		if !reached {
			left = append(left, row.Label)
			continue
		}
		shown = append(shown, row.Label)
		words[row.Label] = map[string]int{}
		t("| %s |", row.Label)
		for _, s := range with {
			rs := roundsOf(s, pol)
			if rs == nil || i >= len(rs.Rows) || rs.Rows[i].Label != row.Label {
				t(" |")
				continue
			}
			var parts []string
			gap := 0.0
			for _, d := range frontierWithin {
				r, _ := rs.ToFrontier(rs.Rows[i], d)
				parts = append(parts, reachCell(r))
				gap = r.Gap
			}
			w := frontierWord(gap)
			words[row.Label][w]++
			t(" %s; round %d: %s, *%s* |", strings.Join(parts, "; "), len(rs.Rows[i].SeedExcess[0]), numR(gap), w)
		}
		t("\n")
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("%s Rounds to the frontier (%s)\n\n", level, policyName(pol))
	p("Per seed, the first round from which a method's excess over that seed's floors (the one formula of the one-round tables, `groundtruth.ExcessOver`) stays within the stated distance of that seed's frontier excess through round %d, the last one run (what it does after round %d is not checked); ", T, T)
	p("each cell gives, for %g nat (*near*) and %g nat (*recovers*), the range of those rounds over the seeds that reach it and how many seeds do, then the mean gap to the frontier at the last round with its verdict word. ", NearNats, RecoverNats)
	p("Left out, as within %g nat in no seed of any regime: %s.", NearNats, listOr(left))
	if same := samePolicyRows(with, pol, shown); len(same) > 0 {
		p(" The rows of %s are the same as under the %s in every regime and seed, by construction: every client of a site method trains against its cavity, so its trajectory does not depend on the prior policy.", strings.Join(same, " and "), policyName(FixedPrior))
	}
	p("\n\n")
	b.WriteString(tb.String())
	p("\n")
	for _, l := range shown {
		var parts []string
		for _, w := range []string{"recovers", "near", "far", "point mass"} {
			if n := words[l][w]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s in %d", w, n))
			}
		}
		p("- **%s** at round %d, judged against the frontier: %s of %d regimes.\n", l, T, strings.Join(parts, ", "), len(with))
	}
	p("\n")
}

// samePolicyRows returns the site methods among labels whose per-seed excesses under pol equal
// those under the fixed prior in every regime of with, round by round; none when pol is the fixed
// prior itself.
func samePolicyRows(with []Summary, pol PriorPolicy, labels []string) []string {
	if pol == FixedPrior {
		return nil
	}
	var out []string
	for _, l := range labels {
		if !isSiteMethod(l) {
			continue
		}
		same := true
		for _, s := range with {
			a, b := roundsOf(s, pol), roundsOf(s, FixedPrior)
			if a == nil || b == nil {
				same = false
				break
			}
			ra, rb := a.row(l), b.row(l)
			if ra == nil || rb == nil || !sameSeedExcess(ra.SeedExcess, rb.SeedExcess) {
				same = false
				break
			}
		}
		if same {
			out = append(out, l)
		}
	}
	return out
}

// sameSeedExcess reports whether two per-seed, per-round excess series are equal (+Inf equal to
// +Inf; NaN to nothing).
func sameSeedExcess(a, b [][]Value) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// row returns the row labelled label (nil when there is none).
func (rs *RoundsSummary) row(label string) *RoundsRow {
	for i := range rs.Rows {
		if rs.Rows[i].Label == label {
			return &rs.Rows[i]
		}
	}
	return nil
}
