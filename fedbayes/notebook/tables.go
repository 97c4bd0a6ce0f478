package notebook

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"

	"fedbayes.dev/fedbayes/plots"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
	"github.com/janpfeifer/gonb/gonbui"
)

// TableMarkdown is a Markdown table of the runs' final values (report.NewTable): rows and columns
// by the labels rows and cols, one column per metric of the comma list metrics (as `fedbayes table
// -metrics` takes them), mean ± SE over seeds, under a bold title when title is not "". Row labels
// show under their display names (plots.DisplayName), as in the figures' legends.
func TableMarkdown(title string, runs []results.Run, rows, cols []string, metrics string) (string, error) {
	mc, err := report.ParseColumns(metrics)
	if err != nil {
		return "", err
	}
	tab, err := report.NewTable(runs, report.TableSpec{Rows: rows, Cols: cols, Metrics: mc})
	if err != nil {
		return "", err
	}
	// Rows show the names the legends show (plots.DisplayNames: "beta-predbayes" is β-PredBayes),
	// in the order the table chose from the labels themselves.
	for i := range tab.Rows {
		for j, k := range tab.Rows[i].Key {
			tab.Rows[i].Key[j] = plots.DisplayName(k)
		}
	}
	if title == "" {
		return tab.Markdown(), nil
	}
	return fmt.Sprintf("**%s**\n\n%s", title, tab.Markdown()), nil
}

// ShowTable displays TableMarkdown in a GoNB cell; outside a notebook it prints the Markdown.
func ShowTable(title string, runs []results.Run, rows, cols []string, metrics string) error {
	md, err := TableMarkdown(title, runs, rows, cols, metrics)
	if err != nil {
		return err
	}
	if !gonbui.IsNotebook {
		fmt.Println(md)
		return nil
	}
	gonbui.DisplayMarkdown(md)
	gonbui.Sync()
	return gonbui.Error()
}

// MeanSE returns the mean of values and its standard error over them (stats.Summarize; the SE
// is NaN for one value).
func MeanSE(values []float64) (mean, se float64, err error) {
	s, err := stats.Summarize(values)
	return s.Mean, s.SE, err
}

// PM formats a mean ± standard error with the given decimals; an undefined SE (one seed) shows as
// "± —".
func PM(mean, se float64, decimals int) string {
	if math.IsNaN(se) {
		return fmt.Sprintf("%.*f ± —", decimals, mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", decimals, mean, decimals, se)
}

// Over returns f of each x: the per-seed values of one quantity, for MeanSE.
func Over[T any](xs []T, f func(T) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// TextTable is a plain-text table with right-aligned columns, built row by row.
type TextTable struct {
	rows [][]string
}

// NewTextTable starts a table with its header cells.
func NewTextTable(header ...string) *TextTable { return &TextTable{rows: [][]string{header}} }

// Row adds a row of cells.
func (t *TextTable) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the table to w, columns aligned right.
func (t *TextTable) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range t.rows {
		if _, err := fmt.Fprintln(tw, strings.Join(r, "\t")+"\t"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// HTML returns the table as a <pre> block that never wraps its lines (a wide table scrolls
// sideways instead): a notebook's text output wraps long lines, which breaks the columns apart.
func (t *TextTable) HTML() (string, error) {
	var b strings.Builder
	if err := t.Write(&b); err != nil {
		return "", err
	}
	return `<pre style="white-space:pre; overflow-x:auto; margin:4px 0; font-size:12px; line-height:1.35">` +
		html.EscapeString(strings.TrimRight(b.String(), "\n")) + `</pre>`, nil
}

// Print shows the table: in a GoNB cell as HTML (HTML: its lines never wrap), elsewhere as text on
// standard output.
func (t *TextTable) Print() error {
	if !gonbui.IsNotebook {
		return t.Write(os.Stdout)
	}
	return displayHTML(t.HTML())
}
