package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

// BoldRule decides which cells of a column are bold.
type BoldRule int

const (
	// BoldSignificant bolds the cells of a column that are not significantly worse than its best
	// mean, and only when at least one cell is significantly worse: a bold cell always marks a
	// significant difference. Every pair of cells of a column is compared by a two-sided t-test
	// (stats.Compare): paired by seed when both cells ran the same seeds, Welch's otherwise; the
	// p-values of a column are Holm-corrected together (stats.Holm), and a cell is significantly
	// worse when its comparison with the best is rejected at TableSpec.Level (default
	// stats.DefaultLevel, 0.05). A pair that cannot be tested (one seed, a non-finite value, no spread
	// in the differences) differs in nothing. docs/statistics.md. This is the default.
	BoldSignificant BoldRule = iota
	// BoldOverlap bolds the cells whose interval mean ± SE overlaps the interval of the best mean:
	// the "best performing models that overlap within a standard error" of Ozer et al. (2022),
	// Tables 1 and 3. For higher-is-better, mean + SE >= best - SE_best; mirrored for lower.
	BoldOverlap
	// BoldWithinBestSE bolds the cells whose mean lies within one standard error of the best
	// mean (the best cell's SE): mean >= best - SE_best for higher-is-better; mirrored for lower.
	BoldWithinBestSE
	// BoldNothing bolds no cell.
	BoldNothing
)

// ParseBoldRule reads "significant", "overlap", "best-se" or "none".
func ParseBoldRule(s string) (BoldRule, error) {
	switch s {
	case "significant":
		return BoldSignificant, nil
	case "overlap":
		return BoldOverlap, nil
	case "best-se":
		return BoldWithinBestSE, nil
	case "none":
		return BoldNothing, nil
	}
	return 0, fmt.Errorf("report: bold rule %q is not one of significant, overlap, best-se, none", s)
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
	// Order is the order of the rows (default OrderPaper: baselines, then rules in the papers'
	// order).
	Order RowOrder
	// Digits is the number of decimals (0 means DefaultDigits).
	Digits int
	// Level is the significance level of BoldSignificant (0 means stats.DefaultLevel).
	Level float64
	// Diverged are runs that diverged (results.LoadFinished returns them): no mean holds them, but each is
	// shown: a cell whose runs all diverged reads "diverged" rather than vanishing, and the note
	// names the diverged seeds left out of each cell's mean.
	Diverged []results.Run
}

// Cell is one table cell.
type Cell struct {
	// Summary is the metric over the seeds of the cell's runs.
	stats.Summary
	// Present is false when no run has the cell's row and column labels, or when none of them
	// records the metric (e.g. the learned spread of a deterministic FedAvg row); shown as a dash.
	Present bool
	// Bold marks a best cell of its column.
	Bold bool
	// Sample holds the value of each run of the cell with its seed, for the significance tests.
	Sample stats.Sample
	// Diverged are the seeds of the cell's runs that diverged (TableSpec.Diverged), in increasing
	// order: not in the summary. A cell with no other run is not Present and shows "diverged".
	Diverged []int64
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
	// Health is the posterior health of the row's runs that is worst for a comparison of rules that
	// combine variances: the first flagged one (Health.Flagged) if any, else the first measured one.
	// A flagged row's label carries HealthMark, and Note says why.
	Health Health
}

// HealthMark follows the label of a row whose runs' variances are flagged by their posterior health
// (frozen, held at a clamp, or alike on every client): rules differ there only by their own arithmetic
// on a shared variance, not by how they weigh the clients' different variances.
const HealthMark = "‡"

// Table is a summarised table, ready to render with Markdown or LaTeX.
type Table struct {
	// Spec is the spec the table was built with (defaults filled in).
	Spec TableSpec
	// Columns and Rows hold the content.
	Columns []TableColumn
	Rows    []TableRow
	// Budgets are the distinct budgets the runs' specs state (results.Meta.Budget), sorted; Note prints them.
	Budgets []string
	// Tests counts the comparisons BoldSignificant made, by the test applied (paired or Welch), and
	// Untestable those it could not make; SingleRun says some cell of one run was left unbolded (it
	// cannot be compared); Note names them.
	Tests      map[stats.Test]int
	Untestable int
	SingleRun  bool
}

