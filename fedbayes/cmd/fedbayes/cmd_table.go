package main

import (
	"fmt"
	"io"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/stats"
)

func init() {
	register(&command{name: "table", summary: "tabulate results: mean ± standard error over seeds, best in bold (Markdown, LaTeX)", run: runTable})
}

// runTable loads the completed and diverged runs of the results directories and prints the papers'
// table (a diverged run is left out of its cell's mean; a cell whose runs all diverged says so).
func runTable(args []string, stdout io.Writer) error {
	fs := newFlagSet("table", "RESULTS_DIR...", stdout)
	metrics := fs.String("metrics", "accuracy,nll,ece", "comma-separated metric columns; METRIC:higher|lower|none sets the direction of a metric fedbayes does not know")
	rows := fs.String("rows", results.SettingLabel, "comma-separated labels that identify a row (e.g. rule,weighting)")
	cols := fs.String("cols", "", "comma-separated labels that split the columns (e.g. dataset,partition); labels whose values differ within a cell are added")
	format := fs.String("format", "markdown", "output format: markdown or latex")
	out := fs.String("o", "", "write the table to this file (atomically) instead of standard output")
	digits := fs.Int("digits", report.DefaultDigits, "decimals in each cell")
	bold := fs.String("bold", "significant", "bold rule: significant (not significantly worse than the best, where some cell is: two-sided t-test against the best, paired by seed where cells ran the same seeds and Welch's otherwise, Holm-corrected per column; docs/statistics.md), overlap (mean ± SE overlaps the best's, Ozer et al. 2022), best-se (within the best's SE) or none")
	level := fs.Float64("level", stats.DefaultLevel, "significance level of -bold significant")
	clean := fs.Bool("clean", false, "leave out (and name) runs whose binary was built from a modified tree (git_dirty in run.json)")
	order := fs.String("order", "paper", "row order: paper (baselines such as FedAvg first, then rules in the papers' order EAA, GAA, AALV, PPA, ...) or sorted")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: give at least one results directory", errUsage)
	}
	columns, err := report.ParseColumns(*metrics)
	if err != nil {
		return fmt.Errorf("%w: -metrics: %v", errUsage, err)
	}
	rule, err := report.ParseBoldRule(*bold)
	if err != nil {
		return fmt.Errorf("%w: -bold: %v", errUsage, err)
	}
	rowOrder, err := report.ParseRowOrder(*order)
	if err != nil {
		return fmt.Errorf("%w: -order: %v", errUsage, err)
	}
	if *digits < 1 || *digits > 12 {
		return fmt.Errorf("%w: -digits %d not in 1..12", errUsage, *digits)
	}
	if !(*level > 0 && *level < 1) {
		return fmt.Errorf("%w: -level %v not in (0, 1)", errUsage, *level)
	}
	if *format != "markdown" && *format != "latex" {
		return fmt.Errorf("%w: -format %q is not markdown or latex", errUsage, *format)
	}
	// Diverged runs are shown in the table (a cell "diverged", the seeds named in its note).
	runs, diverged, skipped, err := results.LoadFinished(results.LoadOptions{Expect: engine.ExpectedRounds, Clean: *clean}, fs.Args()...)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(notes, "fedbayes table: skipped %s\n", s)
	}
	for _, r := range diverged {
		fmt.Fprintf(notes, "fedbayes table: skipped %s: %s (left out of its cell's mean; the table's note names it)\n", r.Dir, r.Status)
	}
	if len(runs)+len(diverged) == 0 {
		return fmt.Errorf("no completed or diverged runs in %s (%d skipped)", strings.Join(fs.Args(), ", "), len(skipped))
	}
	rowLabels, colLabels := splitList(*rows), splitList(*cols)
	if len(rowLabels) == 0 {
		rowLabels = []string{results.SettingLabel}
	}
	if mixed := report.MixedLabels(append(append([]results.Run{}, runs...), diverged...), append(append([]string{}, rowLabels...), colLabels...)); len(mixed) > 0 {
		fmt.Fprintf(notes, "fedbayes table: columns also split by %s: its values differ between runs of one cell (give -cols to choose the split)\n", strings.Join(mixed, ", "))
		colLabels = append(colLabels, mixed...)
	}
	tab, err := report.NewTable(runs, report.TableSpec{Rows: rowLabels, Cols: colLabels,
		Metrics: columns, Bold: rule, Order: rowOrder, Digits: *digits, Level: *level, Diverged: diverged})
	if err != nil {
		return err
	}
	text := tab.Markdown()
	if *format == "latex" {
		text = tab.LaTeX()
	}
	if *out == "" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	if err := results.WriteFileAtomic(*out, []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows, %d columns, %d runs", *out, len(tab.Rows), len(tab.Columns), len(runs)+len(diverged))
	if len(diverged) > 0 {
		fmt.Fprintf(stdout, " (%d diverged)", len(diverged))
	}
	fmt.Fprintln(stdout)
	return nil
}

// splitList splits a comma-separated list, dropping empty items and spaces.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
