package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// runSet is a list of runs with label filters and final-round summaries.
type runSet []results.Run

// where keeps the runs whose label key has the value.
func (rs runSet) where(key, value string) runSet {
	var out runSet
	for _, r := range rs {
		if r.Meta.Labels[key] == value {
			out = append(out, r)
		}
	}
	return out
}

// values lists the distinct values of a label, in first-seen order.
func (rs runSet) values(key string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if v, ok := r.Meta.Labels[key]; ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// final returns a run's metric at the last round that evaluated it.
func final(r results.Run, metric string) (float64, bool) {
	for i := len(r.Rows) - 1; i >= 0; i-- {
		if v, ok := r.Rows[i].Metrics[metric]; ok {
			return v, true
		}
	}
	return 0, false
}

// sample returns the final value of a metric of each run that evaluated it, with the run's seed, for
// the tests of package stats (paired by seed where two samples ran the same seeds): tailSample over
// the last evaluated round.
func (rs runSet) sample(metric string) stats.Sample { return rs.tailSample(metric, 1) }

// tailMean returns the mean of a run's metric over the last k rounds that evaluated it, and the first
// and last of those rounds; ok is false when fewer than k rounds evaluated it. The final round of a
// chaotic run (non-IID clients, a large learning rate) moves by points from one round to the next;
// the mean of the last rounds is the stable statistic.
func tailMean(r results.Run, metric string, k int) (mean float64, first, last int, ok bool) {
	n := 0
	for i := len(r.Rows) - 1; i >= 0 && n < k; i-- {
		if v, has := r.Rows[i].Metrics[metric]; has {
			if n == 0 {
				last = r.Rows[i].Round
			}
			mean += v
			first = r.Rows[i].Round
			n++
		}
	}
	if n < k || k <= 0 {
		return 0, 0, 0, false
	}
	return mean / float64(k), first, last, true
}

// tailSample is sample with each run's mean over its last k evaluated rounds (tailMean) in place of
// its final value; runs with fewer evaluated rounds are left out.
func (rs runSet) tailSample(metric string, k int) stats.Sample {
	var s stats.Sample
	for _, r := range rs {
		if v, _, _, ok := tailMean(r, metric, k); ok {
			s.Seeds = append(s.Seeds, r.Meta.Seed)
			s.Values = append(s.Values, v)
		}
	}
	return s
}

// stat is a metric summarised over seeds (mean, standard error, number of seeds); N == 0 means no
// run evaluated it.
type stat struct{ stats.Summary }

// ok reports whether any run evaluated the metric.
func (s stat) ok() bool { return s.N > 0 && !math.IsNaN(s.Mean) }

// se is the standard error, 0 when undefined (one seed).
func (s stat) se() float64 {
	if math.IsNaN(s.SE) {
		return 0
	}
	return s.SE
}

// summary summarises the final value of a metric over the runs (one per seed).
func (rs runSet) summary(metric string) stat {
	var vals []float64
	for _, r := range rs {
		if v, ok := final(r, metric); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return stat{}
	}
	s, err := stats.Summarize(vals)
	if err != nil {
		return stat{}
	}
	return stat{s}
}

// format prints "mean ± SE" scaled (100 for percentages) with digits decimals; "–" when missing.
func (s stat) format(scale float64, digits int) string {
	if !s.ok() {
		return "–"
	}
	if s.N < 2 {
		return fmt.Sprintf("%.*f", digits, s.Mean*scale)
	}
	return fmt.Sprintf("%.*f ± %.*f", digits, s.Mean*scale, digits, s.SE*scale)
}

// ref is a number a paper prints: mean and ± (as printed; NaN when none).
type ref struct{ mean, pm float64 }

// String prints the reference as the paper does.
func (r ref) String() string {
	if math.IsNaN(r.mean) {
		return "–"
	}
	if math.IsNaN(r.pm) {
		return trimFloat(r.mean)
	}
	return trimFloat(r.mean) + " ± " + trimFloat(r.pm)
}

// trimFloat prints a float with at most 3 decimals, without trailing zeros beyond 2.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	if strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return s
}

// metricCol is a compared metric: its results name, header, scale for printing (100 for
// percentages) and decimals.
type metricCol struct {
	name, header string
	scale        float64
	digits       int
}

var (
	colAcc    = metricCol{results.Accuracy, "Acc (%)", 100, 2}
	colECE    = metricCol{results.ECE, "ECE (%)", 100, 2}
	colNLL    = metricCol{results.NLL, "NLL", 1, 3}
	colSpread = metricCol{results.Spread, "spread ‖σ‖₂", 1, 3}
	colWAcc   = metricCol{results.WeightedAccuracy, "weighted client acc (%)", 100, 2}
	colWorst  = metricCol{results.WorstAccuracy, "worst-10% client acc (%)", 100, 2}
)

