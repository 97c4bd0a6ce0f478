package reproduce

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/internal/words"

	"fedbayes.dev/fedbayes/stats"
)

// Verdict says whether a paper's finding holds here.
type Verdict string

const (
	// Holds: every check of the finding agrees with it.
	Holds Verdict = "holds"
	// Partly: some checks agree, the others contradict it or are not decisive.
	Partly Verdict = "holds in part"
	// Fails: no check agrees and at least one contradicts it.
	Fails Verdict = "does not hold"
	// Inconclusive: no check is decisive either way.
	Inconclusive Verdict = "inconclusive"
	// NotTestable: the runs cannot test the finding, for the reason Finding.Why gives: the posteriors
	// did not learn, or the effect starts beyond the budget.
	NotTestable Verdict = "not testable here"
	// NotRun: the presets that test it have no complete runs.
	NotRun Verdict = "not run"
)

// Level is the significance level of every check of the report.
const Level = stats.DefaultLevel

// Equivalence margins of the "no difference" claims (TOST), in the metric's units.
const (
	// accMargin is one point of accuracy: a difference a reader of the papers' tables would not call
	// a difference (their standard errors are 0.1-0.8 points).
	accMargin = 0.01
	// dwcMargin is Fischer et al.'s "about as good" for DWC with pre-training against WS: 5 points,
	// the tolerance of the former check.
	dwcMargin = 0.05
)

// VerdictRule is the rule judge applies, as the report prints it.
const VerdictRule = "Verdicts: each finding is split into checks. A check that one method beats another is a two-sided t-test " +
	"of the difference, paired by seed when both ran the same seeds (runs of one preset share each seed's partition, " +
	"initial model and batch order) and Welch's otherwise, with Holm's correction over the distinct comparisons of the finding that could be made " +
	"(the same two samples compared twice count once, as when two rows' runs gave identical numbers: FED and FEDAVG with clients of equal size; " +
	"a finding judged on several metrics as its primary comparisons corrects each metric's as one family), " +
	"at level 0.05: it agrees when the corrected p-value is below 0.05 in the claimed direction, contradicts when it is " +
	"below 0.05 in the other, and is not decisive otherwise. A claim of no difference is a two one-sided tests (TOST) " +
	"equivalence test with a stated margin (1 accuracy point unless the finding says otherwise) at level 0.05: it agrees " +
	"when equivalence is shown, contradicts when the difference test above is significant and equivalence is not shown, " +
	"and is not decisive otherwise; identical runs cannot show it. A claim that a method does as well as another or better " +
	"agrees when it is significantly above the other or equivalent within the margin, and contradicts when it is " +
	"significantly below and not equivalent. A check of a measured mean against a predicted or " +
	"printed value agrees when the 95 % confidence interval of the mean lies within the tolerance, contradicts when it " +
	"lies wholly outside, and is not decisive otherwise; a prediction computed without runs is checked exactly. A comparison with too few seeds or no spread is not decisive. " +
	"A finding *holds* when every check agrees, *holds in part* when some do, *does not hold* when none does and at " +
	"least one contradicts it, and is *inconclusive* when no check is decisive. A check may need a mechanism, and a finding " +
	"states a precondition for each, computed from the records: comparisons of rules that differ only through how they weigh the " +
	"clients' variances (EAA against AALV) need clients whose variances differ (one criterion wherever a precondition asks it: not met " +
	"when two such rows end at the same learned spread within 0.1 % in every seed, or when every run of the two rows with recorded " +
	"posterior health has its clients' log σ² within 0.1 of each other, standard deviation across clients, or unmoved; the 0.1 is a " +
	"convention of this report, not a figure of the papers); comparisons of variational nets with other nets need variances that learned (not met when, " +
	"besides, the recorded posterior health does not show that they did); checks that read DWC's rows need DWC to act (not met when it " +
	"fell back to the previous model in more than half of the parameters, or when no client variance moved: every DWC run's " +
	"recorded posterior health unmoved, as above); a harm relative to a reference needs a reference that trained " +
	"(not met when it is shown to trail the same rule trained at another budget's learning rate by more than 10 points, a convention of this " +
	"report; it sets aside only the checks that show no harm, which an untrained reference can hide, not create); a row whose every seed " +
	"diverged counts as below one that trained in every seed (an exact comparison), and a finding whose reference did not train and whose " +
	"only counted harm is such a divergence is *not testable here*. " +
	"A check whose precondition is not met is set aside: listed, not counted; a precondition never sets aside a check that needs another " +
	"mechanism or none, so it cannot hide a significant result of another mechanism. Where an unmet condition decides a check's outcome " +
	"in a known direction (an order of spreads that the rules' formulas give on near-equal client variances and that agrees with the claim), " +
	"only the checks that came out that way are set aside and one against it still counts, the formulas' own contradiction of the claim included; a spread that BFL-P's clamp freezes is set aside " +
	"whichever way it falls, and so is a comparison of rules that differ only through how they weigh the clients' variances (EAA against " +
	"AALV) on near-equal client variances: there the two rules give the same variance and the same mean, so the formulas give it no direction " +
	"to set aside alone (unlike an order of spreads), and an outcome either way rests only on the residual differences the criterion calls near-equal. A finding whose every check is set aside is *not testable here*, with the reasons; so is one, short of " +
	"holding, when single runs at the paper's budget (one seed each, cited with their commit) show the effect starting beyond this budget. A comparison that was not decisive states its power: the |t| its Holm threshold needed at the seeds run, and " +
	"an estimate of the seeds that would give 80 % power from the observed difference and variance (rough at 3 seeds; for an equivalence " +
	"check, its difference test's). " +
	"The reason is given. No verdict rests on means alone. " +
	"Tests, margins and the A/A simulation: docs/statistics.md."

