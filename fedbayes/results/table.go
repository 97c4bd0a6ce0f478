package results

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// BoldRule decides which cells of a column are bold.
type BoldRule int

const (
	// BoldOverlap bolds the cells whose interval mean ± SE overlaps the interval of the best mean:
	// the "best performing models that overlap within a standard error" of Ozer et al. (2022),
	// Tables 1 and 3. For higher-is-better, mean + SE >= best - SE_best; mirrored for lower.
	BoldOverlap BoldRule = iota
	// BoldWithinBestSE bolds the cells whose mean lies within one standard error of the best
	// mean (the best cell's SE): mean >= best - SE_best for higher-is-better; mirrored for lower.
	BoldWithinBestSE
	// BoldNothing bolds no cell.
	BoldNothing
)

// ParseBoldRule reads "overlap", "best-se" or "none".
func ParseBoldRule(s string) (BoldRule, error) {
	switch s {
	case "overlap":
		return BoldOverlap, nil
	case "best-se":
		return BoldWithinBestSE, nil
	case "none":
		return BoldNothing, nil
	}
	return 0, fmt.Errorf("results: bold rule %q is not one of overlap, best-se, none", s)
}

// DefaultDigits is the number of decimals of table cells when TableSpec.Digits is 0.
const DefaultDigits = 3

// TableSpec describes a table of the papers' format: rows are settings, columns are metrics
// (optionally split by further labels such as dataset and partition), cells are mean ± SE over
// seeds of each run's final value.
type TableSpec struct {
	// Rows are the labels that identify a row (e.g. rule and weighting); empty means "setting".
	Rows []string
	// Cols are labels that split the columns (e.g. dataset); each of their values gets one
	// column per metric. May be empty.
	Cols []string
	// Metrics are the metric columns.
	Metrics []Column
	// Bold is the bolding rule, applied per column among cells with a finite mean.
	Bold BoldRule
	// Digits is the number of decimals (0 means DefaultDigits).
	Digits int
}

// Cell is one table cell.
type Cell struct {
	// Summary is the metric over the seeds of the cell's runs.
	Summary
	// Present is false when no run has the cell's row and column labels (shown as a dash).
	Present bool
	// Bold marks a best cell of its column.
	Bold bool
}

// TableColumn is one column of a table: the values of TableSpec.Cols and a metric.
type TableColumn struct {
	// Key holds the values of TableSpec.Cols.
	Key []string
	// Column is the metric and its direction.
	Column
}

// TableRow is one row of a table.
type TableRow struct {
	// Key holds the values of TableSpec.Rows.
	Key []string
	// Cells are in the order of Table.Columns.
	Cells []Cell
}

// Table is a summarised table, ready to render with Markdown or LaTeX.
type Table struct {
	// Spec is the spec the table was built with (defaults filled in).
	Spec TableSpec
	// Columns and Rows hold the content.
	Columns []TableColumn
	Rows    []TableRow
	// Budgets are the distinct budgets the runs' specs state (Meta.Budget), sorted; Note prints them.
	Budgets []string
}

