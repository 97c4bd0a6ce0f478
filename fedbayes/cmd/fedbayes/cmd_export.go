package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
)

func init() {
	register(&command{name: "export", summary: "write every round of the runs as one tidy table (CSV or JSON lines) for pandas, R or a spreadsheet", run: runExport})
}

// runExport implements `fedbayes export RESULTS_DIR... [-format csv|jsonl] [-o FILE]`: the completed
// runs, read through the checks `fedbayes table` uses, as one row per (run, round).
func runExport(args []string, stdout io.Writer) error {
	fs := newFlagSet("export", "RESULTS_DIR...", stdout)
	format := fs.String("format", report.ExportCSV, "output format: csv (empty cell for a missing or non-finite value) or jsonl (one JSON object a line, null for those)")
	out := fs.String("o", "", "write to this file (atomically) instead of standard output")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: give at least one results directory", errUsage)
	}
	if *format != report.ExportCSV && *format != report.ExportJSONL {
		return fmt.Errorf("%w: -format %q is not %s or %s", errUsage, *format, report.ExportCSV, report.ExportJSONL)
	}
	runs, skipped, err := results.LoadWith(results.LoadOptions{Expect: engine.ExpectedRounds}, fs.Args()...)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(notes, "fedbayes export: skipped %s\n", s)
	}
	if len(runs) == 0 {
		return fmt.Errorf("no completed runs in %s (%d skipped)", strings.Join(fs.Args(), ", "), len(skipped))
	}
	tab, err := report.NewTidy(runs)
	if err != nil {
		return err
	}
	if *out == "" {
		return tab.Write(stdout, *format)
	}
	var b bytes.Buffer
	if err := tab.Write(&b, *format); err != nil {
		return err
	}
	if err := results.WriteFileAtomic(*out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows (run, round), %d columns, %d runs\n", *out, len(tab.Records), len(tab.Columns), len(runs))
	return nil
}
