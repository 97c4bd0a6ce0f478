package reproduce

import (
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// keptVarianceRows are the FVBWA rules that keep the clients' variance (EAA, AALV, PPA), and
// dividedVarianceRows those that divide it by the active clients (GAA, CF): keptVarianceGrowth's
// two sides.
var keptVarianceRows, dividedVarianceRows = []string{"FVBWA-EAA", "FVBWA-AALV", "FVBWA-PPA"}, []string{"FVBWA-GAA", "FVBWA-CF"}

// ozerFindings checks the findings of Ozer et al. (2022), Sec. 4, in the paper-text mode: the
// accuracy findings of ozerAccuracyFindings, with the spread orderings of Table 4 after the first.
// Each finding's Presets holds the setting keys it reads ("c10-iid"), which ozerSection names.
// getB gives the same setting's runs in BFL-P mode, whose measured order a spread finding that is not
// testable in the text mode states.
func ozerFindings(get, getB func(string) runSet) []Finding {
	acc := ozerAccuracyFindings(get, false)
	out := acc[:1:1]
	// 2. Table 4: spread order CF < AALV < GAA < EAA, PPA, each step a paired comparison.
	for _, clients := range []string{"c100", "c10"} {
		f := Finding{Claim: fmt.Sprintf("The learned spread orders CF < AALV < GAA < EAA, PPA (%s clients, non-IID, FVBWA)", strings.TrimPrefix(clients, "c")),
			Source: "Table 4", Presets: []string{clients + "-dirichlet"}}
		rs := get(clients + "-dirichlet")
		sp := func(r string) runSet { return rs.where("variant", "FVBWA-"+r) }
		complete := true
		for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
			complete = complete && sp(r).summary(results.Spread).ok()
		}
		if !complete {
			f.Verdict, f.Evidence = NotRun, "no complete FVBWA runs of every rule"
			out = append(out, f)
			continue
		}
		var c claims
		for _, pair := range [][2]string{{"CF", "AALV"}, {"AALV", "GAA"}, {"GAA", "EAA"}, {"GAA", "PPA"}} {
			c.below(pair[0]+" < "+pair[1], sp(pair[0]).sample(results.Spread), sp(pair[1]).sample(results.Spread), colSpread)
			if o, ok := formulaOutcome(pair[0], pair[1]); ok && o == agrees {
				c.tag(spreadArithmetic) // set aside when it agrees; the formulas' reversal (AALV < GAA) counts
			}
		}
		pre := clientVariancesDiffer(rs)
		f.decide(c.checks(), "means, increasing: "+spreadOrder(rs)+". "+equalVarianceOrder, pre, equalVariances([]runSet{rs}, "FVBWA-EAA", "FVBWA-AALV"))
		f.explain("the clients' variances differ here (" + pre.why + "), so Eqs. 4-8 on equal client variances do not decide the order: " +
			"the checks that do not agree are the rules' order on the learned variances")
		if !pre.met && f.Verdict != Holds && f.Verdict != NotRun {
			formulas := "text mode: on near-equal client variances Eqs. 4-8 give " + equalVarianceOrderShort + ", so the paper's order " +
				"(AALV < GAA) cannot arise from Eqs. 5-6 on the clients' learned variances"
			f.explain(formulas)
			f.Caveat = formulas
			if opt, ok := varianceOptimizer(rs); ok && f.Verdict == Fails {
				f.Caveat = "set-up dependent (variances trained with " + opt + "), ablation pending: the clients' near-equal variances, " +
					"which let Eqs. 4-8 decide the order, may be the optimiser moving the variance alike on every client, where the paper " +
					"trains with a variant of SGD (the set-up ablation, costed and not run: docs/reproduction/budgets.md); " + f.Caveat
			}
			if b := getB(clients + "-dirichlet"); spreadOrder(b) != "" {
				f.Caveat += "; by the means, BFL-P mode (the authors' code, `-bflp` presets) gives the paper's order: " + spreadOrder(b)
				f.Why += ". By the means, the authors' code gives the paper's order: in BFL-P mode (`-bflp` presets, same setting) the mean " +
					"spreads are " + spreadOrder(b) + ", through the clamp's frozen-variance arithmetic (the BFL-P spread findings below: log σ² " +
					"starts at −9 below a clamp at −8 and stays frozen, AALV keeps the raw −9 decayed by the weight decay, and GAA's clamped " +
					"partial sums lift the variance to about 1.09 e⁻⁸)"
			}
		}
		out = append(out, f)
	}
	return append(out, acc[1:]...)
}

