package results

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

// exportMetricOrder is the order of the standard metrics in an export; the others follow, sorted.
var exportMetricOrder = []string{Accuracy, NLL, ECE, Brier, MSE, Spread, WeightedAccuracy, WorstAccuracy, Loss}

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

// NewTidy builds the tidy table of runs (as LoadWith returns them). It is an error when a label
// has the name of a fixed column or of a metric, which would give the table two columns of one
// name; a label missing from a run is the empty string.
func NewTidy(runs []Run) (*Tidy, error) {
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
	columns := append([]string{ExportSetting}, labels...)
	columns = append(columns, ExportSeed, ExportRound)
	columns = append(columns, metrics...)
	seen := map[string]bool{}
	for _, c := range columns {
		if seen[c] {
			return nil, fmt.Errorf("results: export: %q is both a label and a metric or fixed column (setting, seed, round); rename the label", c)
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
// decimal form.
func exportCell(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// WriteCSV writes the table as CSV (RFC 4180): a header of the column names, then one record per
// row; a missing or non-finite value is an empty cell, which pandas and R read as NA.
func (t *Tidy) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
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
	return fmt.Errorf("results: export format %q is not %s or %s", format, ExportCSV, ExportJSONL)
}
