package reproduce

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/presets"
	"fedbayes.dev/fedbayes/results"
)

// jamoussiRules are the aggregators of Jamoussi et al. (BA-BFL), Table 1.
var jamoussiRules = []string{"AALV", "EAA", "GAA", "RKLB", "WB"}

// jamoussiFMNIST is the Fashion-MNIST column of Jamoussi et al. (BA-BFL), Table 1, by variant label
// (nN-RULE); the paper does not say what its ± is.
var jamoussiFMNIST = map[string]map[string]ref{
	"n0-FedAvg": aen(87.88, 0.79, 9.42, 0.62, 0.76, 0.04),
	"n1-AALV":   aen(88.22, 0.34, 8.59, 0.27, 0.67, 0.02), "n1-EAA": aen(88.07, 0.22, 8.61, 0.06, 0.66, 0.02),
	"n1-GAA": aen(88.15, 0.31, 8.49, 0.25, 0.66, 0.01), "n1-RKLB": aen(88.07, 0.36, 8.61, 0.20, 0.67, 0.01),
	"n1-WB":   aen(88.34, 0.30, 8.39, 0.29, 0.67, 0.02),
	"n2-AALV": aen(87.62, 0.45, 7.93, 0.23, 0.60, 0.01), "n2-EAA": aen(87.53, 0.57, 8.03, 0.36, 0.61, 0.03),
	"n2-GAA": aen(87.82, 0.64, 7.68, 0.44, 0.60, 0.03), "n2-RKLB": aen(87.59, 0.57, 8.01, 0.38, 0.63, 0.03),
	"n2-WB":   aen(87.69, 0.74, 7.96, 0.60, 0.62, 0.03),
	"n3-AALV": aen(88.07, 0.58, 5.55, 0.56, 0.45, 0.03), "n3-EAA": aen(87.81, 0.54, 5.57, 0.26, 0.46, 0.03),
	"n3-GAA": aen(88.02, 0.55, 5.42, 0.28, 0.45, 0.03), "n3-RKLB": aen(87.77, 0.80, 5.75, 0.40, 0.46, 0.03),
	"n3-WB": aen(87.54, 0.54, 5.77, 0.23, 0.46, 0.03),
}

var jamoussiPreset = Preset{Full: "jamoussi-fmnist"}

// jamoussiBFLP is the same setting as the authors' code runs it (presets.BABFLSuffix: model.compat
// "ba-bfl", E = 50, seeds 0-2).
var jamoussiBFLP = Preset{Full: "jamoussi-fmnist" + presets.BABFLSuffix}

func jamoussiPaper() *Paper {
	return &Paper{ID: "002", Title: "Jamoussi, Serra, Stavrou, Kountouris, BA-BFL: Barycentric Aggregation for Bayesian Federated Learning",
		Presets: []Preset{jamoussiPreset, jamoussiBFLP}, section: jamoussiSection}
}