// compareTable prints a Markdown table with one row per value of label rowKey (in the order of rows)
// and, per metric, our mean ± SE over seeds beside the paper's number (refs[row][metric]; missing
// references print "–"). Rows without runs print "not run".
func compareTable(rs runSet, rowKey string, rows []string, cols []metricCol, refs map[string]map[string]ref) string {
	head := []string{rowKey, "seeds"}
	for _, c := range cols {
		head = append(head, c.header+" (ours)")
		if refs != nil {
			head = append(head, c.header+" (paper)")
		}
	}
	var b strings.Builder
	b.WriteString(tableHeader(head...))
	for _, row := range rows {
		sel := rs.where(rowKey, row)
		fmt.Fprintf(&b, "| %s | %d |", row, len(sel))
		for _, c := range cols {
			if len(sel) == 0 {
				b.WriteString(" not run |")
			} else {
				b.WriteString(" " + sel.summary(c.name).format(c.scale, c.digits) + " |")
			}
			if refs != nil {
				r, ok := refs[row][c.name]
				if !ok {
					r = ref{math.NaN(), math.NaN()}
				}
				b.WriteString(" " + r.String() + " |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// tableHeader is the header row of a Markdown table with the given column names, and its separator
// row, each ended by a newline.
func tableHeader(cols ...string) string {
	return "| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat("---|", len(cols)) + "\n"
}

// Finding is a qualitative claim of a paper and what our runs say about it.
type Finding struct {
	// Claim is the finding in our words; Source is where the paper states it.
	Claim, Source string
	// Verdict is whether it holds here.
	Verdict Verdict
	// Evidence is the numbers behind the verdict.
	Evidence string
	// Why is what might explain a verdict other than Holds, or, for NotTestable, why the runs cannot
	// test the finding.
	Why string
	// Judged says how the checks were decided: the tests, Holm's correction and the seeds (judged).
	Judged string
	// Presets names the presets (at the budget) whose runs the finding reads; nil means every preset
	// of its paper, an empty list none (a finding computed without runs).
	Presets []string
	// Formerly is the claim as an earlier report worded it, where the finding was renamed or split
	// from one, so that the baseline's verdict is found (verdictChange).
	Formerly string
	// Changed says what changed since the baseline report when the verdict did (verdictChange).
	Changed string
	// Tally counts the checks that were counted: those that agree, contradict, are not decisive;
	// Aside those an unmet precondition set aside.
	Tally [3]int
	Aside int
	// Distinct is the number of distinct hypotheses among the counted checks (one comparison made
	// twice, as of two rows whose runs gave identical numbers, counts once).
	Distinct int
	// Effect is the largest counted difference with its 95 % confidence interval adjusted for its Holm
	// family (effectCI), for the summary;
	// Power says what the comparisons that were not decisive would need (powerText).
	Effect, Power string
	// Caveat is what the verdict's label alone would hide (an exception within a finding that holds
	// in part), for the summary.
	Caveat string
	// RuleNote says how the verdict rule's preconditions acted on the finding (checks set aside, or an
	// unmet precondition that applies to none of its checks), for the line on a changed verdict; ""
	// when they did not act.
	RuleNote string
	// Prediction marks a finding that is fedbayes's prediction about the authors' code rather than a
	// claim of the paper; the summary counts them apart.
	Prediction bool
}

// explain sets Why, what might explain a finding that was checked and did not hold; it does nothing
// when the finding holds, was not run or is not testable here (whose Why is the reason).
func (f *Finding) explain(why string) {
	if f.Verdict != Holds && f.Verdict != NotRun && f.Verdict != NotTestable {
		f.Why = why
	}
}

// orderedBy returns the keys sorted by increasing value.
func orderedBy(vals map[string]float64) []string {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return vals[keys[i]] < vals[keys[j]] })
	return keys
}

// seedGains says in how many seeds the runs of a end above those of b (paired by seed; values are
// fractions, differences in points) and the range of the differences: "FedBE ends above FedAvg in
// 5 of 5 seeds (differences +0.6 to +6.2 points)".
func seedGains(a, b stats.Sample, nameA, nameB string) string {
	bv := map[int64]float64{}
	for i, sd := range b.Seeds {
		bv[sd] = b.Values[i]
	}
	n, up := 0, 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, sd := range a.Seeds {
		v, ok := bv[sd]
		if !ok {
			continue
		}
		d := 100 * (a.Values[i] - v)
		n++
		if d > 0 {
			up++
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if n == 0 {
		return fmt.Sprintf("%s and %s share no seed", nameA, nameB)
	}
	return fmt.Sprintf("%s ends above %s in %d of %d seeds (differences %+.1f to %+.1f points)", nameA, nameB, up, n, lo, hi)
}