// outcome is what one check says about a finding.
type outcome int

const (
	// undecided: the check is not decisive (not significant, equivalence not shown, not testable).
	undecided outcome = iota
	// agrees: the check supports the finding.
	agrees
	// contradicts: the check goes against the finding.
	contradicts
)

// check is one check of a finding: its outcome and the numbers behind it.
type check struct {
	outcome outcome
	// text names the check and gives its numbers, for the evidence.
	text string
	// test names the test that decided it ("paired t-test", "Welch t-test", "... and TOST", "95 %
	// interval", "exact comparison"), holm the number of comparisons Holm's correction ran over (0: none), family the
	// Holm family's name where a finding has several ("" for one), seeds the seeds of its runs.
	test   string
	holm   int
	family string
	seeds  []int64
	// needs is the mechanism the check needs to be evidence (a precondition may set it aside), aside
	// the reason an unmet precondition set it aside ("" while counted).
	needs mechanism
	aside string
	// scope names the part of the set-up the check reads ("n = 2": a layer count), for a precondition
	// evaluated part by part (precondition.scope); "" for none.
	scope string
	// given is the outcome the set-up alone gives the check where a precondition on needs is not met
	// (a precondition with givenOnly sets aside only the checks with that outcome).
	given outcome
	// res is the difference test of a comparison (tested says there is one), for its effect size and
	// the seeds its test would need (power).
	res    stats.Result
	tested bool
	label  string
	col    metricCol
	// difference says the check is a claim that one mean lies below another (its power is stated).
	difference bool
	// step is the divisor k of the level at the comparison's step in Holm's procedure (level/k; holmSteps),
	// for its interval (effectCI); 0 without a test.
	step int
	// hypothesis identifies what the check tests: the two samples of a comparison (comparisonKey, so
	// that one comparison made twice is one hypothesis), or the label of a check made without a test.
	hypothesis string
}

// judge is the verdict rule of the report (VerdictRule): holds when every check agrees, holds in
// part when some do, does not hold when none does and some contradict, inconclusive when none is
// decisive, not run without checks.
func judge(checks []check) Verdict {
	agree, contra := 0, 0
	for _, c := range checks {
		switch c.outcome {
		case agrees:
			agree++
		case contradicts:
			contra++
		}
	}
	switch {
	case len(checks) == 0:
		return NotRun
	case agree == len(checks):
		return Holds
	case agree > 0:
		return Partly
	case contra > 0:
		return Fails
	}
	return Inconclusive
}

// tallyOf counts the checks no precondition set aside that agree, contradict and are not decisive,
// in that order, and the set-aside ones.
func tallyOf(checks []check) (n [3]int, aside int) {
	for _, c := range checks {
		switch {
		case c.aside != "":
			aside++
		case c.outcome == agrees:
			n[0]++
		case c.outcome == contradicts:
			n[1]++
		default:
			n[2]++
		}
	}
	return n, aside
}