func jamoussiSection(b Budget, runs paperRuns) (*Section, error) {
	s := &Section{Heading: "002 · Jamoussi et al. (BA-BFL): barycentric aggregation and hybrid networks"}
	s.Setting = "LeNet whose last n = 1, 2 or 3 dense layers are Bayesian (n = 0: deterministic FedAvg), 10 clients all " +
		"active with Dirichlet(0.5) label skew, size weights; the rules AALV, EAA, GAA, RKLB (Eq. 8) and WB (Eq. 9). " +
		"Fairness: the global model's accuracy on a share of the test set with each client's class proportions, " +
		"size-weighted over clients, and the worst 10% of clients. The paper states neither rounds, epochs, optimiser, " +
		"Dirichlet concentration nor seeds; our full budget borrows Ozer et al.'s 10-client setting. Metrics as the " +
		"authors' scores.py (ECE over 100 bins, NLL −log(p + 10⁻⁸); their Table 1 prints ECE in percent). The `-babfl` " +
		"preset runs the setting as their public code does (model.compat \"ba-bfl\"): BFL-P's layers (log σ² from −9, " +
		"clamped to [−8, 8] in the forward pass and the KL, deterministic biases), their own aggregation (raw variances, " +
		"GAA as Σw²σ²/Σw², which equals EAA with equal weights), and their scripts' budget (E = 50, seeds 0-2).\n\n" +
		budgetLine(jamoussiPreset, b, runs) + "\n" + budgetLine(jamoussiBFLP, b, runs)
	rs := runSet(runs.complete[jamoussiPreset.Name(b)])
	rows := []string{"n0-FedAvg"}
	for n := 1; n <= 3; n++ {
		for _, r := range jamoussiRules {
			rows = append(rows, fmt.Sprintf("n%d-%s", n, r))
		}
	}
	s.Blocks = append(s.Blocks, "Final round, ours beside Table 1 (FMNIST):\n\n"+
		compareTable(rs, "variant", rows, []metricCol{colAcc, colECE, colNLL}, jamoussiFMNIST),
		"Fairness (the paper gives these only as Fig. 5, without numbers):\n\n"+
			compareTable(rs, "variant", rows, []metricCol{colWAcc, colWorst}, nil))
	if rb := runSet(runs.complete[jamoussiBFLP.Name(b)]); len(rb) > 0 {
		s.Blocks = append(s.Blocks, "BA-BFL mode (the authors' code), final round, ours beside Table 1 (FMNIST):\n\n"+
			compareTable(rb, "variant", rows, []metricCol{colAcc, colECE, colNLL, colWorst}, jamoussiFMNIST))
		if cmp := modeComparison(rs, rb, rows, "BA-BFL"); cmp != "" {
			s.Blocks = append(s.Blocks, "**What BA-BFL's code changes**: the same rows, seeds and budget in both modes.\n\n"+cmp+
				"\n\nThe mode switches BFL-P's layers (variances frozen at the clamp, deterministic biases) and BA-BFL's own aggregation "+
				"(raw variances; GAA as Σw²σ²/Σw²) at once, so each Δ is their sum.")
		}
	}
	// Figures: ECE and NLL against n, one line per rule (n = 0 is FedAvg for every rule).
	for _, m := range []metricCol{colECE, colNLL, colWorst} {
		var series []plots.SeedSeries
		for _, r := range jamoussiRules {
			line := layerSeries(rs, r, m)
			if line != nil {
				series = append(series, *line)
			}
		}
		if len(series) == 0 {
			continue
		}
		c, err := plots.VersusLayers("jamoussi-"+strings.ReplaceAll(m.name, "_", "-")+"-vs-layers", plots.Curves{
			Title: m.header + " against Bayesian layers", YLabel: m.header, Series: series})
		s.addChart(c, err, fmt.Sprintf("%s against the number n of Bayesian layers (n = 0 is FedAvg), one line per rule; mean ± SE over seeds (%s budget). Jamoussi et al., Figs. 3 and 5.", m.header, b))
	}
	s.Findings = jamoussiFindings(rs)
	return s, nil
}

// layerSeries is one rule's final metric against n = 0..3 (n = 0 is FedAvg), one row per seed.
func layerSeries(rs runSet, rule string, m metricCol) *plots.SeedSeries {
	labels := []string{"n0-FedAvg", "n1-" + rule, "n2-" + rule, "n3-" + rule}
	line := plots.SeedSeries{Name: rule}
	var cols [][]float64
	for n, l := range labels {
		var col []float64
		for _, run := range rs.where("variant", l) {
			if v, ok := final(run, m.name); ok {
				col = append(col, v*m.scale)
			}
		}
		if len(col) == 0 {
			continue
		}
		line.X = append(line.X, float64(n))
		cols = append(cols, col)
	}
	if len(cols) < 2 {
		return nil
	}
	line.Runs = seedRows(cols)
	return &line
}

// jamoussiPre is a finding's precondition from test on rows n-EAA and n-AALV, for findings whose
// checks compare layer counts (n → n+1, n = 1 against 3): the first number of layers n = 1..3 where
// it is not met, else the last (met), since such a check reads more than one layer count.
func jamoussiPre(rs runSet, test func([]runSet, string, string) precondition) precondition {
	var worst precondition
	for n := 1; n <= 3; n++ {
		p := test([]runSet{rs}, fmt.Sprintf("n%d-EAA", n), fmt.Sprintf("n%d-AALV", n))
		if !p.met {
			return p
		}
		worst = p
	}
	return worst
}

// jamoussiPreByLayers is test on rows n-EAA and n-AALV for each number of layers n = 1..3, each
// scoped to the checks of its own layer count (jamoussiScope), for findings whose checks read one
// layer count each: an unmet criterion at one n sets aside only that n's checks.
func jamoussiPreByLayers(rs runSet, test func([]runSet, string, string) precondition) []precondition {
	var out []precondition
	for n := 1; n <= 3; n++ {
		p := test([]runSet{rs}, fmt.Sprintf("n%d-EAA", n), fmt.Sprintf("n%d-AALV", n))
		p.scope = jamoussiScope(n)
		out = append(out, p)
	}
	return out
}