// NewTable summarises runs into a table. It is an error if there are no runs or metrics, if a
// run lacks a grouping label, if some but not all runs of a cell record a metric in their final
// row, or if a cell holds a seed twice. A cell whose runs all lack the metric shows a dash.
func NewTable(runs []results.Run, spec TableSpec) (*Table, error) {
	if len(spec.Rows) == 0 {
		spec.Rows = []string{results.SettingLabel}
	}
	if spec.Digits == 0 {
		spec.Digits = DefaultDigits
	}
	if spec.Digits < 0 || spec.Digits > 12 {
		return nil, fmt.Errorf("report: table digits %d not in 1..12", spec.Digits)
	}
	if spec.Level == 0 {
		spec.Level = stats.DefaultLevel
	}
	if !(spec.Level > 0 && spec.Level < 1) {
		return nil, fmt.Errorf("report: significance level %v not in (0, 1)", spec.Level)
	}
	if len(spec.Metrics) == 0 {
		return nil, fmt.Errorf("report: table without metrics")
	}
	seen := map[string]bool{}
	for _, m := range spec.Metrics {
		if m.Metric == "" || seen[m.Metric] {
			return nil, fmt.Errorf("report: table metric %q is empty or given twice", m.Metric)
		}
		seen[m.Metric] = true
	}
	by := append(append([]string{}, spec.Rows...), spec.Cols...)
	all := append(append([]results.Run{}, runs...), spec.Diverged...)
	groups, err := GroupRuns(all, by) // also checks the labels (none twice, no "seed")
	if err != nil {
		return nil, err
	}
	nr := len(spec.Rows)
	t := &Table{Spec: spec, Budgets: budgets(runs), Tests: map[stats.Test]int{}}
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
	sort.SliceStable(rowKeys, func(a, b int) bool { return lessRow(spec.Order, rowKeys[a], rowKeys[b]) })
	for i, rk := range rowKeys {
		rowIndex[strings.Join(rk, "\x00")] = i
	}
	for _, rk := range rowKeys {
		t.Rows = append(t.Rows, TableRow{Key: rk, Cells: make([]Cell, len(t.Columns))})
	}
	for _, g := range groups {
		r := rowIndex[strings.Join(g.Key[:nr], "\x00")]
		c := colIndex[strings.Join(g.Key[nr:], "\x00")]
		var diverged []int64
		kept := g
		kept.Runs = nil
		for _, run := range g.Runs {
			if run.Status.State == results.Diverged {
				diverged = append(diverged, run.Meta.Seed)
				continue
			}
			kept.Runs = append(kept.Runs, run)
			t.Rows[r].Health = worseHealth(t.Rows[r].Health, RunHealth(run))
		}
		sort.Slice(diverged, func(a, b int) bool { return diverged[a] < diverged[b] })
		for j, m := range spec.Metrics {
			cell := Cell{Diverged: diverged}
			if len(kept.Runs) > 0 {
				if cell.Summary, cell.Sample, cell.Present, err = cellSummary(kept, m.Metric); err != nil {
					return nil, err
				}
			}
			t.Rows[r].Cells[c*nm+j] = cell
		}
	}
	for _, m := range spec.Metrics {
		if len(runs) > 0 && !t.records(m.Metric) { // with every run diverged, every cell says so
			return nil, fmt.Errorf("report: no run records metric %q in its final row (they record %s)", m.Metric, strings.Join(finalMetrics(runs), ", "))
		}
	}
	for j, col := range t.Columns {
		t.markBest(j, col.Direction)
	}
	return t, nil
}