// weightingBothWays says why the accuracy finding sets aside its EAA < AALV checks whichever way they
// fall while the spread order sets aside only the checks the formulas make agree.
const weightingBothWays = "Its EAA < AALV checks are set aside whichever way they fall, unlike the spread order's checks (set aside " +
	"only where they agree as the formulas give them): on equal client variances Eqs. 4-5 give EAA and AALV the same variance and the " +
	"same mean, so the same model, and the formulas give the comparison no direction; an outcome either way rests only on the residual " +
	"differences the criterion calls near-equal"

// equalVarianceOrder is what Eqs. 4-8 give the FVBWA rules' spreads on equal client variances σ²
// (equalVarianceRank), and equalVarianceOrderShort its order alone.
const (
	equalVarianceOrder = "On equal client variances σ² Eqs. 4-8 give GAA = σ² Σβ² and CF = σ²/K (both below σ²), AALV = EAA = σ², and PPA σ² " +
		"plus the spread of the client means: " + equalVarianceOrderShort + ", whatever the clients learned"
	equalVarianceOrderShort = "CF, GAA < AALV = EAA ≤ PPA"
)

// equalVarianceRank orders the FVBWA rules' spreads as Eqs. 4-8 give them on equal client variances
// σ²: GAA (σ² Σβ²) and CF (σ²/K) below AALV and EAA (σ²), below PPA (σ² plus the spread of the client
// means). An order check between two ranks follows from that arithmetic alone.
var equalVarianceRank = map[string]int{"CF": 0, "GAA": 0, "AALV": 1, "EAA": 1, "PPA": 2}

// formulaOutcome is the outcome Eqs. 4-8 on equal client variances give the claim "a's spread below
// b's" (equalVarianceRank): it agrees when a ranks below b, contradicts when a ranks above; ok is
// false for rules of one rank, whose order the formulas leave open.
func formulaOutcome(a, b string) (outcome, bool) {
	switch ra, rb := equalVarianceRank[a], equalVarianceRank[b]; {
	case ra < rb:
		return agrees, true
	case ra > rb:
		return contradicts, true
	}
	return undecided, false
}

// spreadOrder is the five FVBWA rules' mean spreads in a run set, increasing: "GAA 0.00304 < CF
// 0.00339 < ..."; "" unless every rule has runs.
func spreadOrder(rs runSet) string {
	vals := map[string]float64{}
	for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
		st := rs.where("variant", "FVBWA-"+r).summary(results.Spread)
		if !st.ok() {
			return ""
		}
		vals[r] = st.Mean
	}
	var ord []string
	for _, k := range orderedBy(vals) {
		ord = append(ord, fmt.Sprintf("%s %.3g", k, vals[k]))
	}
	return strings.Join(ord, " < ")
}

// clientVariancesDiffer is the precondition of the spread-order checks that Eqs. 4-8 on equal client
// variances make agree (formulaOutcome): not met when the clients' variances are near-equal
// (clientVariancesAlike on EAA and AALV, the criterion every such precondition reads); those checks
// then come out as the formulas give them whatever the clients learned, so an agreement is set aside,
// while a check that goes against the claim (the formulas' reversal of it, or a measured one) counts.
func clientVariancesDiffer(rs runSet) precondition {
	alike, why := clientVariancesAlike(rs, "FVBWA-EAA", "FVBWA-AALV")
	if !alike {
		return precondition{needs: spreadArithmetic, met: true, why: why}
	}
	return precondition{needs: spreadArithmetic, why: why + "; on near-equal client variances Eqs. 4-8 give the order CF, GAA < AALV = EAA ≤ PPA " +
		"whatever the clients learned, so a check that agrees with the claim where those formulas give it is no evidence about the rules on learned variances"}
}