// distinctOf counts the distinct hypotheses among the checks no precondition set aside (check.hypothesis;
// a check without one counts on its own).
func distinctOf(checks []check) int {
	seen := map[string]bool{}
	n := 0
	for _, c := range checks {
		switch {
		case c.aside != "":
		case c.hypothesis == "":
			n++
		case !seen[c.hypothesis]:
			seen[c.hypothesis] = true
			n++
		}
	}
	return n
}

// tally counts the checks' outcomes: "4 of 6 checks agree, 1 contradicts, 1 not decisive", and those
// set aside by an unmet precondition ("; 2 set aside").
func tally(checks []check) string {
	n, aside := tallyOf(checks)
	total := len(checks) - aside
	if total == 0 {
		return fmt.Sprintf("no check counted: all %d set aside by a precondition (below), %s", aside, asideTally(checks))
	}
	out := fmt.Sprintf("%d of %d %s agree, %d %s, %d not decisive", n[0], total, words.Plural(total, "check"),
		n[1], map[bool]string{true: "contradicts", false: "contradict"}[n[1] == 1], n[2])
	if aside > 0 {
		out += fmt.Sprintf("; %d more set aside by a precondition (below), %s", aside, asideTally(checks))
	}
	return out
}

// asideTally is the outcomes of the checks a precondition set aside, so that a reader sees what they
// would have said: "of which 3 agree, 0 contradict, 51 not decisive".
func asideTally(checks []check) string {
	var n [3]int
	for _, c := range checks {
		switch {
		case c.aside == "":
		case c.outcome == agrees:
			n[0]++
		case c.outcome == contradicts:
			n[1]++
		default:
			n[2]++
		}
	}
	return fmt.Sprintf("of which %d agree, %d contradict, %d not decisive", n[0], n[1], n[2])
}

// kind is the kind of a claim.
type kind int

const (
	// claimBelow: mean(a) < mean(b).
	claimBelow kind = iota
	// claimSame: |mean(a) - mean(b)| < margin.
	claimSame
	// claimNotBelow: mean(a) >= mean(b), or within the margin of it.
	claimNotBelow
	// claimFixed: a check decided without a test (a computed prediction against a printed number).
	claimFixed
	// claimWithin: the mean of a lies within [lo, hi].
	claimWithin
)

// claim is one check before it is judged.
type claim struct {
	kind   kind
	label  string
	a, b   stats.Sample
	margin float64
	lo, hi float64
	col    metricCol
	fixed  bool
	needs  mechanism
	given  outcome
	scope  string
}

// claims collects the checks of one Holm family, so that Holm's correction runs over all its
// comparisons: a finding's, or, where a finding has several primary comparisons (one per metric), one
// of them, named by family.
type claims struct {
	items  []claim
	family string
}

// below adds the claim that a's mean lies below b's on metric col. For "B beats A" the caller passes
// A's values as a on a higher-is-better metric (accuracy), B's on a lower-is-better one (NLL, ECE).
func (c *claims) below(label string, a, b stats.Sample, col metricCol) {
	c.items = append(c.items, claim{kind: claimBelow, label: label, a: a, b: b, col: col})
}

// same adds the claim that a and b do not differ by margin or more.
func (c *claims) same(label string, a, b stats.Sample, margin float64, col metricCol) {
	c.items = append(c.items, claim{kind: claimSame, label: label, a: a, b: b, margin: margin, col: col})
}

// notBelow adds the claim that a is as good as b or better: a above b, or within margin of it.
func (c *claims) notBelow(label string, a, b stats.Sample, margin float64, col metricCol) {
	c.items = append(c.items, claim{kind: claimNotBelow, label: label, a: a, b: b, margin: margin, col: col})
}

// within adds the claim that the mean of a lies in [lo, hi].
func (c *claims) within(label string, a stats.Sample, lo, hi float64, col metricCol) {
	c.items = append(c.items, claim{kind: claimWithin, label: label, a: a, lo: lo, hi: hi, col: col})
}

// fixed adds a check decided without a test: ok agrees, !ok contradicts.
func (c *claims) fixed(label string, ok bool) {
	c.items = append(c.items, claim{kind: claimFixed, label: label, fixed: ok})
}

