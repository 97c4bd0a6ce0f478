package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"

	"fedbayes.dev/fedbayes/plots"
)

// specFileName is the figure-spec file that `fedbayes figures` looks for in a results directory.
const specFileName = "figures.json"

func init() {
	register(&command{name: "figures", summary: "write the charts of a figure-spec JSON (or results directory) as SVG, PNG and PDF", help: figuresHelp, run: runFigures})
}

const figuresHelp = `Writes the charts of a figure spec as static figures for a paper: NAME.svg (rendered by Node.js),
NAME.png and NAME.pdf (rendered from the SVG by headless Chromium; -no-png skips both), and NAME.txt
with a chart's caption, sized for a two-column paper. Give figure-spec JSON files (docs/plots.md), or
results directories of fedbayes run, which write their ` + specFileName + `; the figures go to a
"figures" folder beside each spec unless -o says otherwise. Node.js and Chromium are found on PATH,
or where ` + plots.NodeEnv + ` and ` + plots.ChromiumEnv + ` point.`

func runFigures(args []string, stdout io.Writer) error {
	fs := newFlagSet("figures", "SPEC.json|RESULTS_DIR ...", stdout)
	out := fs.String("o", "", "output directory (default: a \"figures\" folder next to each spec)")
	scale := fs.Float64("png-scale", 3, "PNG device pixels per CSS pixel (3 is about 300 dpi at column width)")
	noPNG := fs.Bool("no-png", false, "write SVG only, no PNG or PDF (no Chromium needed)")
	page := fs.Bool("html", false, "also write figures.html, an offline interactive page of every chart")
	if err := parseArgs(fs, args, nil); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: give at least one figure-spec JSON file or results directory (holding %s)", errUsage, specFileName)
	}
	if *scale <= 0 {
		return fmt.Errorf("%w: -png-scale %g must be positive", errUsage, *scale)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, arg := range fs.Args() {
		specPath := arg
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			specPath = filepath.Join(arg, specFileName)
		}
		spec, err := plots.ReadSpecFile(specPath)
		if err != nil {
			return withJSONPosition(specPath, err)
		}
		dir := *out
		if dir == "" {
			dir = filepath.Join(filepath.Dir(specPath), "figures")
		}
		pngScale := *scale
		if *noPNG {
			pngScale = -1
		}
		written, err := spec.WriteFigures(ctx, dir, pngScale)
		for _, p := range written {
			fmt.Fprintln(stdout, p)
		}
		if err != nil {
			return err
		}
		if *page {
			charts, err := spec.BuildAll()
			if err != nil {
				return err
			}
			p := filepath.Join(dir, "figures.html")
			if err := plots.WriteHTML(p, "fedbayes figures: "+specPath, charts...); err != nil {
				return err
			}
			fmt.Fprintln(stdout, p)
		}
	}
	return nil
}