// worseHealth is the one of two runs' posterior health that matters more to a table: a flagged one
// over an unflagged one, a measured one over an unmeasured or empty one; a tie keeps a.
func worseHealth(a, b Health) Health {
	rank := func(h Health) int {
		switch {
		case h.Flagged():
			return 3
		case h.State == HealthLearned:
			return 2
		case h.State == HealthUnmeasured:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// cellSummary summarises the final value of metric over the group's runs and returns the values
// with their seeds; present is false when none of them records it. Some recording it and some not
// is an error naming a run without it.
func cellSummary(g Group, metric string) (s stats.Summary, sample stats.Sample, present bool, err error) {
	var lacking []results.Run
	for _, r := range g.Runs {
		if len(r.Rows) == 0 {
			_, err := r.Final(metric)
			return stats.Summary{}, stats.Sample{}, false, err
		}
		if !hasMetric(r.Rows[len(r.Rows)-1], metric) {
			lacking = append(lacking, r)
		}
	}
	switch len(lacking) {
	case len(g.Runs):
		return stats.Summary{}, stats.Sample{}, false, nil
	case 0:
		if sample, err = g.Sample(metric); err != nil {
			return stats.Summary{}, stats.Sample{}, false, err
		}
		s, err = stats.Summarize(sample.Values)
		return s, sample, err == nil, err
	}
	_, err = lacking[0].Final(metric)
	return stats.Summary{}, stats.Sample{}, false, fmt.Errorf("report: group %s: %d of %d runs record metric %q, not all: %w", g.Name(), len(g.Runs)-len(lacking), len(g.Runs), metric, err)
}

// records reports whether some cell of a column of metric is present.
func (t *Table) records(metric string) bool {
	for j, col := range t.Columns {
		if col.Metric != metric {
			continue
		}
		for _, r := range t.Rows {
			if r.Cells[j].Present {
				return true
			}
		}
	}
	return false
}

// finalMetrics lists the metric names of the runs' final rows, sorted.
func finalMetrics(runs []results.Run) []string {
	seen := map[string]bool{}
	var names []string
	for _, r := range runs {
		if n := len(r.Rows); n > 0 {
			for _, k := range r.Rows[n-1].MetricNames() {
				if !seen[k] {
					seen[k] = true
					names = append(names, k)
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

func hasMetric(r results.Row, metric string) bool {
	_, ok := r.Metrics[metric]
	return ok
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
func (t *Table) markBest(j int, d results.Direction) {
	if d == results.NoDirection || t.Spec.Bold == BoldNothing {
		return
	}
	sign := 1.0 // compare on sign*mean, higher is better
	if d == results.LowerIsBetter {
		sign = -1
	}
	var best *Cell
	for i := range t.Rows {
		c := &t.Rows[i].Cells[j]
		if c.Present && finite(c.Mean) && (best == nil || sign*c.Mean > sign*best.Mean) {
			best = c
		}
	}
	if best == nil {
		return
	}
	if t.Spec.Bold == BoldSignificant {
		t.markSignificant(j, sign, best)
		return
	}
	bestMean, bestSE := sign*best.Mean, seOrZero(best.SE)
	for i := range t.Rows {
		c := &t.Rows[i].Cells[j]
		if !c.Present || !finite(c.Mean) {
			continue
		}
		reach := 0.0
		if t.Spec.Bold == BoldOverlap {
			reach = seOrZero(c.SE)
		}
		c.Bold = sign*c.Mean+reach >= bestMean-bestSE
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
	if lo == 0 && hi == 0 {
		note = "Every run diverged: no cell has a mean."
	} else if t.divergedNote() != "" {
		note = "Final-round mean ± standard error (sample sd / sqrt(n)) over " + seeds + " per cell, diverged seeds left out."
	}
	if t.hasDash() {
		note += " —: no run, or the runs do not record the metric."
	}
	if d := t.divergedNote(); d != "" {
		note += " " + d
	}
	switch t.Spec.Bold {
	case BoldSignificant:
		note += " " + t.significanceNote()
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
	if h := t.healthNote(); h != "" {
		note += " " + h
	}
	return note
}

// hasDash reports whether some cell shows a dash: not present, and no diverged run.
func (t *Table) hasDash() bool {
	for _, r := range t.Rows {
		for _, c := range r.Cells {
			if !c.Present && len(c.Diverged) == 0 {
				return true
			}
		}
	}
	return false
}

// budgets lists the distinct budgets stated by the runs' specs, sorted, each with the seeds the
// table holds (budgetAsRun): a spec states the seeds it lists, but a sweep run in part (fedbayes run
// -task-index, a Slurm array still running, a diverged seed) leaves fewer in the table.
func budgets(runs []results.Run) []string {
	seeds := map[string]map[string]map[int64]bool{} // budget -> setting -> seeds
	for _, r := range runs {
		b := r.Meta.Budget()
		if b == "" {
			continue
		}
		if seeds[b] == nil {
			seeds[b] = map[string]map[int64]bool{}
		}
		if seeds[b][r.Meta.Setting] == nil {
			seeds[b][r.Meta.Setting] = map[int64]bool{}
		}
		seeds[b][r.Meta.Setting][r.Meta.Seed] = true
	}
	out := make([]string, 0, len(seeds))
	for b, bySetting := range seeds {
		lo, hi := -1, 0
		for _, ss := range bySetting {
			if lo < 0 || len(ss) < lo {
				lo = len(ss)
			}
			hi = max(hi, len(ss))
		}
		out = append(out, budgetAsRun(b, lo, hi))
	}
	sort.Strings(out)
	return out
}

// budgetSeeds matches the seed count that ends a budget sentence (engine.Budget.String).
var budgetSeeds = regexp.MustCompile(`(\d+) seeds?$`)

// budgetAsRun adds to a budget sentence that ends with "N seeds" the seeds per setting that the
// table holds, lo to hi, when some setting has fewer than N: "5 seeds (1 in this table)", "3 seeds (1
// to 3 per setting in this table)". Any other sentence is returned as it is.
func budgetAsRun(b string, lo, hi int) string {
	m := budgetSeeds.FindStringSubmatch(b)
	if m == nil {
		return b
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || lo >= n {
		return b
	}
	if lo == hi {
		return fmt.Sprintf("%s (%d in this table)", b, lo)
	}
	return fmt.Sprintf("%s (%d to %d per setting in this table)", b, lo, hi)
}

// DivergedText is what a cell whose runs all diverged shows.
const DivergedText = "diverged"

// divergedNote names, for each row (and column labels) whose runs diverged, the seeds left out of
// its means: "Left out of the means: eaa: seed 3 diverged; fedavg: every run diverged (seeds 1, 2)."
// ("" when none). The seed counts of Note count the seeds in the means.
func (t *Table) divergedNote() string {
	var parts []string
	nm := len(t.Spec.Metrics)
	for _, row := range t.Rows {
		for c := 0; c*nm < len(row.Cells); c++ {
			cell := row.Cells[c*nm]
			if len(cell.Diverged) == 0 {
				continue
			}
			name := strings.Join(append(append([]string{}, row.Key...), t.Columns[c*nm].Key...), " ")
			seeds := make([]string, len(cell.Diverged))
			for i, s := range cell.Diverged {
				seeds[i] = strconv.FormatInt(s, 10)
			}
			word := "seed"
			if len(seeds) > 1 {
				word = "seeds"
			}
			what := fmt.Sprintf("%s %s diverged", word, strings.Join(seeds, ", "))
			if !t.cellPresent(row, c) {
				what = fmt.Sprintf("every run diverged (%s %s)", word, strings.Join(seeds, ", "))
			}
			parts = append(parts, name+": "+what)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Left out of the means: " + strings.Join(parts, "; ") + "."
}

// cellPresent reports whether some metric cell of row in column-label group c is present.
func (t *Table) cellPresent(row TableRow, c int) bool {
	nm := len(t.Spec.Metrics)
	for j := 0; j < nm; j++ {
		if row.Cells[c*nm+j].Present {
			return true
		}
	}
	return false
}
