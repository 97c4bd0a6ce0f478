package reproduce

import (
	"fmt"
	"math"
	"strings"
)

// modeShift is one row's metric in the two modes of a preset: the paper's text and the authors'
// code (model.compat "bfl-p" for Ozer et al., "ba-bfl" for Jamoussi et al.).
type modeShift struct {
	text, code stat
}

// delta is the code mode's mean minus the text mode's.
func (m modeShift) delta() float64 { return m.code.Mean - m.text.Mean }

// se is the combined standard error of the difference.
func (m modeShift) se() float64 { return math.Hypot(m.text.se(), m.code.se()) }

// significant reports whether the modes differ by more than twice their combined standard error,
// the report's verdict rule.
func (m modeShift) significant() bool {
	return below(m.text, m.code) || below(m.code, m.text)
}

// modeColumns are the metrics compared between the two modes.
var modeColumns = []metricCol{colAcc, colECE, colNLL, colSpread}

// modeComparison compares the same rows of a setting run in the paper-text mode and in the mode of
// the authors' code, named mode (issue 17: "say what each difference does to accuracy, ECE, NLL and
// spread"). It returns a Markdown table (per row and metric: the code mode's mean ± SE minus the
// text's, marked † beyond 2 combined standard errors) and one sentence per metric counting the rows
// that moved up, down or stayed within the noise. Rows missing in either mode are left out; "" when
// none is in both.
func modeComparison(text, code runSet, rows []string, mode string) string {
	head := []string{"row", "seeds (text / " + mode + ")"}
	for _, c := range modeColumns {
		head = append(head, "Δ "+c.header)
	}
	var b strings.Builder
	b.WriteString(tableHeader(head...))
	type tally struct {
		up, down, same, n int
		sum               float64
	}
	counts := make([]tally, len(modeColumns))
	shown := 0
	for _, row := range rows {
		t, p := text.where("variant", row), code.where("variant", row)
		if len(t) == 0 || len(p) == 0 {
			continue
		}
		shown++
		fmt.Fprintf(&b, "| %s | %d / %d |", row, len(t), len(p))
		for i, c := range modeColumns {
			m := modeShift{t.summary(c.name), p.summary(c.name)}
			if !m.text.ok() || !m.code.ok() {
				b.WriteString(" – |")
				continue
			}
			mark := ""
			switch {
			case !m.significant():
				counts[i].same++
			case m.delta() > 0:
				counts[i].up++
				mark = " †"
			default:
				counts[i].down++
				mark = " †"
			}
			counts[i].n++
			counts[i].sum += m.delta()
			fmt.Fprintf(&b, " %+.*f ± %.*f%s |", c.digits, m.delta()*c.scale, c.digits, m.se()*c.scale, mark)
		}
		b.WriteString("\n")
	}
	if shown == 0 {
		return ""
	}
	b.WriteString("\nΔ is " + mode + " mode minus text mode (mean over seeds ± combined standard error); † marks a gap beyond 2 combined standard errors.")
	for i, c := range modeColumns {
		t := counts[i]
		if t.n == 0 {
			continue
		}
		fmt.Fprintf(&b, " %s: higher in %s mode in %d of %d rows, lower in %d, within the noise in %d (mean Δ %+.*f).",
			c.header, mode, t.up, t.n, t.down, t.same, c.digits, t.sum/float64(t.n)*c.scale)
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
		m := modeShift{text.where("variant", row).summary(colAcc.name), code.where("variant", row).summary(colAcc.name)}
		return m, m.text.ok() && m.code.ok()
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
	return fmt.Sprintf("The deterministic rows have no variances, so of BFL-P's differences only PyTorch's default initialisation "+
		"of deterministic layers (U(±1/√fan_in) weights and biases, where the text mode has He-normal weights and zero biases) reaches them: "+
		"FED's Δ Acc of %+.2f ± %.2f points is that initialisation's effect on the deterministic LeNet at this budget; "+
		"the %d variational rows, which carry every difference, move by %+.2f to %+.2f points.",
		det.delta()*s, det.se()*s, n, lo*s, hi*s)
}
