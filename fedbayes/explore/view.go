package explore

import (
	"fmt"
	"html"
	"math"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/plots"
)

// ChartName is the name of the explorer's chart (plots.Chart.Name).
const ChartName = "aggregation-explorer"

// Row is one rule's aggregate of the explorer's clients.
type Row struct {
	// Rule is the aggregation rule.
	Rule aggregate.Rule
	// Mean and Var are the aggregated Gaussian (Var 0 for FedAvg, a point mass).
	Mean, Var float64
	// Spread is the aggregate's standard deviation divided by the weighted mean of the clients'
	// standard deviations, sum_k w_k s_k (the Wasserstein barycenter's, Jamoussi et al., Eq. 9):
	// above 1 the rule inflates the spread of the clients, below 1 it shrinks it (the "degree of
	// spread" of Ozer et al. (2022), Sec. 5 and Table 4).
	Spread float64
}

// View is what the explorer shows for a State.
type View struct {
	// Chart draws the clients (dashed), the exact mixture (dotted; every rule or LP only) and the
	// drawn rules' aggregates.
	Chart *plots.Chart
	// Weights are the normalised client weights.
	Weights []float64
	// Rows holds the drawn rules in RuleChoices order; with every rule, FedAvg is appended.
	Rows []Row
	// Table is an HTML fragment with the clients and the rows, numerically.
	Table string
}

// Render computes every drawn rule's aggregate with aggregate.Scalar (float64) and builds the chart
// and the table. It fails on an invalid state.
func Render(s State) (View, error) {
	if err := s.Validate(); err != nil {
		return View{}, err
	}
	w, _ := s.NormalizedWeights()
	opt := aggregate.Options{Previous: s.Previous, Seed: s.Seed, PopulationSize: DefaultPopulationSize}
	rules := []aggregate.Rule{s.Rule}
	if s.Rule == "" {
		rules = append(RuleChoices(s)[1:], aggregate.FedAvg)
	}
	meanSD := 0.0
	for k, c := range s.Clients {
		meanSD += w[k] * math.Sqrt(c.Var)
	}
	v := View{Weights: w}
	toy := plots.Toy{Title: chartTitle(s), Weights: w, Mixture: s.Rule == "" || s.Rule == aggregate.LP}
	for k, c := range s.Clients {
		toy.Clients = append(toy.Clients, plots.Gaussian1D{Mean: c.Mean, Var: c.Var})
		toy.ClientNames = append(toy.ClientNames, fmt.Sprintf("client %d", k+1))
	}
	for _, r := range rules {
		g, err := aggregate.Scalar(r, s.Clients, w, opt)
		if err != nil {
			return View{}, fmt.Errorf("explore: rule %s: %w", r, err)
		}
		v.Rows = append(v.Rows, Row{Rule: r, Mean: g.Mean, Var: g.Var, Spread: math.Sqrt(g.Var) / meanSD})
		if g.Var > 0 {
			toy.Aggregates = append(toy.Aggregates, plots.NamedGaussian{Name: string(r), Mean: g.Mean, Var: g.Var})
		}
	}
	c, err := plots.ToyAggregation(ChartName, toy)
	if err != nil {
		return View{}, fmt.Errorf("explore: %w", err)
	}
	v.Chart = c
	v.Table = tableHTML(s, v)
	return v, nil
}

func chartTitle(s State) string {
	rule := "every rule"
	if s.Rule != "" {
		rule = string(s.Rule)
	}
	return fmt.Sprintf("%d clients, %s", len(s.Clients), rule)
}

// num formats a number for the table: 4 significant digits.
func num(x float64) string { return fmt.Sprintf("%.4g", x) }

const (
	tableStyle = `border-collapse:collapse;font:13px sans-serif;margin:0 24px 8px 0;vertical-align:top`
	cellStyle  = `padding:2px 8px;border-bottom:1px solid #ddd;text-align:right`
	headStyle  = `padding:2px 8px;border-bottom:2px solid #888;text-align:right`
)

func tableHTML(s State, v View) string {
	var b strings.Builder
	row := func(style string, cells ...string) {
		b.WriteString("<tr>")
		for _, c := range cells {
			fmt.Fprintf(&b, `<td style="%s">%s</td>`, style, c)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString(`<div class="fedbayes-explorer-table" style="display:flex;flex-wrap:wrap;align-items:flex-start">` + "\n")
	fmt.Fprintf(&b, `<table style="%s"><caption style="text-align:left;font-weight:bold">clients</caption>`+"\n", tableStyle)
	row(headStyle, "client", "mean μ", "variance σ²", "σ", "weight w")
	for k, c := range s.Clients {
		row(cellStyle, fmt.Sprint(k+1), num(c.Mean), num(c.Var), num(math.Sqrt(c.Var)), num(v.Weights[k]))
	}
	if s.Previous != nil {
		row(cellStyle, "previous global", num(s.Previous.Mean), num(s.Previous.Var), num(math.Sqrt(s.Previous.Var)), "")
	}
	b.WriteString("</table>\n")
	fmt.Fprintf(&b, `<table style="%s"><caption style="text-align:left;font-weight:bold">aggregated</caption>`+"\n", tableStyle)
	row(headStyle, "rule", "mean", "variance", "σ", "σ / Σ w σ<sub>k</sub>")
	for _, r := range v.Rows {
		if r.Var == 0 {
			row(cellStyle, html.EscapeString(string(r.Rule)), num(r.Mean), "0 (point mass)", "0", "0")
			continue
		}
		row(cellStyle, html.EscapeString(string(r.Rule)), num(r.Mean), num(r.Var), num(math.Sqrt(r.Var)), num(r.Spread))
	}
	b.WriteString("</table>\n</div>\n")
	return b.String()
}

// ErrorHTML is the table shown instead of the numbers when the controls give no valid state (all
// weights 0, for example).
func ErrorHTML(err error) string {
	return `<div class="fedbayes-explorer-table" style="font:13px sans-serif;color:#b00020">` + html.EscapeString(err.Error()) + "</div>\n"
}
