package reproduce

import (
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// ozerFindings checks the findings of Ozer et al. (2022), Sec. 4: the accuracy findings of
// ozerAccuracyFindings, with the spread orderings of Table 4 after the first.
func ozerFindings(get func(string) runSet) []Finding {
	acc := ozerAccuracyFindings(get)
	out := acc[:1:1]
	// 2. Table 4: spread order CF < AALV < GAA < EAA, PPA.
	for _, clients := range []string{"c100", "c10"} {
		f := Finding{Claim: fmt.Sprintf("The learned spread orders CF < AALV < GAA < EAA, PPA (%s clients, non-IID, FVBWA)", strings.TrimPrefix(clients, "c")),
			Source: "Table 4"}
		rs := get(clients + "-dirichlet")
		vals := map[string]float64{}
		for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
			if st := rs.where("variant", "FVBWA-"+r).summary(results.Spread); st.ok() {
				vals[r] = st.Mean
			}
		}
		if len(vals) < 5 {
			f.Verdict, f.Evidence = NotRun, "no complete FVBWA runs of every rule"
			out = append(out, f)
			continue
		}
		checks := [][2]string{{"CF", "AALV"}, {"AALV", "GAA"}, {"GAA", "EAA"}, {"GAA", "PPA"}}
		passed := 0
		var failed []string
		for _, c := range checks {
			if vals[c[0]] < vals[c[1]] {
				passed++
			} else {
				failed = append(failed, c[0]+" ≥ "+c[1])
			}
		}
		f.Verdict = verdictOf(passed, len(checks))
		var ord []string
		for _, k := range orderedBy(vals) {
			ord = append(ord, fmt.Sprintf("%s %.3g", k, vals[k]))
		}
		f.Evidence = fmt.Sprintf("%d of 4 orderings hold; ours, increasing: %s", passed, strings.Join(ord, " < "))
		if len(failed) > 0 {
			f.Evidence += "; violated: " + strings.Join(failed, ", ")
			f.Why = "with equal client variances GAA and CF both give σ²/K and AALV gives σ² (Eqs. 5, 6, 8), so the paper's " +
				"GAA > AALV cannot come from Eqs. 5-6 on learned variances. It comes from the authors' code (BFL-P): log σ² " +
				"starts at −9 below a clamp at −8 and stays frozen, AALV keeps the raw −9 (decayed by the weight decay), and " +
				"GAA's clamped partial sums lift the variance to about 1.09 e⁻⁸; the frozen-variance arithmetic gives Table 4's " +
				"AALV and GAA columns within 1-2 % (see the Table 4 prediction). The `-bflp` presets reproduce that behaviour."
		}
		out = append(out, f)
	}
	return append(out, acc[1:]...)
}

