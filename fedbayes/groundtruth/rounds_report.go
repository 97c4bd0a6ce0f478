package groundtruth

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
)

// numR is num with large values in exponent form (a collapsing rule's KL reaches 1e40).
func numR(v float64) string {
	if math.Abs(v) >= 1e6 && !math.IsInf(v, 0) {
		return fmt.Sprintf("%.2g", v)
	}
	return num(v)
}

// policyName is the page's name of a prior policy.
func policyName(p PriorPolicy) string {
	if p == UpdatedPrior {
		return "updated prior"
	}
	return "fixed prior"
}

// roundsOf returns the scenario's rounds under policy pol (nil when not run).
func roundsOf(s Summary, pol PriorPolicy) *RoundsSummary {
	for i := range s.Rounds {
		if s.Rounds[i].Prior == pol {
			return &s.Rounds[i]
		}
	}
	return nil
}

// verdictCell writes one table cell: the trend, the excess at round 1 → the last round, and the best
// round when it is neither.
func verdictCell(rs RoundsSummary, row RoundsRow) string {
	v := rs.Verdict(row)
	switch v.Kind {
	case TrendStops:
		if v.Last == 0 {
			return fmt.Sprintf("stops in round 1 (%d of %d seeds)", row.Stopped, row.Seeds)
		}
		return fmt.Sprintf("stops after round %d (%d of %d seeds)", v.Last, row.Stopped, row.Seeds)
	case TrendPointMass:
		return "point mass"
	case TrendFixed:
		return fmt.Sprintf("fixed from round %d: %s", v.FixedFrom, numR(v.Final))
	case TrendAtMeanFieldVI:
		return fmt.Sprintf("%s from round %d: %s → %s", v.Kind, v.ConvergedRound, numR(v.First), numR(v.Final))
	case TrendConverging:
		return fmt.Sprintf("%s (×%s a round, within %s of its limit): %s → %s", v.Kind, num(v.Rate), numR(v.Remaining), numR(v.First), numR(v.Final))
	}
	cell := fmt.Sprintf("%s: %s → %s", v.Kind, numR(v.First), numR(v.Final))
	if v.BestRound != 1 && v.BestRound != v.Last {
		cell += fmt.Sprintf(" (best %s, round %d)", numR(v.Best), v.BestRound)
	}
	return cell
}

// writeRounds writes the section "Over rounds" from the regimes' rounds (nothing when none ran); for
// the logistic regimes (logistic) a shorter subsection of the logistic section.
func writeRounds(b *strings.Builder, regimes []Summary, logistic bool) {
	var with []Summary
	for _, s := range regimes {
		if len(s.Rounds) > 0 {
			with = append(with, s)
		}
	}
	if len(with) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	T := with[0].Rounds[0].Rounds
	sub := "###"
	if logistic {
		sub = "####"
		p("### Over rounds (logistic)\n\n")
		p("The rounds of \"Over rounds\" above on the logistic regimes: in round t each client sends the mean-field version of its Laplace approximation under the round's prior (Bishop (2006), Sec. 4.4; the fixed prior or the previous global), the server applies the rule, and every round's global is measured against the same HMC reference. ")
		p("Round 1 is the table above, bit for bit (tested). The trend words and cells are as in \"Over rounds\".\n\n")
	} else {
		p("## Over rounds\n\n")
	}
	if !logistic {
		writeRoundsIntro(b, T)
	}
	for _, pol := range PriorPolicies() {
		p("%s %s\n\n", sub, strings.ToUpper(policyName(pol)[:1])+policyName(pol)[1:])
		writeRoundsPolicy(b, with, pol)
		if pol == UpdatedPrior && !logistic {
			writeRoundsWhy(b)
		}
	}
	for _, pol := range PriorPolicies() {
		writeRoundsFrontier(b, with, pol, sub)
	}
	writeRoundsTable(b, with[0], UpdatedPrior, sub)
}

