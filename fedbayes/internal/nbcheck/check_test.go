package main

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/plots"
)

func TestInject(t *testing.T) {
	for _, tc := range []struct{ name, page, before, after string }{
		{"body", "<html><body><p>x</p></body></html>", "<p>x</p>", "</body></html>"},
		{"upper case, last body", "<BODY>a</BODY><!-- </body> -->b</BODY>", "b", "</BODY>"},
		{"no body", "<p>x</p>", "<p>x</p>", ""},
	} {
		got := string(Inject([]byte(tc.page)))
		i := strings.Index(got, measureScript)
		if i < 0 {
			t.Errorf("%s: script not injected", tc.name)
			continue
		}
		if !strings.HasSuffix(got[:i], tc.before) || got[i+len(measureScript):] != tc.after {
			t.Errorf("%s: injected at the wrong place: %q", tc.name, got)
		}
	}
}

func TestParseDump(t *testing.T) {
	dom := `<html><body><div class="fedbayes-chart"></div><pre id="fedbayes-nbcheck" hidden="">` +
		`{"width":1280,"height":2400.5,"charts":[{"id":"fedbayes-toy-0123456789ab","x":10,"y":20.5,"w":720,"h":400}]}</pre></body></html>`
	m, err := parseDump([]byte(dom))
	if err != nil {
		t.Fatal(err)
	}
	if m.Height != 2400.5 || len(m.Charts) != 1 || m.Charts[0].ID != "fedbayes-toy-0123456789ab" || m.Charts[0].Y != 20.5 || m.Charts[0].W != 720 {
		t.Errorf("parseDump = %+v", m)
	}
	if _, err := parseDump([]byte("<html></html>")); err == nil || !strings.Contains(err.Error(), "did not run") {
		t.Errorf("no result: %v", err)
	}
	if _, err := parseDump([]byte(`<pre id="fedbayes-nbcheck">{oops</pre>`)); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestChartName(t *testing.T) {
	for id, want := range map[string]string{
		"fedbayes-aggregation-explorer-00ff12ab34cd": "aggregation-explorer",
		"fedbayes-chart-1":                           "fedbayes-chart-1",
		"fedbayes-toy-0123456789AB":                  "fedbayes-toy-0123456789AB", // not lower-case hex
		"chart 3":                                    "chart 3",
	} {
		if got := ChartName(id); got != want {
			t.Errorf("ChartName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestBackground(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 10, 10))
	grey := color.RGBA{240, 240, 240, 255}
	for y := range 10 {
		for x := range 10 {
			img.Set(x, y, grey)
		}
	}
	for x := range 10 {
		img.Set(x, 5, color.Black) // a line: 10% ink
	}
	bg := Background(img, img.Bounds())
	if bg != grey {
		t.Errorf("Background = %v, want %v", bg, grey)
	}
	if f := plots.InkFraction(img, img.Bounds(), bg); f != 0.1 {
		t.Errorf("ink on grey = %v, want 0.1", f)
	}
}

func TestSummary(t *testing.T) {
	if got := summary(Report{Page: "/x/a.html"}); got != "nbcheck: a.html: no charts on the page (0 checked)" {
		t.Errorf("summary = %q", got)
	}
	got := summary(Report{Page: "a.html", Charts: []ChartInk{{Ink: 0.02}, {Ink: 0.05}}})
	if got != "nbcheck: a.html: all 2 charts drew (ink 2.0% to 5.0% of each chart's area)" {
		t.Errorf("summary = %q", got)
	}
}

func TestRunArgs(t *testing.T) {
	if code := run(nil); code != 2 {
		t.Errorf("no pages: exit %d, want 2", code)
	}
	if code := run([]string{filepath.Join(t.TempDir(), "missing.html")}); code != 1 {
		t.Errorf("missing page: exit %d, want 1", code)
	}
}

// needBrowser skips (or fails under FEDBAYES_REQUIRE_BROWSER=1) without Chromium and ECharts.
func needBrowser(t *testing.T) {
	t.Helper()
	_, errC := plots.FindChromium()
	_, errE := plots.EChartsBundle()
	for _, err := range []error{errC, errE} {
		if err == nil {
			continue
		}
		if os.Getenv("FEDBAYES_REQUIRE_BROWSER") == "1" {
			t.Fatalf("FEDBAYES_REQUIRE_BROWSER=1 but a tool is missing: %v", err)
		}
		t.Skipf("skipping (set FEDBAYES_REQUIRE_BROWSER=1 to fail instead): %v", err)
	}
}

// page writes an HTML page with the ECharts library and the given body parts.
func page(t *testing.T, dir, name string, parts ...string) string {
	t.Helper()
	lib, err := plots.LibraryHTML()
	if err != nil {
		t.Fatal(err)
	}
	body := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body style=\"background:#fafafa\">" +
		lib + strings.Join(parts, "\n") + "</body></html>"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func chartHTML(t *testing.T, name string) string {
	t.Helper()
	c, _, err := plots.ToyRules(name, "", []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 2, Var: 0.25}}, nil, nil, aggregate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := plots.ChartHTML(c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// blank is a chart container that nothing draws into.
const blank = `<div id="fedbayes-empty-0123456789ab" class="fedbayes-chart" style="width:720px;height:400px"></div>`

func TestCheckPages(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	tall := `<div style="height:1500px">text that pushes the next chart below the first window</div>`
	for _, tc := range []struct {
		name     string
		parts    []string
		charts   int
		failures []string // names of the charts that must fail, with a word of the reason
	}{
		{"no charts", []string{"<p>only text</p>"}, 0, nil},
		{"two charts, one below the first window", []string{chartHTML(t, "first"), tall, chartHTML(t, "second")}, 2, nil},
		{"blank chart area", []string{chartHTML(t, "drawn"), blank}, 2, []string{`"empty"`, "blank"}},
		{"hidden chart", []string{`<div style="display:none">` + chartHTML(t, "hidden") + `</div>`}, 1, []string{`"hidden"`, "collapsed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := page(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".html", tc.parts...)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := Check(ctx, path, Options{})
			for _, c := range rep.Charts {
				t.Logf("chart %s: box %v, ink %.4f, problem %q", c.Name, c.Box, c.Ink, c.Problem)
			}
			if len(rep.Charts) != tc.charts {
				t.Errorf("%d charts checked, want %d (%+v)", len(rep.Charts), tc.charts, rep.Charts)
			}
			if len(tc.failures) == 0 {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				for _, c := range rep.Charts {
					if c.Ink < 0.01 {
						t.Errorf("chart %s: ink %v", c.Name, c.Ink)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("Check passed; want a failure naming %v", tc.failures)
			}
			for _, w := range append(tc.failures, filepath.Base(path)) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
			if len(rep.Failed()) != 1 {
				t.Errorf("%d failed charts, want 1: %+v", len(rep.Failed()), rep.Charts)
			}
		})
	}
}

// A check that runs out of time is tried again, attempts times in all, each attempt saying so; one
// that fails for another reason (a blank chart) is not repeated.
func TestCheckRetrying(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	var log strings.Builder
	path := page(t, dir, "slow.html", chartHTML(t, "drawn"))
	_, err := checkRetrying(path, Options{}, time.Millisecond, &log)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("each of %d attempts ran out", attempts)) {
		t.Errorf("a check that never has time: %v", err)
	}
	if n := strings.Count(log.String(), "trying again"); n != attempts-1 {
		t.Errorf("%d retries announced, want %d:\n%s", n, attempts-1, log.String())
	}
	log.Reset()
	blankPage := page(t, dir, "blank.html", blank)
	if _, err := checkRetrying(blankPage, Options{}, 2*time.Minute, &log); err == nil || !strings.Contains(err.Error(), "blank") {
		t.Errorf("a blank chart: %v", err)
	}
	if log.Len() != 0 {
		t.Errorf("a chart failure was retried:\n%s", log.String())
	}
}

// TestStill checks that Still turns every chart's animation off and leaves the rest of the page as it
// was.
func TestStill(t *testing.T) {
	page := []byte(`<div>{"animation":true,"series":[{"animation":false}]}</div><p>animation: true</p>{"animation":true}`)
	want := `<div>{"animation":false,"series":[{"animation":false}]}</div><p>animation: true</p>{"animation":false}`
	if got := string(Still(page)); got != want {
		t.Errorf("Still = %s, want %s", got, want)
	}
}
