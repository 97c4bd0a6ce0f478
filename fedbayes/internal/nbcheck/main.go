// Command nbcheck checks that every chart of executed notebooks, exported to HTML, drew: it opens
// each page in headless Chromium, finds every chart container (<div class="fedbayes-chart">,
// from fedbayes/plots), takes a screenshot at the same window size and requires ink in each
// container's box. kernels/run-notebooks runs it on each export.
//
//	go run ./fedbayes/internal/nbcheck [-min-ink 0.01] [-width 1280] [-budget 5000] [-png] PAGE.html...
//
// It prints one line per page with the number of charts checked, and exits 1 naming the page and
// every chart that did not draw. With -png the screenshot is kept beside each page as
// PAGE.nbcheck.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("nbcheck", flag.ContinueOnError)
	var opt Options
	fs.Float64Var(&opt.MinInk, "min-ink", 0.01, "fraction of a chart's box that must be drawn")
	fs.IntVar(&opt.Width, "width", 1280, "browser window width, CSS pixels")
	fs.IntVar(&opt.MaxHeight, "max-height", 20000, "largest browser window height, CSS pixels")
	fs.IntVar(&opt.BudgetMS, "budget", 5000, "virtual-time budget per page load, milliseconds")
	keep := fs.Bool("png", false, "keep each screenshot beside its page as PAGE.nbcheck.png")
	timeout := fs.Duration("timeout", 2*time.Minute, "time limit per attempt at a page (a page whose check runs out of time is tried again, "+fmt.Sprint(attempts)+" times in all)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: nbcheck [flags] PAGE.html...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	status := 0
	for _, page := range fs.Args() {
		o := opt
		if *keep {
			o.Screenshot = strings.TrimSuffix(page, filepath.Ext(page)) + ".nbcheck.png"
		}
		rep, err := checkRetrying(page, o, *timeout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			status = 1
			continue
		}
		fmt.Println(summary(rep))
	}
	return status
}

// summary is the line printed for a page that passed.
func summary(rep Report) string {
	name := filepath.Base(rep.Page)
	if len(rep.Charts) == 0 {
		return fmt.Sprintf("nbcheck: %s: no charts on the page (0 checked)", name)
	}
	lo, hi := 1.0, 0.0
	for _, c := range rep.Charts {
		lo, hi = min(lo, c.Ink), max(hi, c.Ink)
	}
	return fmt.Sprintf("nbcheck: %s: all %d charts drew (ink %.1f%% to %.1f%% of each chart's area)", name, len(rep.Charts), 100*lo, 100*hi)
}

// attempts is how many times checkRetrying tries a page whose check ran out of time.
const attempts = 3

// checkRetrying checks page with a time limit per attempt, and tries again when an attempt runs out
// of time: headless Chromium now and then hangs on a page it renders in seconds otherwise (seen
// once in about twenty runs of make test, on a loaded machine), and a hang says nothing about the
// charts. A check that fails for any other reason is not repeated.
func checkRetrying(page string, o Options, timeout time.Duration, log io.Writer) (Report, error) {
	for i := 1; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		rep, err := Check(ctx, page, o)
		timedOut := ctx.Err() == context.DeadlineExceeded
		cancel()
		if err == nil || !timedOut || i == attempts {
			if err != nil && timedOut {
				err = fmt.Errorf("%w (each of %d attempts ran out of its %v)", err, attempts, timeout)
			}
			return rep, err
		}
		fmt.Fprintf(log, "nbcheck: %s: headless Chromium did not finish within %v (attempt %d of %d); trying again\n", page, timeout, i, attempts)
	}
}