// writeRoundsIntro writes how the rounds run and how the page reads them.
func writeRoundsIntro(b *strings.Builder, T int) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("Every parameter-space rule (size weights) also runs T = %d federated rounds, as the papers train (Ozer et al. (2022), Alg. 1): ", T)
	p("in round t each client computes its exact posterior given its data and the round's prior, sends its mean-field version (the exact means and the variances 1/Λ_k,ii, a diagonal Gaussian as in round one), ")
	p("and the server applies the rule (DWC with the previous global as its prior, Fischer et al. (2024), Eq. 17); the result is the next round's global. Each rule runs its own trajectory. ")
	p("The clients' prior is either\n\n")
	p("- **fixed**: the problem's prior N(0, σ0² I) every round, and the global is only the clients' starting point (Ozer et al. (2022), Alg. 1; the engine's default `training.prior: fixed`). A client that reaches its exact posterior forgets its starting point, so its message is the same every round and only a rule that reads the previous global (DWC) can move after round 1; or\n")
	p("- **updated**: the previous global N(m, diag(v)) is the prior (Fischer et al. (2024), Sec. 3.7; `training.prior: previous-global`), and client k's posterior is Gaussian in closed form with precision diag(1/v) + X_kᵀX_k/σ² and precision-times-mean m/v + X_kᵀy_k/σ² (Bishop (2006), Eqs. 3.50-3.51). FedAvg's point mass cannot be a prior: its clients keep the problem's.\n\n")
	p("Every round is measured against the same exact global posterior (the prior times every likelihood, once), with the same floors as above. Round 1 is the one-round table above, bit for bit (tested). ")
	p("A trend is read from the seed-averaged numbers over the last %d rounds: *fixed* (the global did not move in the last round in any seed; from the round given), ", TrendWindow)
	p("*at mean-field VI* (it still moves, and its KL(q ‖ p) has stayed within %g nat of the global mean-field VI's, the best diagonal Gaussian in KL(q ‖ p), over the last %d rounds; from the round given; the cell's excess is then its other one, KL(p ‖ q) over the marginals' floor), ", ConvergedNats, TrendWindow)
	p("*converging* (each of the last %d rounds moved it by at most %g times the round before, in posterior sds and log-variance: a geometric contraction; the cell gives the largest ratio and the bound change·r/(1 − r) on how far it still is from its limit), ", TrendWindow, ConvergingRate)
	p("*collapses* (the variance ratio fell in each of the last %d rounds and is below %g times mean-field VI's at round %d: more confident than the best diagonal Gaussian in KL(q ‖ p), whose own ratio is below 1 when the features are correlated), *shrinking* (fell in each but is still at least %g times mean-field VI's; it may go on falling: the rate is in the rule's line), *growing* (rose in each), *moving* (none of these), *stops* (some seed's rule gave no global). ",
		TrendWindow, CollapseFactor, T, CollapseFactor)
	p("Each cell gives the trend and the excess over the floors in nats at round 1 → round %d, with the best round when it is neither.\n\n", T)
}

// writeRoundsPolicy writes one policy's table and findings.
func writeRoundsPolicy(b *strings.Builder, with []Summary, pol PriorPolicy) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("| rule |")
	for _, s := range with {
		p(" %s |", s.Scenario.Name)
	}
	p("\n| --- |%s\n", strings.Repeat(" --- |", len(with)))
	first := roundsOf(with[0], pol)
	if first == nil {
		return
	}
	for i, row := range first.Rows {
		p("| %s |", row.Label)
		for _, s := range with {
			rs := roundsOf(s, pol)
			if rs == nil || i >= len(rs.Rows) || rs.Rows[i].Label != row.Label {
				p(" |")
				continue
			}
			p(" %s |", verdictCell(*rs, rs.Rows[i]))
		}
		p("\n")
	}
	p("\n")
	writeRoundsFindings(b, with, pol)
	p("\n")
}

// writeRoundsWhy writes the derivation behind the updated prior's trends (linear problem).
func writeRoundsWhy(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("Why, weight by weight (a derivation, exact here because the prior is diagonal): with the previous global N(m, diag(v)) as its prior, client k's precision matrix is diag(1/v) + X_kᵀX_k/σ², so the variance it sends is 1/(1/v_i + λ_k,i) with λ_k,i = (X_kᵀX_k)_ii/σ² (Bishop (2006), Eq. 3.51; MeanFieldVI). ")
	p("Conflation's global precision is then K/v_i + Σ_k λ_k,i: the previous global counted K times, so the precision grows about K-fold a round (Ozer et al. (2022), Eq. 8; Fischer et al. (2024), Eq. 15). ")
	p("DWC's is (K/v_i + Σ_k λ_k,i) − (K − 1)/v_i = 1/v_i + Σ_k λ_k,i (Fischer et al. (2024), Eq. 17): the previous global is divided out, but every likelihood is counted once more each round, so after t rounds the precision is 1/σ0² + t Σ_k λ_k,i and the variance falls as 1/t. ")
	p("EAA's variance Σ_k w_k/(1/v_i + λ_k,i) adds about one weighted-average client's λ to the precision a round (Ozer et al. (2022), Eq. 4), so its precision reaches the global mean-field VI's, 1/σ0² + Σ_k λ_k,i, after about K rounds and keeps growing; the other averaging rules (AALV, WB, LP, PPA, RKLB) behave alike. ")
	p("No rule of `aggregate` divides each client's own previous contribution out (the cavity of expectation propagation, Vehtari et al. (2020); partitioned variational inference, Ashman et al. (2022)), which is what would make the updated prior converge to the global posterior. The PVI and FedEP rows do: the global is the prior times one site per client (`aggregate.Natural`), each client trains against its cavity, the global without its own site, and sends its new site (parallel schedule, each damped at half its own stability bound; \"Site methods to their fixed points\" below). PVI's fixed point on this model is the global mean-field VI, so its KL(q ‖ p) falls to that floor and its variance ratio to mean-field VI's; FedEP's has the exact mean and variances of its own. ")
	p("Fischer et al. (2024), Sec. 3.7, Table 5, report that updating the prior each round lowers accuracy and raises NLL; the shrinking variances above are a mechanism consistent with that.\n\n")
}