// jamoussiScope names the checks of n Bayesian layers (check.scope).
func jamoussiScope(n int) string { return fmt.Sprintf("n = %d", n) }

// jamoussiWeighting says whether two of the five rules differ only through how they weigh the
// clients' variances: AALV, EAA, RKLB and WB all give σ² (and the weighted mean) on equal client
// variances, while GAA gives σ² Σw².
func jamoussiWeighting(a, b string) bool { return a != "GAA" && b != "GAA" }

// jamoussiFindings checks the findings of Jamoussi et al., Sec. 5.
func jamoussiFindings(rs runSet) []Finding {
	var out []Finding
	v := func(variant string) runSet { return rs.where("variant", variant) }
	// 1. More Bayesian layers lower ECE and NLL, whatever the rule: every step n -> n+1 lowers it.
	for _, m := range []metricCol{colECE, colNLL} {
		f := Finding{Claim: fmt.Sprintf("More Bayesian layers lower the %s, whatever the rule", strings.Split(m.header, " ")[0]),
			Source: "Sec. 5 and Fig. 3; Table 1 (FMNIST ECE 9.4 → 8.5 → 7.9 → 5.6 %, NLL 0.76 → 0.66 → 0.61 → 0.45 for n = 0..3)"}
		var c claims
		var ev []string
		fell := 0
		for _, r := range jamoussiRules {
			prevName := "n0-FedAvg"
			vals := []string{v(prevName).summary(m.name).format(m.scale, 3)}
			for n := 1; n <= 3; n++ {
				cur := fmt.Sprintf("n%d-%s", n, r)
				if prev, now := v(prevName).summary(m.name), v(cur).summary(m.name); prev.ok() && now.ok() {
					c.below(fmt.Sprintf("%s < %s", cur, prevName), v(cur).sample(m.name), v(prevName).sample(m.name), m)
					if now.Mean < prev.Mean {
						fell++
					}
				}
				vals = append(vals, v(cur).summary(m.name).format(m.scale, 3))
				prevName = cur
			}
			ev = append(ev, r+": "+strings.Join(vals, " → "))
		}
		c.tagAll(learnedVariances)
		f.decide(c.checks(), fmt.Sprintf("the mean fell in %d of %d steps n → n+1, n = 0..3: %s", fell, c.n(), strings.Join(ev, "; ")), jamoussiPre(rs, variancesLearned))
		f.explain("a Bayesian layer changes the predictive only as far as its variances differ from a point mass; the spread table shows how far they grew here.")
		out = append(out, f)
	}
	// 2. With the same n, the aggregators score alike: every pair of rules equivalent in accuracy, ECE
	// and NLL (jamoussiAlike).
	out = append(out, jamoussiAlike(rs))
	// 3. Fairness: on FMNIST more Bayesian layers tend to lower fairness (worst clients).
	{
		f := Finding{Claim: "On Fashion-MNIST, more Bayesian layers tend to lower fairness (worst-10% client accuracy)", Source: "Sec. 5, Fig. 5"}
		var c claims
		seeds := 0
		var ev []string
		for _, r := range jamoussiRules {
			a, b := v("n1-"+r), v("n3-"+r)
			if sa, sb := a.summary(results.WorstAccuracy), b.summary(results.WorstAccuracy); sa.ok() && sb.ok() {
				seeds = max(seeds, sa.N, sb.N)
				c.below(fmt.Sprintf("%s n=3 < n=1", r), b.sample(results.WorstAccuracy), a.sample(results.WorstAccuracy), colWorst)
				ev = append(ev, fmt.Sprintf("%s %s → %s%%", r, sa.format(100, 1), sb.format(100, 1)))
			}
		}
		c.tagAll(learnedVariances)
		f.decide(c.checks(), "worst-10% accuracy at n = 1 → n = 3: "+strings.Join(ev, "; "), jamoussiPre(rs, variancesLearned))
		f.explain(fmt.Sprintf("the paper reads its trend off a figure and calls it a tendency; with 10 clients the worst 10%% is one client, "+
			"a noisy statistic over %d %s.", seeds, words.Plural(seeds, "seed")))
		out = append(out, f)
	}
	return out
}

// jamoussiMargins are the equivalence margins of the same-layers finding: one point of accuracy and
// of ECE (accMargin; Table 1's standard errors of both are 0.1-0.8 points) and 0.02 of NLL (Table 1's
// NLL standard errors are 0.01-0.04).
var jamoussiMargins = map[string]float64{results.Accuracy: accMargin, results.ECE: accMargin, results.NLL: 0.02}

