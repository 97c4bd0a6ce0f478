package plots

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"strings"

	"fedbayes.dev/fedbayes/results"
)

// ReadyEvent is the name of the window event sent when the ECharts library has been defined by
// LibraryHTML; charts displayed before it wait for it.
const ReadyEvent = "fedbayes-echarts-ready"

// LibraryHTML returns a <script> element that defines window.echarts from the local ECharts bundle
// (EChartsBundle), unless the page already has this version, and then sends ReadyEvent.
//
// The bundle is a UMD module: when a page has RequireJS (exported notebooks, classic Notebook's own
// page) it would register an anonymous AMD module instead of setting window.echarts, and an
// anonymous define outside require() is an error. The bundle is therefore run inside a function
// whose parameters define, exports and module are undefined, so it always takes its browser-global
// branch, with or without RequireJS, and without touching the page's own define.
func LibraryHTML() (string, error) {
	js, err := EChartsBundle()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(js) + 1024)
	fmt.Fprintf(&b, `<script data-fedbayes-echarts=%q>
(function () {
  if (!(window.echarts && window.echarts.version === %q)) {
    (function (define, exports, module) {
`, EChartsVersion, EChartsVersion)
	b.WriteString(js)
	fmt.Fprintf(&b, `
    }).call(window);
  }
  window.dispatchEvent(new Event(%q));
})();
</script>
`, ReadyEvent)
	return b.String(), nil
}

// NewID returns a new random id for a chart's element, unique on a page ("fedbayes-NAME-HEX").
// Random rather than counted: each notebook cell runs in a new process, so a counter would repeat.
func NewID(name string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("plots: crypto/rand failed: %v", err)) // never on supported systems
	}
	return "fedbayes-" + name + "-" + hex.EncodeToString(b[:])
}

// ChartHTML returns the HTML of one chart with a new unique id: a <div> of the chart's size and a
// <script> that draws it with window.echarts, at once if ECharts is loaded, else when ReadyEvent
// arrives; after 20 s without ECharts the <div> says how to load it. It does not include the
// library (see LibraryHTML and PageHTML).
func ChartHTML(c *Chart) (string, error) {
	if c == nil {
		return "", fmt.Errorf("plots: nil chart")
	}
	return chartHTMLWithID(c, NewID(c.Name))
}

func chartHTMLWithID(c *Chart, id string) (string, error) {
	raw, err := c.OptionJSON()
	if err != nil {
		return "", err
	}
	// Inside <script>, "</" must not appear (it could close the element): JSON allows "<\/".
	option := strings.ReplaceAll(string(raw), "</", `<\/`)
	return fmt.Sprintf(`<div id=%q class="fedbayes-chart" style="width:%dpx;height:%dpx;max-width:100%%;"></div>
<script>
(function () {
  var id = %q, option = %s, drawn = false;
  function draw() {
    var el = document.getElementById(id);
    if (drawn || !el || !window.echarts) return;
    drawn = true;
    el.textContent = "";
    var chart = window.echarts.init(el, null, {renderer: "canvas"});
    chart.setOption(option);
    if (window.ResizeObserver) new ResizeObserver(function () { chart.resize(); }).observe(el);
  }
  if (window.echarts) { draw(); return; }
  window.addEventListener(%q, draw);
  setTimeout(function () {
    var el = document.getElementById(id);
    if (!drawn && el) el.textContent = "ECharts is not loaded on this page: display plots.LibraryHTML() first (in Go: plots.DisplayLibrary()).";
  }, 20000);
})();
</script>
`, id, c.Width, c.Height, id, option, ReadyEvent) + captionHTML(c), nil
}

// captionHTML returns the chart's caption (CaptionText) as a small paragraph of the chart's width
// under it, or "" when it has none.
func captionHTML(c *Chart) string {
	text := c.CaptionText()
	if text == "" {
		return ""
	}
	return fmt.Sprintf(`<div class="fedbayes-caption" style="width:%dpx;max-width:100%%;font:12px/1.35 sans-serif;color:#555;margin:2px 0 8px 0">%s</div>
`, c.Width, html.EscapeString(text))
}

// PageHTML returns a standalone HTML page with the ECharts library inlined once and the charts one
// below the other (ids "fedbayes-chart-1", "-2", ...). The page needs no network.
func PageHTML(title string, charts ...*Chart) (string, error) {
	lib, err := LibraryHTML()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>body{margin:0;padding:0;background:#fff;font-family:sans-serif}.fedbayes-chart{margin:0}</style>
</head>
<body>
`, html.EscapeString(title))
	b.WriteString(lib)
	for i, c := range charts {
		h, err := chartHTMLWithID(c, fmt.Sprintf("fedbayes-chart-%d", i+1))
		if err != nil {
			return "", fmt.Errorf("plots: page %q, chart %d: %w", title, i+1, err)
		}
		b.WriteString(h)
	}
	b.WriteString("</body>\n</html>\n")
	return b.String(), nil
}

// WriteHTML writes PageHTML(title, charts...) to path, atomically (results.WriteFileAtomic).
func WriteHTML(path, title string, charts ...*Chart) error {
	page, err := PageHTML(title, charts...)
	if err != nil {
		return err
	}
	if err := results.WriteFileAtomic(path, []byte(page), 0o644); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}