// tag makes the last claim added need mechanism m (a precondition on m may set it aside), where the
// set-up alone would make it agree.
func (c *claims) tag(m mechanism) { c.tagGiven(m, agrees) }

// tagScope makes the last claim added read the part scope of the set-up (check.scope).
func (c *claims) tagScope(scope string) {
	if len(c.items) > 0 {
		c.items[len(c.items)-1].scope = scope
	}
}

// tagGiven makes the last claim added need mechanism m, where the set-up alone would give it outcome o.
func (c *claims) tagGiven(m mechanism, o outcome) {
	if len(c.items) > 0 {
		c.items[len(c.items)-1].needs, c.items[len(c.items)-1].given = m, o
	}
}

// tagAll makes every claim added so far need mechanism m, where the set-up alone would make it agree.
func (c *claims) tagAll(m mechanism) {
	for i := range c.items {
		c.items[i].needs, c.items[i].given = m, agrees
	}
}

// n is the number of claims.
func (c *claims) n() int { return len(c.items) }

// checks runs the tests: stats.Compare on every comparison, Holm over the distinct ones that could be
// made, TOST for equivalences, confidence intervals for the within claims (see VerdictRule). Two
// comparisons of the same two samples (rows whose runs gave identical numbers, such as FED and FEDAVG
// with clients of equal size) are one hypothesis: they share one p-value and count once in Holm's
// correction; a comparison that cannot be made (too few seeds, no spread) is no member of the family.
func (c *claims) checks() []check {
	res := make([]stats.Result, len(c.items))
	errs := make([]error, len(c.items))
	var p []float64
	at := make([]int, len(c.items)) // the index in p of each comparison's hypothesis
	seen := map[string]int{}
	for i, it := range c.items {
		if it.kind == claimFixed || it.kind == claimWithin {
			continue
		}
		res[i], errs[i] = stats.Compare(it.a, it.b)
		key := comparisonKey(it.a, it.b)
		if k, ok := seen[key]; ok {
			at[i] = k
			continue
		}
		pv := math.NaN()
		if errs[i] == nil {
			pv = res[i].P
		}
		seen[key], at[i] = len(p), len(p)
		p = append(p, pv)
	}
	adj := stats.Holm(p)
	m := 0 // the family Holm corrects over: the distinct comparisons that could be made (stats.Holm)
	for _, v := range p {
		if !math.IsNaN(v) {
			m++
		}
	}
	step := holmSteps(p)
	out := make([]check, len(c.items))
	for i, it := range c.items {
		var a float64
		if it.kind != claimFixed && it.kind != claimWithin {
			a = adj[at[i]]
		}
		out[i] = it.judge(res[i], errs[i], a, m)
		out[i].seeds, out[i].family = slices.Concat(it.a.Seeds, it.b.Seeds), c.family
		out[i].hypothesis = it.label
		if it.kind != claimFixed && it.kind != claimWithin {
			out[i].hypothesis = comparisonKey(it.a, it.b)
		}
		out[i].needs, out[i].given, out[i].label, out[i].col, out[i].difference = it.needs, it.given, it.label, it.col, it.kind == claimBelow
		out[i].scope = it.scope
		if it.kind != claimFixed && it.kind != claimWithin && errs[i] == nil {
			out[i].res, out[i].tested, out[i].step = res[i], true, step[at[i]]
		}
		switch {
		case it.kind == claimFixed:
			out[i].test = "exact comparison"
		case it.kind == claimWithin:
			out[i].test = "95 % interval"
		default:
			out[i].test, out[i].holm = "t-test", m
			if errs[i] == nil {
				out[i].test = map[bool]string{true: "paired t-test", false: "Welch t-test"}[res[i].Test == stats.Paired]
			}
			if it.kind != claimBelow {
				out[i].test += " and TOST"
			}
		}
	}
	return out
}

// holmSteps gives each p-value of a family the divisor of its step in Holm's procedure: with the m
// finite p-values sorted increasingly (ties in their order, as stats.Holm), the j-th (from 0) is
// tested at level/(m − j); 0 for a NaN.
func holmSteps(p []float64) []int {
	var idx []int
	for i, v := range p {
		if !math.IsNaN(v) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(p[a], p[b]) })
	out := make([]int, len(p))
	for j, i := range idx {
		out[i] = len(idx) - j
	}
	return out
}