// NewTable summarises runs into a table. It is an error if there are no runs or metrics, if a
// run lacks a grouping label or the final value of a metric, or if a cell holds a seed twice.
func NewTable(runs []Run, spec TableSpec) (*Table, error) {
	if len(spec.Rows) == 0 {
		spec.Rows = []string{SettingLabel}
	}
	if spec.Digits == 0 {
		spec.Digits = DefaultDigits
	}
	if spec.Digits < 0 || spec.Digits > 12 {
		return nil, fmt.Errorf("results: table digits %d not in 1..12", spec.Digits)
	}
	if len(spec.Metrics) == 0 {
		return nil, fmt.Errorf("results: table without metrics")
	}
	seen := map[string]bool{}
	for _, m := range spec.Metrics {
		if m.Metric == "" || seen[m.Metric] {
			return nil, fmt.Errorf("results: table metric %q is empty or given twice", m.Metric)
		}
		seen[m.Metric] = true
	}
	by := append(append([]string{}, spec.Rows...), spec.Cols...)
	groups, err := GroupRuns(runs, by) // also checks the labels (none twice, no "seed")
	if err != nil {
		return nil, err
	}
	nr := len(spec.Rows)
	t := &Table{Spec: spec, Budgets: budgets(runs)}
	rowIndex, colIndex := map[string]int{}, map[string]int{}
	var rowKeys, colKeys [][]string
	for _, g := range groups { // groups are sorted: row and column keys come out sorted too
		rk, ck := g.Key[:nr], g.Key[nr:]
		if _, ok := rowIndex[strings.Join(rk, "\x00")]; !ok {
			rowIndex[strings.Join(rk, "\x00")] = len(rowKeys)
			rowKeys = append(rowKeys, rk)
		}
		if _, ok := colIndex[strings.Join(ck, "\x00")]; !ok {
			colKeys = append(colKeys, ck)
		}
		colIndex[strings.Join(ck, "\x00")] = -1
	}
	sortKeys(colKeys)
	for i, ck := range colKeys {
		colIndex[strings.Join(ck, "\x00")] = i
		for _, m := range spec.Metrics {
			t.Columns = append(t.Columns, TableColumn{Key: ck, Column: m})
		}
	}
	nm := len(spec.Metrics)
	for _, rk := range rowKeys {
		t.Rows = append(t.Rows, TableRow{Key: rk, Cells: make([]Cell, len(t.Columns))})
	}
	for _, g := range groups {
		r := rowIndex[strings.Join(g.Key[:nr], "\x00")]
		c := colIndex[strings.Join(g.Key[nr:], "\x00")]
		for j, m := range spec.Metrics {
			s, err := g.Summarize(m.Metric)
			if err != nil {
				return nil, err
			}
			t.Rows[r].Cells[c*nm+j] = Cell{Summary: s, Present: true}
		}
	}
	for j, col := range t.Columns {
		t.markBest(j, col.Direction)
	}
	return t, nil
}

// sortKeys sorts keys with lessKey (insertion sort: tables are small).
func sortKeys(keys [][]string) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && lessKey(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// seOrZero treats the undefined SE of a single seed as zero width for bolding.
func seOrZero(se float64) float64 {
	if finite(se) {
		return se
	}
	return 0
}

// markBest sets Bold on the best cells of column j (see BoldRule).
func (t *Table) markBest(j int, d Direction) {
	if d == NoDirection || t.Spec.Bold == BoldNothing {
		return
	}
	sign := 1.0 // compare on sign*mean, higher is better
	if d == LowerIsBetter {
		sign = -1
	}
	best, bestSE, found := 0.0, 0.0, false
	for _, row := range t.Rows {
		c := row.Cells[j]
		if c.Present && finite(c.Mean) && (!found || sign*c.Mean > best) {
			best, bestSE, found = sign*c.Mean, seOrZero(c.SE), true
		}
	}
	if !found {
		return
	}
	for i := range t.Rows {
		c := &t.Rows[i].Cells[j]
		if !c.Present || !finite(c.Mean) {
			continue
		}
		reach := 0.0
		if t.Spec.Bold == BoldOverlap {
			reach = seOrZero(c.SE)
		}
		c.Bold = sign*c.Mean+reach >= best-bestSE
	}
}

// seedRange returns the smallest and largest number of seeds over present cells.
func (t *Table) seedRange() (lo, hi int) {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if c.Present {
				if lo == 0 || c.N < lo {
					lo = c.N
				}
				if c.N > hi {
					hi = c.N
				}
			}
		}
	}
	return lo, hi
}

// Note describes the table in words: seeds per cell and the bolding rule.
func (t *Table) Note() string {
	lo, hi := t.seedRange()
	seeds := fmt.Sprintf("%d seeds", lo)
	if lo == 1 && hi == 1 {
		seeds = "1 seed (no standard error)"
	} else if lo != hi {
		seeds = fmt.Sprintf("%d to %d seeds", lo, hi)
		if lo == 1 {
			seeds += " (no standard error where n = 1)"
		}
	}
	note := "Final-round mean ± standard error (sample sd / sqrt(n)) over " + seeds + " per cell."
	switch t.Spec.Bold {
	case BoldOverlap:
		note += " Bold: the best mean of each column and the cells whose mean ± SE overlaps it."
	case BoldWithinBestSE:
		note += " Bold: cells within one standard error of the best mean of each column."
	}
	switch len(t.Budgets) {
	case 0:
	case 1:
		note += " Budget: " + t.Budgets[0] + "."
	default:
		note += " Budgets: " + strings.Join(t.Budgets, "; ") + "."
	}
	return note
}

// budgets lists the distinct budgets stated by the runs' specs, sorted.
func budgets(runs []Run) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range runs {
		if b := r.Meta.Budget(); b != "" && !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	sort.Strings(out)
	return out
}