// ozerBFLPLate is why the 100-client non-IID accuracy finding is not testable at the medium budget in
// BFL-P mode: the damage starts later.
const ozerBFLPLate = "the effect starts beyond the budget: EAA's and PPA's accuracy falls as their learned spread grows round by round, " +
	"and single BFL-P-mode runs at the paper's 500 rounds (seed 0, n = 1 each, not in the committed records: binary at 5183b20, " +
	"2026-11-27; docs/reproduction/budgets.md, Paper-budget spot checks) hold their " +
	"accuracy up to about round 300 and lose it after, while this budget runs a tenth of the paper's rounds; the collapse claim's " +
	"preset (T = 400, in the medium report) tests it"

// ozerAccuracyFindings checks the findings of Ozer et al. (2022), Sec. 4, that compare accuracy (and,
// with 10 clients, ECE and NLL) between rows: with 100 non-IID clients EAA and PPA fall behind, with 10
// clients the variational rules beat the deterministic ones, and with 100 IID clients they surpass them.
// get gives the runs of a setting ("c100-dirichlet") in one mode, so the same checks judge both;
// bflp says the mode is BFL-P's (the authors' code), whose variances are held at its clamp by design.
func ozerAccuracyFindings(get func(string) runSet, bflp bool) []Finding {
	var out []Finding
	// frozen marks a finding not testable when a setting's variance rules coincide (test is
	// varianceRulesCoincide, for findings that compare the rules) or its variances did not learn
	// (posteriorsDidNotLearn, for findings that compare variational nets with deterministic ones). BFL-P
	// holds its variances at the clamp on purpose, and its EAA escapes it.
	sets := func(names ...string) []runSet {
		var out []runSet
		for _, n := range names {
			out = append(out, get(n))
		}
		return out
	}
	// 1. 100 clients, non-IID: EAA and PPA fall far behind GAA, AALV and CF.
	{
		f := Finding{Claim: "With 100 clients (non-IID), EAA and PPA fall far behind GAA, AALV and CF in accuracy",
			Source:  "Sec. 4 and Table 3 (FMNIST non-IID: EAA 79.6-82.2%, PPA 72.9-76.4% against 87.2-87.7%)",
			Presets: []string{"c100-dirichlet"}}
		rs := get("c100-dirichlet")
		acc := func(v string) runSet { return rs.where("variant", v) }
		var c claims
		var ev []string
		for _, w := range []string{"FVBA", "FVBWA"} {
			complete := true
			for _, r := range []string{"EAA", "PPA", "GAA", "AALV", "CF"} {
				complete = complete && acc(w+"-"+r).summary(results.Accuracy).ok()
			}
			if !complete {
				continue // judged only on weightings with every rule run
			}
			for _, bad := range []string{"EAA", "PPA"} {
				for _, good := range []string{"GAA", "AALV", "CF"} {
					c.below(fmt.Sprintf("%s-%s < %s-%s", w, bad, w, good), acc(w+"-"+bad).sample(results.Accuracy), acc(w+"-"+good).sample(results.Accuracy), colAcc)
					if bad == "EAA" && good == "AALV" {
						c.tag(varianceWeighting) // an arithmetic against a geometric mean of the same variances
					}
				}
			}
			for _, r := range []string{"EAA", "PPA", "GAA", "AALV", "CF"} {
				ev = append(ev, fmt.Sprintf("%s-%s %s%%", w, r, acc(w+"-"+r).summary(results.Accuracy).format(100, 2)))
			}
		}
		f.decide(c.checks(), "accuracy "+strings.Join(ev, ", "), equalVariances(sets("c100-dirichlet"), "FVBWA-EAA", "FVBWA-AALV"))
		if f.Aside > 0 {
			f.Evidence += ". " + weightingBothWays
		}
		if bflp && f.Verdict != Holds {
			f.notTestable(ozerBFLPLate)
		}
		why := "the paper ties the damage to the aggregate's degree of spread (Sec. 4, Table 4). Eq. 4's EAA averages the clients' " +
			"variances and has no term for the spread of the client means (that term is PPA's, Eq. 7, the pooled population's variance), " +
			"so under Eq. 4 EAA's spread stays the clients' average; in the authors' code (BFL-P mode) EAA's spread grows instead through " +
			"the clamped partial sums of the log-variances (the BFL-P spread findings below). Compare the spread table: where EAA's and PPA's " +
			"spread is not far above GAA's, the mechanism the paper names has not acted."
		if growth := keptVarianceGrowth(rs, keptVarianceRows, dividedVarianceRows); growth != "" {
			why = "here " + growth + ". So EAA and PPA fall, and AALV with them, through the variance every client learns alike, " +
				"which these three rules keep round after round, not through the spread of the client means (Eq. 4 has no such term); " +
				"the paper's AALV keeps its accuracy (Table 3), as in BFL-P mode, where the clamp holds the variances."
		}
		f.explain(why)
		out = append(out, f)
	}
	// 3. 10 clients: GAA, AALV and CF outperform FED and FEDAVG on every metric: one finding per metric,
	// since the paper's point is calibration and the three metrics can disagree.
	for _, m := range []metricCol{colAcc, colECE, colNLL} {
		f := Finding{Claim: fmt.Sprintf("With 10 clients, GAA, AALV and CF beat FED and FEDAVG %s", ozerMetricPhrase[m.name]),
			Source:   "Sec. 4, Table 1 (the claim spans accuracy, ECE and NLL; judged one metric at a time)",
			Formerly: "With 10 clients, GAA, AALV and CF beat FED and FEDAVG on accuracy, ECE and NLL",
			Presets:  []string{"c10-iid", "c10-dirichlet"}}
		var c claims
		better := 0
		for _, set := range []string{"c10-iid", "c10-dirichlet"} {
			rs := get(set)
			for _, w := range []string{"FVBA", "FVBWA"} {
				for _, r := range []string{"GAA", "AALV", "CF"} {
					for _, d := range []string{"FED", "FEDAVG"} {
						bv, dv := rs.where("variant", w+"-"+r), rs.where("variant", d)
						bs, ds := bv.summary(m.name), dv.summary(m.name)
						if !bs.ok() || !ds.ok() {
							continue
						}
						label := fmt.Sprintf("%s %s-%s vs %s", set, w, r, d)
						if m.name == results.Accuracy {
							c.below(label, dv.sample(m.name), bv.sample(m.name), m)
							if bs.Mean > ds.Mean {
								better++
							}
						} else { // ECE and NLL: lower is better
							c.below(label, bv.sample(m.name), dv.sample(m.name), m)
							if bs.Mean < ds.Mean {
								better++
							}
						}
					}
				}
			}
		}
		c.tagAll(learnedVariances)
		f.decide(c.checks(), fmt.Sprintf("%d comparisons; the variational row has the better mean %s in %d of them", c.n(), m.header, better),
			variancesLearned(sets("c10-iid", "c10-dirichlet"), "FVBWA-EAA", "FVBWA-AALV"))
		if bflp {
			f.explain("in BFL-P mode the variational variances are held at the clamp (log σ² = −8, no gradient below it) by the authors' code, " +
				"so the variational nets behave much like the deterministic one here.")
		} else {
			f.explain("a variational net predicts differently from the deterministic one only as far as its variances grew from their small start; " +
				"the spread table says how far they did here, and the checks that are not decisive list the comparisons within the seeds' noise.")
		}
		out = append(out, f)
	}
	// 4. 100 clients, IID: the best rules surpass the deterministic baselines.
	{
		f := Finding{Claim: "With 100 clients (IID), GAA, AALV and CF surpass FED and FEDAVG in accuracy",
			Source: "Sec. 4, Table 3 (89.3-89.6% against 88.4-88.6%)", Presets: []string{"c100-iid"}}
		rs := get("c100-iid")
		acc := func(variant string) runSet { return rs.where("variant", variant) }
		var c claims
		for _, w := range []string{"FVBA", "FVBWA"} {
			for _, r := range []string{"GAA", "AALV", "CF"} {
				for _, d := range []string{"FED", "FEDAVG"} {
					if acc(w+"-"+r).summary(results.Accuracy).ok() && acc(d).summary(results.Accuracy).ok() {
						c.below(fmt.Sprintf("%s < %s-%s", d, w, r), acc(d).sample(results.Accuracy), acc(w+"-"+r).sample(results.Accuracy), colAcc)
					}
				}
			}
		}
		var ev []string
		for _, v := range []string{"FED", "FEDAVG", "FVBWA-GAA", "FVBWA-AALV", "FVBWA-CF"} {
			ev = append(ev, fmt.Sprintf("%s %s%%", v, acc(v).summary(results.Accuracy).format(100, 2)))
		}
		c.tagAll(learnedVariances)
		f.decide(c.checks(), "accuracy "+strings.Join(ev, ", "), variancesLearned(sets("c100-iid"), "FVBWA-EAA", "FVBWA-AALV"))
		why := "the paper's gap is about one point after 500 rounds. " +
			"With IID clients of equal size, FED's equal weights and FEDAVG's size weights coincide, so the two rows give the same numbers" +
			map[bool]string{true: "; in BFL-P mode the variational variances are held at the clamp (log σ² = −8) by the authors' code, so the nets are close to deterministic.", false: "."}[bflp]
		if growth := keptVarianceGrowth(rs, keptVarianceRows, dividedVarianceRows); growth != "" {
			why += " Here " + growth + "."
		}
		f.explain(why)
		out = append(out, f)
	}
	// 5. 100 clients, IID: the same rules are better calibrated than FED (Table 3's ECE and NLL columns).
	for _, m := range []metricCol{colECE, colNLL} {
		f := Finding{Claim: fmt.Sprintf("With 100 clients (IID), GAA, AALV and CF have a lower %s than FED and FEDAVG", m.header),
			Source: "Sec. 4, Table 3 (FMNIST IID: " + ozerC100IIDCalibration[m.name] + ")", Presets: []string{"c100-iid"}}
		rs := get("c100-iid")
		row := func(variant string) runSet { return rs.where("variant", variant) }
		var c claims
		var ev []string
		for _, w := range []string{"FVBA", "FVBWA"} {
			for _, r := range []string{"GAA", "AALV", "CF"} {
				for _, d := range []string{"FED", "FEDAVG"} {
					if row(w+"-"+r).summary(m.name).ok() && row(d).summary(m.name).ok() {
						c.below(fmt.Sprintf("%s-%s < %s", w, r, d), row(w+"-"+r).sample(m.name), row(d).sample(m.name), m)
					}
				}
			}
		}
		for _, v := range []string{"FED", "FEDAVG", "FVBWA-GAA", "FVBWA-AALV", "FVBWA-CF"} {
			ev = append(ev, fmt.Sprintf("%s %s", v, row(v).summary(m.name).format(m.scale, m.digits)))
		}
		c.tagAll(learnedVariances)
		f.decide(c.checks(), m.header+" "+strings.Join(ev, ", "), variancesLearned(sets("c100-iid"), "FVBWA-EAA", "FVBWA-AALV"))
		out = append(out, f)
	}
	return out
}

// ozerMetricPhrase completes the 10-client claim for each metric.
var ozerMetricPhrase = map[string]string{
	results.Accuracy: "in accuracy",
	results.ECE:      "in calibration (a lower ECE)",
	results.NLL:      "in NLL",
}

// ozerC100IIDCalibration is Table 3's FMNIST IID column for the calibration findings: FED against the
// best variational rules, as printed.
var ozerC100IIDCalibration = map[string]string{
	results.ECE: "ECE 8.30 % for FED and 8.48 % for FEDAVG against 4.81-5.03 % for GAA, AALV and CF",
	results.NLL: "NLL 0.63 for FED and 0.64 for FEDAVG against 0.35 for GAA, AALV and CF",
}