// comparisonKey identifies the hypothesis of a comparison of a with b by the samples' seeds and
// values, in either order (a two-sided test of a against b is the test of b against a).
func comparisonKey(a, b stats.Sample) string {
	ka, kb := fmt.Sprint(a.Seeds, a.Values), fmt.Sprint(b.Seeds, b.Values)
	if ka > kb {
		ka, kb = kb, ka
	}
	return ka + "|" + kb
}

// judged says how a finding's checks were decided, for the report: the tests by kind (with Holm's
// correction where it ran) and the seeds of the runs, e.g. "6 paired t-tests, Holm over 6; seeds 0–2".
func judged(checks []check) string {
	count := map[string]int{}
	var order []string
	holm := 0
	seeds := map[int64]bool{}
	for _, c := range checks {
		if count[c.test] == 0 {
			order = append(order, c.test)
		}
		count[c.test]++
		holm = max(holm, c.holm)
		for _, s := range c.seeds {
			seeds[s] = true
		}
	}
	var parts []string
	for _, t := range order {
		name := t
		if count[t] > 1 {
			name = strings.NewReplacer("test", "tests", "interval", "intervals", "comparison", "comparisons").Replace(t)
		}
		parts = append(parts, fmt.Sprintf("%d %s", count[t], name))
	}
	out := strings.Join(parts, ", ")
	if fam := familiesText(checks); fam != "" {
		out += fam
		if len(seeds) > 0 {
			out += "; seeds " + seedList(slices.Sorted(maps.Keys(seeds)))
		}
		return out
	}
	tests := 0
	for _, c := range checks {
		if c.holm > 0 {
			tests++
		}
	}
	switch {
	case holm > 1 && holm < tests:
		out += fmt.Sprintf(", Holm over the %d distinct comparisons that could be made", holm)
	case holm > 1:
		out += fmt.Sprintf(", Holm over %d", holm)
	}
	if len(seeds) > 0 {
		out += "; seeds " + seedList(slices.Sorted(maps.Keys(seeds)))
	}
	return out
}

// familiesText says, for checks from more than one named Holm family, the families and the
// comparisons each corrects over: ", Holm within each metric: Acc over 30, ECE over 30, NLL over 30";
// "" otherwise.
func familiesText(checks []check) string {
	var names []string
	size := map[string]int{}
	for _, c := range checks {
		if c.family == "" || c.holm == 0 {
			continue
		}
		if _, ok := size[c.family]; !ok {
			names = append(names, c.family)
		}
		size[c.family] = c.holm
	}
	if len(names) < 2 {
		return ""
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s over %d", n, size[n]))
	}
	return ", Holm within each metric: " + strings.Join(parts, ", ")
}

