package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"fedbayes.dev/fedbayes/plots"
)

// Options controls Check.
type Options struct {
	// Width is the browser window width in CSS pixels (0: 1280).
	Width int
	// MaxHeight caps the window height; the window grows to the page's height up to this (0: 20000).
	MaxHeight int
	// BudgetMS is Chromium's virtual-time budget per load, in milliseconds (0: 5000): scripts,
	// chart drawing and animations finish within it.
	BudgetMS int
	// MinInk is the fraction of a chart's box that must differ from the box's background colour
	// (0: 0.01). A blank chart area has 0; a drawn density or bar chart has several percent.
	MinInk float64
	// Screenshot, when not empty, is where the page's screenshot is kept (PNG).
	Screenshot string
}

func (o Options) withDefaults() Options {
	if o.Width <= 0 {
		o.Width = 1280
	}
	if o.MaxHeight <= 0 {
		o.MaxHeight = 20000
	}
	if o.BudgetMS <= 0 {
		o.BudgetMS = 5000
	}
	if o.MinInk <= 0 {
		o.MinInk = 0.01
	}
	return o
}

// ChartSelector is the CSS selector of the chart containers checked: plots.ChartHTML gives each
// chart a <div class="fedbayes-chart">.
const ChartSelector = ".fedbayes-chart"

// resultID is the id of the hidden <pre> where the injected script writes its measurements.
const resultID = "fedbayes-nbcheck"

// measureDelayMS is when (in virtual time after the load event) the injected script measures.
const measureDelayMS = 1500

// measureScript finds every chart container and writes its page box (CSS pixels) and the page's
// size, as JSON, into a hidden <pre> (hidden: no change to the layout that the screenshot sees).
var measureScript = fmt.Sprintf(`<script>
(function () {
  function measure() {
    var d = document.documentElement, b = document.body || d;
    var out = {width: Math.max(d.scrollWidth, b.scrollWidth), height: Math.max(d.scrollHeight, b.scrollHeight), charts: []};
    var els = document.querySelectorAll(%q);
    for (var i = 0; i < els.length; i++) {
      var r = els[i].getBoundingClientRect();
      out.charts.push({id: els[i].id || ("chart " + (i + 1)), x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height});
    }
    var pre = document.getElementById(%q);
    if (!pre) { pre = document.createElement("pre"); pre.id = %q; pre.hidden = true; b.appendChild(pre); }
    pre.textContent = JSON.stringify(out);
  }
  window.addEventListener("load", function () { setTimeout(measure, %d); });
  setTimeout(measure, %d);
})();
</script>
`, ChartSelector, resultID, resultID, measureDelayMS, 2*measureDelayMS)

// Still returns the page with its ECharts animations turned off (every chart option
// "animation":true made false). The check asks whether each chart draws, not how it animates, and
// under Chromium's virtual-time budget a page of many animated charts hangs now and then: notebook
// 04's twelve charts timed out at 2 minutes in 3 of 3 attempts, twice, and in 4 of 6 attempts alone,
// where the same page with animations off drew in 7 s in 3 of 3 (2026-12-02).
func Still(page []byte) []byte {
	return bytes.ReplaceAll(page, []byte(`"animation":true`), []byte(`"animation":false`))
}

// Inject returns the page with measureScript added before its last </body> (or at its end).
func Inject(page []byte) []byte {
	i := bytes.LastIndex(bytes.ToLower(page), []byte("</body>"))
	if i < 0 {
		return append(append([]byte{}, page...), measureScript...)
	}
	out := make([]byte, 0, len(page)+len(measureScript))
	out = append(out, page[:i]...)
	out = append(out, measureScript...)
	return append(out, page[i:]...)
}

// Box is a chart container's position on the page, in CSS pixels.
type Box struct {
	ID         string  `json:"id"`
	X, Y, W, H float64 `json:"-"`
}

// measurement is what the injected script reports.
type measurement struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Charts []struct {
		ID string  `json:"id"`
		X  float64 `json:"x"`
		Y  float64 `json:"y"`
		W  float64 `json:"w"`
		H  float64 `json:"h"`
	} `json:"charts"`
}

var resultRE = regexp.MustCompile(`(?s)<pre id="` + resultID + `"[^>]*>(.*?)</pre>`)

// parseDump extracts the measurement from Chromium's --dump-dom output.
func parseDump(dom []byte) (measurement, error) {
	var m measurement
	match := resultRE.FindSubmatch(dom)
	if match == nil {
		return m, fmt.Errorf("the measuring script did not run (no #%s in the page's DOM)", resultID)
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(match[1]))), &m); err != nil {
		return m, fmt.Errorf("reading the measurements: %w", err)
	}
	return m, nil
}

var idRE = regexp.MustCompile(`^fedbayes-(.+)-[0-9a-f]{12}$`)

// ChartName returns the chart's name from its element id ("fedbayes-NAME-HEX" from plots.NewID),
// or the id itself.
func ChartName(id string) string {
	if m := idRE.FindStringSubmatch(id); m != nil {
		return m[1]
	}
	return id
}

// ChartInk is the result of one chart.
type ChartInk struct {
	// Name is the chart's name (ChartName of its id); ID its element id.
	Name, ID string
	// Box is its area in the screenshot, in pixels.
	Box image.Rectangle
	// Ink is the fraction of Box that differs from the box's background colour.
	Ink float64
	// Problem says why the chart failed; empty when it drew.
	Problem string
}

// Report is the result of one page.
type Report struct {
	// Page is the HTML file checked.
	Page string
	// Charts holds every chart container found, in page order.
	Charts []ChartInk
}