// trendStats gathers one rule's verdicts over the regimes under one policy.
type trendStats struct {
	label                  string
	kinds                  map[string][]string // kind -> regimes
	factors, exps, ratios  []float64
	bestRounds             []int
	bests, finals, firsts  []float64
	fixedFrom              []int
	note, stopped          string
	heldFrom2, regimeCount int
}

func minMax(x []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return lo, hi
}

func rangeText(x []float64, format func(float64) string) string {
	lo, hi := minMax(x)
	if format(lo) == format(hi) {
		return format(lo)
	}
	return format(lo) + " to " + format(hi)
}

func intRange(x []int) string {
	lo, hi := math.MaxInt, math.MinInt
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// writeRoundsFindings writes the computed sentences under one policy's table.
func writeRoundsFindings(b *strings.Builder, regimes []Summary, pol PriorPolicy) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	var order []string
	stats := map[string]*trendStats{}
	for _, s := range regimes {
		rs := roundsOf(s, pol)
		if rs == nil {
			continue
		}
		for _, row := range rs.Rows {
			st, ok := stats[row.Label]
			if !ok {
				st = &trendStats{label: row.Label, kinds: map[string][]string{}}
				stats[row.Label] = st
				order = append(order, row.Label)
			}
			v := rs.Verdict(row)
			st.regimeCount++
			st.kinds[v.Kind] = append(st.kinds[v.Kind], s.Scenario.Name)
			if row.Note != "" {
				st.note = row.Note
			}
			if row.Stopped > 0 && st.stopped == "" {
				st.stopped = row.StoppedReason
			}
			if v.Kind == TrendPointMass || v.Kind == TrendStops {
				continue
			}
			if v.Kind == TrendFixed {
				st.fixedFrom = append(st.fixedFrom, v.FixedFrom)
			}
			st.firsts = append(st.firsts, v.First)
			st.finals = append(st.finals, v.Final)
			st.bests = append(st.bests, v.Best)
			st.bestRounds = append(st.bestRounds, v.BestRound)
			st.ratios = append(st.ratios, v.VarRatio)
			if v.Factor > 0 {
				st.factors = append(st.factors, v.Factor)
				st.exps = append(st.exps, v.Exponent)
			}
			allHeld := len(row.Held) > 1
			for _, h := range row.Held[1:] {
				allHeld = allHeld && h == s.Runs[0].Config.Dims
			}
			if allHeld {
				st.heldFrom2++
			}
		}
	}
	T := 0
	if rs := roundsOf(regimes[0], pol); rs != nil {
		T = rs.Rounds
	}
	var truth, elsewhere, atVI, collapse, shrinking, falling []string
	for _, label := range order {
		st := stats[label]
		kinds := make([]string, 0, len(st.kinds))
		for k := range st.kinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%s in %d", k, len(st.kinds[k])))
		}
		line := fmt.Sprintf("- **%s**: %s of %d regimes", label, strings.Join(parts, ", "), st.regimeCount)
		if len(st.kinds) == 1 && len(st.kinds[TrendPointMass]) == st.regimeCount {
			line += " (variance 0, KL infinite)"
			if st.note != "" {
				line += "; " + st.note
			}
			p("%s.\n", line)
			continue
		}
		if st.stopped != "" {
			line += "; first stop: " + st.stopped
		}
		allFixed := len(st.kinds[TrendFixed]) == st.regimeCount
		switch {
		case allFixed && len(st.finals) > 0:
			line += fmt.Sprintf(", at its round-%s global: excess %s, variance ratio ×%s", intRange(st.fixedFrom), rangeText(st.finals, numR), rangeText(st.ratios, num))
		case len(st.finals) > 0:
			line += fmt.Sprintf("; excess %s at round 1, %s at round %d; smallest %s, at round %s; variance ratio at round %d ×%s",
				rangeText(st.firsts, numR), rangeText(st.finals, numR), T, rangeText(st.bests, numR), intRange(st.bestRounds), T, rangeText(st.ratios, num))
		}
		if len(st.factors) > 0 && !allFixed {
			line += fmt.Sprintf(", changing ×%s a round over the last %d rounds", rangeText(st.factors, num), TrendWindow)
			if lo, _ := minMax(st.factors); lo >= 0.5 {
				line += fmt.Sprintf(" (as t^%s)", rangeText(st.exps, func(v float64) string { return fmt.Sprintf("%.2g", v) }))
			}
		}
		if label == string(aggregate.DWC) && st.heldFrom2 > 0 {
			line += fmt.Sprintf("; in %d of %d regimes every weight gets its previous global back in every round from round 2: its combined precision Σ_k 1/v_k − (K − 1)/v_prev is not above %g of Σ_k 1/v_k, and `aggregate.DWCKeepPrevious` keeps the previous global",
				st.heldFrom2, st.regimeCount, aggregate.DWCRelativeFloor)
		}
		p("%s.\n", line)
		if n := len(st.kinds[TrendFixed]); n == st.regimeCount {
			_, hi := minMax(st.finals)
			if hi <= RecoverNats {
				truth = append(truth, label)
			} else {
				elsewhere = append(elsewhere, label)
			}
		}
		if len(st.kinds[TrendAtMeanFieldVI]) == st.regimeCount {
			atVI = append(atVI, label)
		}
		nc, ns := len(st.kinds[TrendCollapses]), len(st.kinds[TrendShrinking])
		switch {
		case nc == st.regimeCount:
			collapse = append(collapse, label)
		case ns == st.regimeCount:
			shrinking = append(shrinking, label)
		case nc > 0 && nc+ns == st.regimeCount:
			falling = append(falling, label)
		}
	}
	p("- In every regime: at a fixed point within %g nat of the floors (converges to the truth): %s; at a fixed point farther away: %s; ", RecoverNats, listOr(truth), listOr(elsewhere))
	if sites := siteLabels(order); len(sites) > 0 {
		p("at mean-field VI: %s; ", listOr(atVI))
	}
	p("collapsing: %s; shrinking (the variance still falling at round %d): %s; collapsing in some and shrinking in the others: %s.\n",
		listOr(collapse), T, listOr(shrinking), listOr(falling))
	// The variance against round 1's, over every rule and regime with a variance.
	below, pairs := 0, 0
	var invK []float64
	for _, s := range regimes {
		invK = append(invK, 1/float64(s.Clients))
		rs := roundsOf(s, pol)
		if rs == nil {
			continue
		}
		for _, row := range rs.Rows {
			if isSiteMethod(row.Label) {
				continue
			}
			if n := len(row.VarRatio); n > 0 && row.VarRatio[0] > 0 {
				pairs++
				if row.VarRatio[n-1] < row.VarRatio[0] {
					below++
				}
			}
		}
	}
	p("- The variance ratio at round %d is below round 1's in %d of %d rule-regime pairs (the rules only; the site methods' variances tend to their fixed points'); 1/K over the regimes is %s.\n", T, below, pairs, rangeText(invK, num))
}

