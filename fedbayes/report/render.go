package report

import (
	"math"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// formatNumber formats a cell number with digits decimals; non-finite values as NaN, inf, -inf.
func formatNumber(x float64, digits int) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'f', digits, 64)
}

// cellText returns the mean and the standard error (empty when undefined) of a cell.
func cellText(c Cell, digits int) (mean, se string) {
	mean = formatNumber(c.Mean, digits)
	if c.N > 1 {
		se = formatNumber(c.SE, digits)
	}
	return mean, se
}

// headerName is a column's header: the values of its column labels, then the metric.
func headerName(col TableColumn) string {
	return strings.Join(append(append([]string{}, col.Key...), col.Metric), " ")
}

// rowLabels is a row's key as printed: the last label followed by HealthMark when the row's posterior
// health is flagged.
func rowLabels(row TableRow) []string {
	labels := append([]string{}, row.Key...)
	if row.Health.Flagged() && len(labels) > 0 {
		labels[len(labels)-1] += " " + HealthMark
	}
	return labels
}

// nbsp is the no-break space that joins "mean ± SE" in Markdown cells, so that a narrow column
// never breaks a cell into "0.904 ±" and "0.004".
const nbsp = "\u00a0"

var markdownEscaper = strings.NewReplacer(`\`, `\\`, `|`, `\|`, `*`, `\*`, `_`, `\_`, "`", "\\`", `<`, `&lt;`, `>`, `&gt;`)

// Markdown renders the table as a GitHub-flavoured Markdown table followed by Note in italics.
// Best cells are in **bold**; a cell with no runs shows "—". A cell's "mean ± SE" is joined by
// no-break spaces (U+00A0), so it never wraps.
func (t *Table) Markdown() string {
	var b strings.Builder
	arrows := map[results.Direction]string{results.HigherIsBetter: " ↑", results.LowerIsBetter: " ↓"}
	head := make([]string, 0, len(t.Spec.Rows)+len(t.Columns))
	for _, r := range t.Spec.Rows {
		head = append(head, markdownEscaper.Replace(r))
	}
	for _, c := range t.Columns {
		head = append(head, markdownEscaper.Replace(headerName(c))+arrows[c.Direction])
	}
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for i := range head {
		if i < len(t.Spec.Rows) {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		cells := make([]string, 0, len(head))
		for _, k := range rowLabels(row) {
			cells = append(cells, markdownEscaper.Replace(k))
		}
		for _, c := range row.Cells {
			if !c.Present {
				cells = append(cells, dashOr(c, "—"))
				continue
			}
			mean, se := cellText(c, t.Spec.Digits)
			s := mean
			if se != "" {
				s += nbsp + "±" + nbsp + se
			}
			if c.Bold {
				s = "**" + s + "**"
			}
			cells = append(cells, s)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n_" + markdownEscaper.Replace(t.Note()) + "_\n")
	return b.String()
}

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`,
	`_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)

// LaTeX renders the table as a booktabs tabular (needs \usepackage{booktabs}), preceded by Note as
// a comment. Column labels become header rows with \multicolumn spans and \cmidrule; best cells
// are \textbf; a cell with no runs shows "--". A cell's "mean $\pm$ SE" is joined by ties (~), so
// it never breaks even in a paragraph column.
func (t *Table) LaTeX() string {
	var b strings.Builder
	nr := len(t.Spec.Rows)
	b.WriteString("% " + t.Note() + "\n")
	b.WriteString("\\begin{tabular}{" + strings.Repeat("l", nr) + strings.Repeat("c", len(t.Columns)) + "}\n\\toprule\n")
	for level := range t.Spec.Cols {
		var cells, rules []string
		for i := 0; i < nr; i++ {
			cells = append(cells, "")
		}
		for start := 0; start < len(t.Columns); {
			end := start + 1
			for end < len(t.Columns) && samePrefix(t.Columns[start].Key, t.Columns[end].Key, level+1) {
				end++
			}
			label := latexEscaper.Replace(t.Columns[start].Key[level])
			if end-start > 1 {
				label = "\\multicolumn{" + strconv.Itoa(end-start) + "}{c}{" + label + "}"
			}
			cells = append(cells, label)
			rules = append(rules, "\\cmidrule(lr){"+strconv.Itoa(nr+start+1)+"-"+strconv.Itoa(nr+end)+"}")
			start = end
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n" + strings.Join(rules, " ") + "\n")
	}
	arrows := map[results.Direction]string{results.HigherIsBetter: " $\\uparrow$", results.LowerIsBetter: " $\\downarrow$"}
	head := make([]string, 0, nr+len(t.Columns))
	for _, r := range t.Spec.Rows {
		head = append(head, latexEscaper.Replace(r))
	}
	for _, c := range t.Columns {
		head = append(head, latexEscaper.Replace(c.Metric)+arrows[c.Direction])
	}
	b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
	for _, row := range t.Rows {
		cells := make([]string, 0, len(head))
		for _, k := range rowLabels(row) {
			cells = append(cells, latexEscaper.Replace(k))
		}
		for _, c := range row.Cells {
			if !c.Present {
				cells = append(cells, dashOr(c, "--"))
				continue
			}
			mean, se := cellText(c, t.Spec.Digits)
			if c.Bold {
				mean = "\\textbf{" + mean + "}"
				if se != "" {
					se = "\\textbf{" + se + "}"
				}
			}
			s := mean
			if se != "" {
				s += "~$\\pm$~" + se
			}
			cells = append(cells, s)
		}
		b.WriteString(strings.Join(cells, " & ") + " \\\\\n")
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	return b.String()
}

// samePrefix reports whether a and b agree on their first n values.
func samePrefix(a, b []string, n int) bool {
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dashOr is what a cell that is not present shows: DivergedText when its runs diverged, else dash.
func dashOr(c Cell, dash string) string {
	if len(c.Diverged) > 0 {
		return DivergedText
	}
	return dash
}
