package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"fedbayes.dev/fedbayes/results"
)

// Export formats: ExportCSV writes a header line and one comma-separated record per row;
// ExportJSONL writes one JSON object per row, keys in the column order.
const (
	ExportCSV   = "csv"
	ExportJSONL = "jsonl"
)

// Fixed columns of an export, before the setting's labels and the metrics.
const (
	// ExportSetting is the column holding the run's setting name.
	ExportSetting = "setting"
	// ExportSeed is the column holding the run's seed.
	ExportSeed = "seed"
	// ExportRound is the column holding the row's round.
	ExportRound = "round"
)

// exportMetricOrder is the order of the standard metrics in an export (results.Metric.Export); the
// others follow, sorted.
var exportMetricOrder = results.RankedMetrics(func(m results.Metric) int { return m.Export })

// Tidy is runs as one tidy table: one record per (run, round), in the order of the runs and then
// of the rounds, with the columns setting, the setting's labels (sorted by name), seed, round and
// every metric any row records (the standard ones first, in a fixed order, then the others sorted
// by name). A record's values are strings for the setting and labels, int64 for seed and round,
// and float64 for a metric; a metric the row lacks, and a non-finite one (a diverging NLL), is nil.
type Tidy struct {
	// Columns are the column names, in order.
	Columns []string
	// Records are the rows of the table; each has one value per column.
	Records [][]any
}

// ExportLabelPrefix is put before a label's column name where the label has the name of a fixed
// column or of a metric: a learning-rate sweep's label lr, beside the metric lr, is the column
// label.lr.
const ExportLabelPrefix = "label."

// NewTidy builds the tidy table of runs (as results.LoadWith returns them). A label with the name of a fixed
// column or of a metric is the column ExportLabelPrefix + its name (label.lr); it is an error only
// where that name is taken too. A label missing from a run is the empty string.
func NewTidy(runs []results.Run) (*Tidy, error) {
	labelSet := map[string]bool{}
	metricSet := map[string]bool{}
	rows := 0
	for _, r := range runs {
		for k := range r.Meta.Labels {
			labelSet[k] = true
		}
		for _, row := range r.Rows {
			for k := range row.Metrics {
				metricSet[k] = true
			}
		}
		rows += len(r.Rows)
	}
	labels := slices.Sorted(maps.Keys(labelSet))
	var metrics []string
	for _, m := range exportMetricOrder {
		if metricSet[m] {
			metrics = append(metrics, m)
			delete(metricSet, m)
		}
	}
	metrics = append(metrics, slices.Sorted(maps.Keys(metricSet))...)
	taken := map[string]bool{ExportSetting: true, ExportSeed: true, ExportRound: true}
	for _, m := range metrics {
		taken[m] = true
	}
	labelColumns := make([]string, len(labels))
	for i, l := range labels {
		labelColumns[i] = l
		if taken[l] {
			labelColumns[i] = ExportLabelPrefix + l
		}
	}
	columns := append([]string{ExportSetting}, labelColumns...)
	columns = append(columns, ExportSeed, ExportRound)
	columns = append(columns, metrics...)
	seen := map[string]bool{}
	for _, c := range columns {
		if seen[c] {
			return nil, fmt.Errorf("report: export: two columns are named %q (a label %s and another label or a metric); rename one", c, c)
		}
		seen[c] = true
	}
	t := &Tidy{Columns: columns, Records: make([][]any, 0, rows)}
	for _, r := range runs {
		for _, row := range r.Rows {
			rec := make([]any, 0, len(columns))
			rec = append(rec, r.Meta.Setting)
			for _, l := range labels {
				rec = append(rec, r.Meta.Labels[l])
			}
			rec = append(rec, r.Meta.Seed, int64(row.Round))
			for _, m := range metrics {
				v, ok := row.Metrics[m]
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					rec = append(rec, nil)
					continue
				}
				rec = append(rec, v)
			}
			t.Records = append(t.Records, rec)
		}
	}
	return t, nil
}

// exportCell formats one value for CSV: nil is the empty cell, a float its shortest exact
// decimal form, a string as defused by csvText.
func exportCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return csvText(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// csvText returns s as a CSV cell that a spreadsheet shows as text, never runs as a formula: a
// cell that starts with '=', '@', a tab or a carriage return, or with '+' or '-' and is not a number,
// gets a leading apostrophe (OWASP, "CSV Injection"); any other text, and a number such as "-0.5",
// is as it is.
func csvText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '@', '\t', '\r':
		return "'" + s
	case '+', '-':
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "'" + s
		}
	}
	return s
}

// WriteCSV writes the table as CSV (RFC 4180): a header of the column names, then one record per
// row; a missing or non-finite value is an empty cell, which pandas and R read as NA. Text cells
// and column names that a spreadsheet would read as a formula are defused (csvText).
func (t *Tidy) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		header[i] = csvText(c)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	cells := make([]string, len(t.Columns))
	for _, rec := range t.Records {
		for i, v := range rec {
			cells[i] = exportCell(v)
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONL writes the table as JSON lines: one object per row with the columns as keys, in the
// column order; a missing or non-finite value is null.
func (t *Tidy) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	keys := make([][]byte, len(t.Columns))
	for i, c := range t.Columns {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		keys[i] = b
	}
	for _, rec := range t.Records {
		bw.WriteByte('{')
		for i, v := range rec {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.Write(keys[i])
			bw.WriteByte(':')
			b, err := json.Marshal(v) // nil is null; floats are finite here
			if err != nil {
				return err
			}
			bw.Write(b)
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}

// Write writes the table in format (ExportCSV or ExportJSONL).
func (t *Tidy) Write(w io.Writer, format string) error {
	switch format {
	case ExportCSV:
		return t.WriteCSV(w)
	case ExportJSONL:
		return t.WriteJSONL(w)
	}
	return fmt.Errorf("report: export format %q is not %s or %s", format, ExportCSV, ExportJSONL)
}