// ozerAccuracyFindings checks the findings of Ozer et al. (2022), Sec. 4, that compare accuracy (and,
// with 10 clients, ECE and NLL) between rows: with 100 non-IID clients EAA and PPA fall behind, with 10
// clients the variational rules beat the deterministic ones, and with 100 IID clients they surpass them.
// get gives the runs of a setting ("c100-dirichlet") in one mode, so the same checks judge both.
func ozerAccuracyFindings(get func(string) runSet) []Finding {
	var out []Finding
	// 1. 100 clients, non-IID: EAA and PPA fall far behind GAA, AALV and CF.
	{
		f := Finding{Claim: "With 100 clients (non-IID), EAA and PPA fall far behind GAA, AALV and CF in accuracy",
			Source: "Sec. 4 and Table 3 (FMNIST non-IID: EAA 79.6-82.2%, PPA 72.9-76.4% against 87.2-87.7%)"}
		rs := get("c100-dirichlet")
		passed, all := 0, 0
		var ev []string
		for _, w := range []string{"FVBA", "FVBWA"} {
			complete := true
			for _, r := range []string{"EAA", "PPA", "GAA", "AALV", "CF"} {
				complete = complete && rs.where("variant", w+"-"+r).summary(results.Accuracy).ok()
			}
			if !complete {
				continue // judged only on weightings with every rule run
			}
			for _, bad := range []string{"EAA", "PPA"} {
				for _, good := range []string{"GAA", "AALV", "CF"} {
					a, g := rs.where("variant", w+"-"+bad).summary(results.Accuracy), rs.where("variant", w+"-"+good).summary(results.Accuracy)
					if !a.ok() || !g.ok() {
						continue
					}
					all++
					if below(a, g) {
						passed++
					}
				}
				ev = append(ev, fmt.Sprintf("%s-%s %s%%", w, bad, rs.where("variant", w+"-"+bad).summary(results.Accuracy).format(100, 2)))
			}
			for _, good := range []string{"GAA", "AALV", "CF"} {
				ev = append(ev, fmt.Sprintf("%s-%s %s%%", w, good, rs.where("variant", w+"-"+good).summary(results.Accuracy).format(100, 2)))
			}
		}
		f.Verdict = verdictOf(passed, all)
		f.Evidence = fmt.Sprintf("%d of %d (EAA or PPA, GAA/AALV/CF) pairs have EAA/PPA lower by more than 2 combined SE: %s", passed, all, strings.Join(ev, ", "))
		f.explain("the paper trains T = 500 rounds of E = 10 epochs; EAA's and PPA's variance grows by the spread of the client means every round, " +
			"and a budget of fewer rounds and epochs (see the budget lines above) leaves that spread (and so the damage) smaller. Compare the spread table: " +
			"where EAA's and PPA's spread is not far above GAA's, the mechanism the paper names has not had time to act. " +
			"Single BFL-P-mode runs at the paper's 500 rounds (docs/reproduction/budgets.md, Paper-budget spot checks) " +
			"show when it does: their accuracy holds up to about round 300 and falls after it, as their spread grows.")
		out = append(out, f)
	}
	// 3. 10 clients: GAA, AALV and CF outperform FED and FEDAVG on every metric, each comparison checked
	// as a gap beyond 2 combined standard errors (higher means alone: in part).
	{
		f := Finding{Claim: "With 10 clients, GAA, AALV and CF beat FED and FEDAVG on accuracy, ECE and NLL",
			Source: "Sec. 4, Table 1"}
		var tally beats
		var losses []string
		for _, set := range []string{"c10-iid", "c10-dirichlet"} {
			rs := get(set)
			for _, w := range []string{"FVBA", "FVBWA"} {
				for _, r := range []string{"GAA", "AALV", "CF"} {
					for _, d := range []string{"FED", "FEDAVG"} {
						for _, m := range []string{results.Accuracy, results.ECE, results.NLL} {
							bv, dv := rs.where("variant", w+"-"+r).summary(m), rs.where("variant", d).summary(m)
							if !bv.ok() || !dv.ok() {
								continue
							}
							lo, hi := bv, dv // ECE and NLL: lower is better
							if m == results.Accuracy {
								lo, hi = dv, bv
							}
							if !tally.add(lo, hi) {
								losses = append(losses, fmt.Sprintf("%s %s-%s vs %s on %s", set, w, r, d, m))
							}
						}
					}
				}
			}
		}
		f.Verdict = tally.verdict()
		f.Evidence = fmt.Sprintf("%d of %d comparisons favour the variational model beyond 2 combined SE, %d of %d by means", tally.significant, tally.all, tally.higher, tally.all)
		if len(losses) > 0 {
			f.Evidence += "; not even by means: " + strings.Join(firstN(losses, 6), "; ")
		}
		f.explain("after rounds of one local epoch (the paper trains 50 rounds of 10) the variational nets are still far from converged and their posteriors are close to the initial (very narrow) one, " +
			"so they behave much like the deterministic net; the paper's calibration gains come from 50 rounds of 10 epochs.")
		out = append(out, f)
	}
	// 4. 100 clients, IID: the best rules surpass the deterministic baselines. The paper's gap (about one
	// point, with standard errors of 0.1-0.2) is significant, so ours is checked as a gap beyond 2
	// combined standard errors; higher means alone make it hold in part.
	{
		f := Finding{Claim: "With 100 clients (IID), GAA, AALV and CF surpass FED and FEDAVG in accuracy",
			Source: "Sec. 4, Table 3 (89.3-89.6% against 88.4-88.6%)"}
		rs := get("c100-iid")
		acc := func(variant string) stat { return rs.where("variant", variant).summary(results.Accuracy) }
		var tally beats
		for _, w := range []string{"FVBA", "FVBWA"} {
			for _, r := range []string{"GAA", "AALV", "CF"} {
				for _, d := range []string{"FED", "FEDAVG"} {
					if bv, dv := acc(w+"-"+r), acc(d); bv.ok() && dv.ok() {
						tally.add(dv, bv)
					}
				}
			}
		}
		f.Verdict = tally.verdict()
		var ev []string
		for _, v := range []string{"FED", "FEDAVG", "FVBWA-GAA", "FVBWA-AALV", "FVBWA-CF"} {
			ev = append(ev, fmt.Sprintf("%s %s%%", v, acc(v).format(100, 2)))
		}
		f.Evidence = fmt.Sprintf("%d of %d comparisons beyond 2 combined SE, %d of %d by means: %s",
			tally.significant, tally.all, tally.higher, tally.all, strings.Join(ev, ", "))
		f.explain("below the paper's budget the variational nets may have seen too few steps to gain from their noise; the paper's gap is about one point after 500 rounds. " +
			"With IID clients of equal size, FED's equal weights and FEDAVG's size weights coincide, so the two rows give the same numbers.")
		out = append(out, f)
	}
	return out
}