// seedList prints sorted seeds with runs of consecutive ones as ranges: "0–2", "1–5, 7".
func seedList(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(seeds[i]))
		case j == i+1:
			parts = append(parts, fmt.Sprintf("%d, %d", seeds[i], seeds[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d–%d", seeds[i], seeds[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// judge decides one claim from its test (r, err) and its Holm-adjusted p-value over m comparisons.
func (it claim) judge(r stats.Result, err error, pHolm float64, m int) check {
	switch it.kind {
	case claimFixed:
		if it.fixed {
			return check{outcome: agrees, text: it.label}
		}
		return check{outcome: contradicts, text: it.label}
	case claimWithin:
		return it.judgeWithin()
	}
	if err != nil {
		why := err.Error()
		if errors.Is(err, stats.ErrNotTestable) {
			why = strings.TrimPrefix(why, "stats: not testable: ")
		}
		return check{outcome: undecided, text: fmt.Sprintf("%s: not testable (%s)", it.label, why)}
	}
	sig := pHolm < Level
	text := fmt.Sprintf("%s: Δ %s (%s, p %s, Holm over %d)", it.label, it.col.delta(r.Diff, r.SE), shortTest(r.Test), pText(pHolm), m)
	switch it.kind {
	case claimBelow:
		switch {
		case sig && r.Diff < 0:
			return check{outcome: agrees, text: text}
		case sig && r.Diff > 0:
			return check{outcome: contradicts, text: text}
		}
		return check{outcome: undecided, text: text}
	}
	eq, eqErr := stats.Equivalence(it.a, it.b, it.margin)
	shown := eqErr == nil && eq.Shown(Level)
	if eqErr == nil {
		text += fmt.Sprintf("; TOST within ±%s: p %s", it.col.value(it.margin), pText(eq.P))
	}
	switch {
	case shown:
		return check{outcome: agrees, text: text}
	case it.kind == claimNotBelow && sig && r.Diff > 0:
		return check{outcome: agrees, text: text}
	case it.kind == claimSame && sig, it.kind == claimNotBelow && sig && r.Diff < 0:
		return check{outcome: contradicts, text: text}
	}
	return check{outcome: undecided, text: text}
}

// judgeWithin decides a within claim by the 95 % confidence interval of the mean.
func (it claim) judgeWithin() check {
	lo, hi, err := stats.MeanCI(it.a.Values, Level)
	if err != nil {
		return check{outcome: undecided, text: fmt.Sprintf("%s: not testable (%v)", it.label, err)}
	}
	text := fmt.Sprintf("%s: 95 %% interval %s–%s against %s–%s", it.label, it.col.value(lo), it.col.value(hi), it.col.value(it.lo), it.col.value(it.hi))
	switch {
	case lo >= it.lo && hi <= it.hi:
		return check{outcome: agrees, text: text}
	case hi < it.lo || lo > it.hi:
		return check{outcome: contradicts, text: text}
	}
	return check{outcome: undecided, text: text}
}

// shortTest names a test briefly for the evidence.
func shortTest(t stats.Test) string {
	if t == stats.Paired {
		return "paired"
	}
	return "Welch"
}

// pText prints a p-value with two significant digits, "<0.0001" below that.
func pText(p float64) string {
	if p < 1e-4 {
		return "<0.0001"
	}
	return fmt.Sprintf("%.2g", p)
}

// delta prints a difference and its SE in the column's units ("+1.20 ± 0.30").
func (c metricCol) delta(d, se float64) string {
	return fmt.Sprintf("%+.*f ± %.*f", c.digits, d*c.scale, c.digits, se*c.scale)
}

// value prints a value in the column's units.
func (c metricCol) value(v float64) string { return fmt.Sprintf("%.*f", c.digits, v*c.scale) }

// decide sets the finding's verdict from its checks under its preconditions (verdictOf) and opens its
// evidence with their tally, then what (a sentence on the numbers), then how each precondition was
// applied and the checks it set aside, then the checks that did not agree (at most six), then the
// power of the comparisons that were not decisive. Without checks the finding is not run and its
// evidence says so.
func (f *Finding) decide(checks []check, what string, pres ...precondition) {
	v, why, marked := verdictOf(checks, pres)
	f.Verdict = v
	if f.Verdict == NotRun {
		f.Evidence = "no check could be made: the presets it reads have no complete runs yet"
		return
	}
	if v == NotTestable {
		f.Why = why
	}
	f.Judged = judged(marked)
	f.Tally, f.Aside = tallyOf(marked)
	f.Distinct = distinctOf(marked)
	f.RuleNote = ruleNote(pres, marked)
	if v == Partly && f.Tally[1] > f.Tally[0] {
		f.Caveat = fmt.Sprintf("more of its checks contradict it (%d) than agree (%d)", f.Tally[1], f.Tally[0])
	}
	f.Effect = largestEffect(marked)
	var other, aside []string
	for _, c := range marked {
		switch {
		case c.aside != "":
			aside = append(aside, c.text)
		case c.outcome != agrees:
			other = append(other, c.text)
		}
	}
	f.Evidence = tally(marked)
	if what != "" {
		f.Evidence += "; " + what
	}
	if p := preconditionText(pres, marked); p != "" {
		f.Evidence += ". " + p
	}
	if len(aside) > 0 {
		f.Evidence += ". Set aside: " + strings.Join(firstN(aside, 6), "; ")
	}
	if len(other) > 0 {
		f.Evidence += ". Not agreeing: " + strings.Join(firstN(other, 6), "; ")
	}
	f.Power = powerText(marked)
	if f.Power != "" {
		f.Evidence += ". " + f.Power
	}
}

// notTestable makes the finding not testable here, for reason (its Why); the evidence keeps the
// checks' numbers.
func (f *Finding) notTestable(reason string) {
	if f.Verdict == NotRun {
		return
	}
	f.Verdict, f.Why = NotTestable, reason
}
