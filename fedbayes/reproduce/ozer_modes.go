package reproduce

import (
	"fmt"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/stats"
)

// modeShift is one row's metric in the two modes of a preset: the paper's text and the authors'
// code (model.compat "bfl-p" for Ozer et al., "ba-bfl" for Jamoussi et al.).
type modeShift struct {
	text, code runSet
	metric     string
}

// ok reports whether both modes evaluated the metric.
func (m modeShift) ok() bool { return m.text.summary(m.metric).ok() && m.code.summary(m.metric).ok() }

// delta is the code mode's mean minus the text mode's.
func (m modeShift) delta() float64 {
	return m.code.summary(m.metric).Mean - m.text.summary(m.metric).Mean
}

// test compares the code mode with the text mode (stats.Compare: paired by seed when both modes ran
// the same seeds, as the presets do).
func (m modeShift) test() (stats.Result, error) {
	return stats.Compare(m.code.sample(m.metric), m.text.sample(m.metric))
}

// modeColumns are the metrics compared between the two modes.
var modeColumns = []metricCol{colAcc, colECE, colNLL, colSpread}

// modeComparison compares the same rows of a setting run in the paper-text mode and in the mode of
// the authors' code, named mode (issue 17: "say what each difference does to accuracy, ECE, NLL and
// spread"). It returns a Markdown table (per row and metric: the code mode's mean minus the text's ±
// the SE of the difference, marked † where the difference is significant: stats.Compare, Holm over
// the rows of a metric, at Level) and one sentence per metric counting the rows that moved up, down or
// not significantly. Rows missing in either mode are left out; "" when none is in both.
func modeComparison(text, code runSet, rows []string, mode string) string {
	var shown []string
	for _, row := range rows {
		if len(text.where("variant", row)) > 0 && len(code.where("variant", row)) > 0 {
			shown = append(shown, row)
		}
	}
	if len(shown) == 0 {
		return ""
	}
	type cell struct {
		m     modeShift
		r     stats.Result
		err   error
		ok    bool
		pHolm float64
	}
	cells := make([][]cell, len(shown)) // [row][metric]
	for i, row := range shown {
		cells[i] = make([]cell, len(modeColumns))
		for j, c := range modeColumns {
			m := modeShift{text.where("variant", row), code.where("variant", row), c.name}
			cells[i][j] = cell{m: m, ok: m.ok(), pHolm: math.NaN()}
			if cells[i][j].ok {
				cells[i][j].r, cells[i][j].err = m.test()
			}
		}
	}
	for j := range modeColumns { // Holm over the rows of each metric
		var p []float64
		var idx []int
		for i := range shown {
			if c := cells[i][j]; c.ok && c.err == nil {
				p, idx = append(p, c.r.P), append(idx, i)
			}
		}
		for k, a := range stats.Holm(p) {
			cells[idx[k]][j].pHolm = a
		}
	}
	head := []string{"row", "seeds (text / " + mode + ")"}
	for _, c := range modeColumns {
		head = append(head, "Δ "+c.header)
	}
	var b strings.Builder
	b.WriteString(tableHeader(head...))
	type tally struct {
		up, down, same, untestable, n int
		sum                           float64
	}
	counts := make([]tally, len(modeColumns))
	for i, row := range shown {
		fmt.Fprintf(&b, "| %s | %d / %d |", row, len(text.where("variant", row)), len(code.where("variant", row)))
		for j, col := range modeColumns {
			c := cells[i][j]
			if !c.ok {
				b.WriteString(" – |")
				continue
			}
			counts[j].n++
			counts[j].sum += c.m.delta()
			if c.err != nil {
				counts[j].untestable++
				fmt.Fprintf(&b, " %+.*f (not testable) |", col.digits, c.m.delta()*col.scale)
				continue
			}
			mark := ""
			switch {
			case !(c.pHolm < Level):
				counts[j].same++
			case c.r.Diff > 0:
				counts[j].up++
				mark = " †"
			default:
				counts[j].down++
				mark = " †"
			}
			fmt.Fprintf(&b, " %s%s |", col.delta(c.r.Diff, c.r.SE), mark)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nΔ is " + mode + " mode minus text mode (mean over seeds ± the standard error of the difference); † marks a significant difference: " +
		"a two-sided t-test paired by seed (Welch's where the modes ran different seeds), Holm-corrected over the rows of each metric, at level 0.05. " +
		"Not testable: the differences have no spread over the seeds (or a row has one seed).")
	for j, c := range modeColumns {
		t := counts[j]
		if t.n == 0 {
			continue
		}
		fmt.Fprintf(&b, " %s: higher in %s mode in %d of %d rows, lower in %d, no significant difference in %d", c.header, mode, t.up, t.n, t.down, t.same)
		if t.untestable > 0 {
			fmt.Fprintf(&b, ", not testable in %d", t.untestable)
		}
		fmt.Fprintf(&b, " (mean Δ %+.*f).", c.digits, t.sum/float64(t.n)*c.scale)
	}
	return b.String()
}

// ozerModeMechanisms says which of BFL-P's differences can move which metric. The mode switches them
// all at once, so the table measures their sum; no run separates them one by one.
const ozerModeMechanisms = "How to read it: the mode switches all of BFL-P's differences at once, so each Δ is their sum. " +
	"The clamp at log σ² = −8 with a start at −9 freezes the variational variances at about e⁻⁸ (no gradient below the clamp), " +
	"which should keep the spread near the frozen-variance prediction and make the weights almost deterministic, so ECE and NLL " +
	"would move towards the deterministic rows' (the table says whether they do); the clamped partial sums of EAA and GAA and PPA's ⌊β_k N⌋ samples change only the aggregated " +
	"variances; deterministic biases, the N(0, 1/fan_in) means and PyTorch's default U(±1/√fan_in) initialisation of the deterministic (convolution) layers change the start of training, " +
	"which at this budget can show in accuracy. Both modes use the same metric conventions (ECE over 100 bins, NLL −log(p + 10⁻⁸))."

// ozerInitShift separates the one BFL-P difference that the deterministic rows carry. FED and FEDAVG
// have no variances, so of BFL-P's differences only the initialisation of deterministic layers
// reaches them: PyTorch's default U(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases instead of
// He-normal weights and zero biases (models.CompatBFLP). Their accuracy shift between the modes is
// that initialisation's effect on the deterministic LeNet, beside the variational rows' shift, which
// adds the clamp, the N(0, 1/fan_in) means and the rest. It returns "" unless FED and at least one variational row ran in both modes.
func ozerInitShift(text, code runSet) string {
	shift := func(row string) (modeShift, bool) {
		m := modeShift{text.where("variant", row), code.where("variant", row), colAcc.name}
		return m, m.ok()
	}
	det, ok := shift("FED")
	if !ok {
		return ""
	}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, row := range ozerRows {
		if !strings.HasPrefix(row, "FV") {
			continue
		}
		if m, ok := shift(row); ok {
			lo, hi, n = min(lo, m.delta()), max(hi, m.delta()), n+1
		}
	}
	if n == 0 {
		return ""
	}
	s := colAcc.scale
	se := 0.0 // printed where the test cannot be made: differences without spread
	if r, err := det.test(); err == nil {
		se = r.SE
	}
	return fmt.Sprintf("The deterministic rows have no variances, so of BFL-P's differences only PyTorch's default initialisation "+
		"of deterministic layers (U(±1/√fan_in) weights and biases, where the text mode has He-normal weights and zero biases) reaches them: "+
		"FED's Δ Acc of %+.2f ± %.2f points is that initialisation's effect on the deterministic LeNet at this budget; "+
		"the %d variational rows, which carry every difference, move by %+.2f to %+.2f points.",
		det.delta()*s, se*s, n, lo*s, hi*s)
}