// isSiteMethod reports whether label is a site method's trajectory (PVI, FedEP) rather than a rule's.
func isSiteMethod(label string) bool {
	for _, m := range siteMethods {
		if m.label == label {
			return true
		}
	}
	return false
}

// siteLabels returns the site methods among labels.
func siteLabels(labels []string) []string {
	var out []string
	for _, l := range labels {
		if isSiteMethod(l) {
			out = append(out, l)
		}
	}
	return out
}

// writeRoundsTable writes KL(p || q) by round for one regime and policy, mean over the seeds.
func writeRoundsTable(b *strings.Builder, s Summary, pol PriorPolicy, level string) {
	rs := roundsOf(s, pol)
	if rs == nil {
		return
	}
	var rounds []int
	for _, t := range []int{1, 2, 3, 5, 10, 15, 20, 50, 100} {
		if t <= rs.Rounds {
			rounds = append(rounds, t)
		}
	}
	if rounds[len(rounds)-1] != rs.Rounds {
		rounds = append(rounds, rs.Rounds)
	}
	fmt.Fprintf(b, "%s KL(p ‖ q) by round (%s, %s)\n\n", level, s.Scenario.Name, policyName(pol))
	fmt.Fprintf(b, "Mean over the seeds; the floor (global marginals) is %s, and each cell gives the variance ratio in brackets.\n\n| rule |", num(rs.FloorKLFromTruth))
	for _, t := range rounds {
		fmt.Fprintf(b, " round %d |", t)
	}
	fmt.Fprintf(b, "\n| --- |%s\n", strings.Repeat(" --- |", len(rounds)))
	for _, row := range rs.Rows {
		fmt.Fprintf(b, "| %s |", row.Label)
		for _, t := range rounds {
			if t > len(row.KLFromTruth) {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s (×%s) |", numR(float64(row.KLFromTruth[t-1])), num(row.VarRatio[t-1]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}