// jamoussiAlike checks that with the same number of Bayesian layers the five rules score alike: every
// pair of rules with the same n equivalent within jamoussiMargins in accuracy, ECE and NLL, one Holm
// family per metric (each metric is a primary comparison of Table 1). Pairs of rules that differ only
// through how they weigh the clients' variances need clients whose variances differ
// (jamoussiWeighting, equalVariances), judged per layer count (jamoussiPreByLayers). The caveat names a rule that stands apart from every other
// (jamoussiExceptions), which a verdict of holds in part alone would hide.
func jamoussiAlike(rs runSet) Finding {
	f := Finding{Claim: "With the same number of Bayesian layers the five rules score alike (no rule is clearly best)", Source: "Sec. 5, Table 1 (accuracy, ECE and NLL)"}
	v := func(variant string) runSet { return rs.where("variant", variant) }
	var checks []check
	var ev []string
	for _, m := range []metricCol{colAcc, colECE, colNLL} {
		c := claims{family: strings.Split(m.header, " ")[0]}
		for n := 1; n <= 3; n++ {
			var lo, hi float64 = math.Inf(1), math.Inf(-1)
			for i, a := range jamoussiRules {
				va := fmt.Sprintf("n%d-%s", n, a)
				st := v(va).summary(m.name)
				if !st.ok() {
					continue
				}
				lo, hi = min(lo, st.Mean), max(hi, st.Mean)
				for _, b := range jamoussiRules[i+1:] {
					vb := fmt.Sprintf("n%d-%s", n, b)
					if v(vb).summary(m.name).ok() {
						c.same(fmt.Sprintf("%s: %s ≈ %s", c.family, va, vb), v(va).sample(m.name), v(vb).sample(m.name), jamoussiMargins[m.name], m)
						if jamoussiWeighting(a, b) {
							c.tag(varianceWeighting)
						}
						c.tagScope(jamoussiScope(n))
					}
				}
			}
			if hi >= lo {
				ev = append(ev, fmt.Sprintf("n=%d %s %s-%s", n, c.family, m.value(lo), m.value(hi)))
			}
		}
		checks = append(checks, c.checks()...)
	}
	f.decide(checks, fmt.Sprintf("pairs of rules with the same n, equivalence margins ±%s accuracy point, ±%s ECE point, ±%s NLL; %s",
		colAcc.value(jamoussiMargins[results.Accuracy]), colECE.value(jamoussiMargins[results.ECE]), colNLL.value(jamoussiMargins[results.NLL]), strings.Join(ev, ", ")),
		jamoussiPreByLayers(rs, equalVariances)...)
	if x := jamoussiExceptions(rs); x != "" && f.Verdict != NotRun {
		f.Caveat = x
		f.Evidence += ". " + upperFirst(x)
	}
	return f
}

// jamoussiExceptions names, for the same-layers finding, the rules whose mean lies more than twice the
// equivalence margin from every other rule with the same n in some metric, with those gaps: "except:
// GAA at n = 3, apart from every other rule in Acc by 2.16-2.19 points, NLL by 0.079-0.083 (more than
// twice the margin, by their means)"; "" when none does.
func jamoussiExceptions(rs runSet) string {
	var out []string
	for n := 1; n <= 3; n++ {
		for _, a := range jamoussiRules {
			var gaps []string
			for _, m := range []metricCol{colAcc, colECE, colNLL} {
				sa := rs.where("variant", fmt.Sprintf("n%d-%s", n, a)).summary(m.name)
				if !sa.ok() {
					continue
				}
				lo, hi, others := math.Inf(1), 0.0, 0
				for _, b := range jamoussiRules {
					sb := rs.where("variant", fmt.Sprintf("n%d-%s", n, b)).summary(m.name)
					if b == a || !sb.ok() {
						continue
					}
					d := math.Abs(sa.Mean - sb.Mean)
					lo, hi, others = math.Min(lo, d), math.Max(hi, d), others+1
				}
				if others > 0 && lo > 2*jamoussiMargins[m.name] {
					unit := ""
					if m.scale == 100 {
						unit = " points"
					}
					gaps = append(gaps, fmt.Sprintf("%s by %s-%s%s", strings.Split(m.header, " ")[0], m.value(lo), m.value(hi), unit))
				}
			}
			if len(gaps) > 0 {
				out = append(out, fmt.Sprintf("%s at n = %d, apart from every other rule in %s", a, n, strings.Join(gaps, ", ")))
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "except: " + strings.Join(out, "; ") + " (more than twice the equivalence margin, by their means)"
}