// Failed returns the charts that did not draw.
func (r Report) Failed() []ChartInk {
	var out []ChartInk
	for _, c := range r.Charts {
		if c.Problem != "" {
			out = append(out, c)
		}
	}
	return out
}

// Check opens the page in headless Chromium, finds every chart container (ChartSelector) and, on a
// screenshot at the same window size, requires ink in each container's box. The error names the
// page and each chart that did not draw; a page without charts passes with an empty report.
func Check(ctx context.Context, page string, opt Options) (Report, error) {
	opt = opt.withDefaults()
	rep := Report{Page: page}
	raw, err := os.ReadFile(page)
	if err != nil {
		return rep, fmt.Errorf("nbcheck: %w", err)
	}
	chromium, err := plots.FindChromium()
	if err != nil {
		return rep, fmt.Errorf("nbcheck: %s: %w", page, err)
	}
	// The copy sits beside the page, so that relative links resolve as they do for the page.
	tmp, err := os.CreateTemp(filepath.Dir(page), ".nbcheck-*.html")
	if err != nil {
		return rep, fmt.Errorf("nbcheck: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(Inject(Still(raw))); err != nil {
		tmp.Close()
		return rep, fmt.Errorf("nbcheck: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return rep, fmt.Errorf("nbcheck: %w", err)
	}

	// Measure at a window as tall as the page (capped), so that the screenshot taken at the same
	// size shows every chart where it was measured.
	height := 1000
	var m measurement
	for range 4 {
		dom, err := dumpDOM(ctx, chromium, tmp.Name(), opt.Width, height, opt.BudgetMS)
		if err != nil {
			return rep, fmt.Errorf("nbcheck: %s: %w", page, err)
		}
		if m, err = parseDump(dom); err != nil {
			return rep, fmt.Errorf("nbcheck: %s: %w", page, err)
		}
		need := int(math.Ceil(m.Height))
		if need <= height || height >= opt.MaxHeight {
			break
		}
		height = min(need, opt.MaxHeight)
	}
	if len(m.Charts) == 0 {
		return rep, nil
	}
	shot := opt.Screenshot
	if shot == "" {
		dir, err := os.MkdirTemp("", "nbcheck-")
		if err != nil {
			return rep, fmt.Errorf("nbcheck: %w", err)
		}
		defer os.RemoveAll(dir)
		shot = filepath.Join(dir, "page.png")
	}
	if err := plots.Screenshot(ctx, tmp.Name(), shot, opt.Width, height, 1, opt.BudgetMS); err != nil {
		return rep, fmt.Errorf("nbcheck: %s: %w", page, err)
	}
	img, err := readPNG(shot)
	if err != nil {
		return rep, fmt.Errorf("nbcheck: %s: %w", page, err)
	}
	for _, c := range m.Charts {
		ci := ChartInk{Name: ChartName(c.ID), ID: c.ID,
			Box: image.Rect(int(math.Round(c.X)), int(math.Round(c.Y)), int(math.Round(c.X+c.W)), int(math.Round(c.Y+c.H)))}
		switch {
		case ci.Box.Dx() < 2 || ci.Box.Dy() < 2:
			ci.Problem = fmt.Sprintf("its area is %gx%g px (hidden or collapsed)", c.W, c.H)
		case !ci.Box.In(img.Bounds()):
			ci.Problem = fmt.Sprintf("its box %v lies outside the %v screenshot (page taller than -max-height %d?)", ci.Box, img.Bounds().Size(), opt.MaxHeight)
		default:
			ci.Ink = plots.InkFraction(img, ci.Box, Background(img, ci.Box))
			if ci.Ink < opt.MinInk {
				ci.Problem = fmt.Sprintf("its area is blank: ink %.2f%% < %.2f%% of %v", 100*ci.Ink, 100*opt.MinInk, ci.Box)
			}
		}
		rep.Charts = append(rep.Charts, ci)
	}
	if failed := rep.Failed(); len(failed) > 0 {
		msgs := make([]string, len(failed))
		for i, c := range failed {
			msgs[i] = fmt.Sprintf("chart %q (id %s) did not draw: %s", c.Name, c.ID, c.Problem)
		}
		return rep, fmt.Errorf("nbcheck: %s: %d of %d charts did not draw:\n  %s", page, len(failed), len(rep.Charts), strings.Join(msgs, "\n  "))
	}
	return rep, nil
}

// Background returns the most common colour in r: the chart's background (charts are mostly empty
// space), whatever the page's colours.
func Background(img image.Image, r image.Rectangle) color.Color {
	counts := map[color.RGBA]int{}
	var best color.RGBA
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			c := color.RGBA{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8), uint8(ca >> 8)}
			counts[c]++
			if counts[c] > counts[best] {
				best = c
			}
		}
	}
	return best
}

// dumpDOM loads the page in headless Chromium and returns the DOM after the virtual-time budget.
func dumpDOM(ctx context.Context, chromium, path string, width, height, budgetMS int) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "nbcheck-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	args := append([]string{}, plots.ChromiumFlags...)
	args = append(args, "--user-data-dir="+profile,
		fmt.Sprintf("--window-size=%d,%d", width, height),
		"--force-device-scale-factor=1",
		fmt.Sprintf("--virtual-time-budget=%d", budgetMS),
		"--dump-dom", "file://"+abs)
	cmd := exec.CommandContext(ctx, chromium, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("headless %s --dump-dom failed: %w\n%s", chromium, err, msg)
	}
	return stdout.Bytes(), nil
}

func readPNG(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("reading screenshot %s: %w", path, err)
	}
	return img, nil
}
