package plots

import (
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// needRenderTools checks for Node.js and the real ECharts install.
func needRenderTools(t *testing.T) {
	t.Helper()
	_, errNode := FindNode()
	_, errEC := EChartsDir()
	needTools(t, errNode, errEC)
}

// needBrowser checks for Node.js, ECharts and Chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	needRenderTools(t)
	_, err := FindChromium()
	needTools(t, err)
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func toyChart(t *testing.T) *Chart {
	t.Helper()
	c, err := ToyAggregation("toy", Toy{Title: "Two clients", Clients: []Gaussian1D{{0, 1}, {2, 0.25}}, Mixture: true,
		Aggregates: []NamedGaussian{{"EAA", 1, 0.625}, {"CF", 1.6, 0.2}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRenderSVG(t *testing.T) {
	needRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	toy := toyChart(t)
	heat, err := PartitionHeatmap("heat", Partition{Title: "Partition", Counts: [][]int{{3, 0}, {1, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := RenderSVG(ctx, dir, toy, heat)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != filepath.Join(dir, "toy.svg") {
		t.Fatalf("paths = %v", paths)
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	mustContainAll(t, "toy.svg", svg, "<svg", `width="720"`, `height="400"`, "<path", ">Two clients<", ">clients (2)<", ">EAA<", ">CF<", ">mixture<")
	// 5 curves plus axes: many paths.
	if n := strings.Count(svg, "<path"); n < 10 {
		t.Errorf("toy.svg has %d paths, want at least 10", n)
	}
	if strings.Contains(svg, "animation") && strings.Contains(svg, "@keyframes") {
		t.Error("toy.svg is animated")
	}
	raw, _ = os.ReadFile(paths[1])
	mustContainAll(t, "heat.svg", string(raw), ">Partition<", ">client<", ">class<")

	if _, err := RenderSVG(ctx, dir, toy, toy); err == nil || !strings.Contains(err.Error(), "two charts are named") {
		t.Errorf("RenderSVG with duplicate names: error = %v", err)
	}
}

// A chart's SVG does not depend on the charts drawn before it in the same Node process: zrender's
// process-wide id and class counters are numbered again per file.
func TestRenderSVGIsIndependentOfOtherCharts(t *testing.T) {
	needRenderTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first := toyChart(t)
	first.Name = "first"
	again := *first
	again.Name = "again"
	heat, err := PartitionHeatmap("heat", Partition{Title: "Partition", Counts: [][]int{{5, 0}, {1, 4}}})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := RenderSVG(ctx, t.TempDir(), first, heat, &again)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(paths[0])
	b, _ := os.ReadFile(paths[2])
	if !strings.Contains(string(a), "zr0-cls-0") {
		t.Errorf("first.svg has no class zr0-cls-0: zrender's id scheme changed, update renumberIds in js/render.cjs")
	}
	if string(a) != string(b) {
		t.Error("the same chart drawn first and after another chart gives different SVG files")
	}
}

// An exception inside Node is reported with the chart's name.
func TestRenderSVGReportsNodeErrors(t *testing.T) {
	_, err := FindNode()
	needTools(t, err)
	npm := fakeECharts(t, EChartsVersion, "")
	index := filepath.Join(npm, "node_modules", "echarts", "index.js")
	if err := os.WriteFile(index, []byte(`exports.version = "x"; exports.init = function () { throw new Error("boom"); };`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RenderSVG(context.Background(), t.TempDir(), toyChart(t))
	if err == nil || !strings.Contains(err.Error(), `chart "toy"`) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("RenderSVG with a failing ECharts: error = %v, want one naming the chart and the exception", err)
	}
}

func TestWriteFiguresPNG(t *testing.T) {
	needBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	paths, err := WriteFigures(ctx, dir, FigureOptions{PNGScale: 2}, toyChart(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3 || !strings.HasSuffix(paths[1], "toy.png") || !strings.HasSuffix(paths[2], "toy.pdf") {
		t.Fatalf("paths = %v", paths)
	}
	raw, _ := os.ReadFile(paths[0])
	mustContainAll(t, "toy.svg", string(raw), `width="360"`, `height="250"`, "font-size:12px")
	img := readPNG(t, paths[1])
	if b := img.Bounds(); b.Dx() != 2*ColumnFigure.Width || b.Dy() != 2*ColumnFigure.Height {
		t.Fatalf("PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), 2*ColumnFigure.Width, 2*ColumnFigure.Height)
	}
	// The plot area (middle of the figure) has curves and grid lines; the PNG is not blank.
	b := img.Bounds()
	plot := image.Rect(b.Dx()/5, b.Dy()/3, b.Dx()*9/10, b.Dy()*8/10)
	if f := InkFraction(img, plot, color.White); f < 0.02 {
		t.Errorf("ink in the plot area of the PNG = %.4f, want > 0.02", f)
	}
}

// TestPageChartsDrawInChromium opens pages holding two charts in headless Chromium and checks from
// a screenshot that each chart area has ink; the control without the library stays blank.
func TestPageChartsDrawInChromium(t *testing.T) {
	needBrowser(t)
	lib, err := LibraryHTML()
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 600, 300
	a := testChart(t, "a")
	a.Width, a.Height = w, h
	heat, err := PartitionHeatmap("b", Partition{Counts: [][]int{{9, 1, 0}, {0, 4, 7}, {2, 2, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	heat.Width, heat.Height = w, h
	chartA, err := chartHTMLWithID(a, NewID(a.Name))
	if err != nil {
		t.Fatal(err)
	}
	chartB, err := chartHTMLWithID(heat, NewID(heat.Name))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in for RequireJS: an AMD define that fails on anonymous modules, as RequireJS does
	// when a module is defined outside require().
	const amd = `<script>window.define = function () { throw new Error("anonymous define"); }; window.define.amd = {};</script>`
	for _, tc := range []struct {
		name  string
		parts []string
		drawn bool
	}{
		{"library then charts", []string{lib, chartA, chartB}, true},
		{"page with an AMD loader", []string{amd, lib, chartA, chartB}, true},
		{"chart waits for a later library", []string{chartA, lib, chartB}, true},
		{"no library stays blank", []string{chartA, chartB}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>body{margin:0}</style></head><body>" +
				strings.Join(tc.parts, "\n") + "</body></html>"
			dir := t.TempDir()
			path := filepath.Join(dir, "page.html")
			if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			shot := filepath.Join(dir, "page.png")
			if err := Screenshot(ctx, path, shot, w, 2*h, 1, 3000); err != nil {
				t.Fatal(err)
			}
			img := readPNG(t, shot)
			for i, r := range []image.Rectangle{image.Rect(0, 0, w, h), image.Rect(0, h, w, 2*h)} {
				f := InkFraction(img, r, color.White)
				if tc.drawn && f < 0.02 {
					t.Errorf("chart %d area has ink %.4f, want > 0.02 (chart not drawn)", i+1, f)
				}
				if !tc.drawn && f > 0.001 {
					t.Errorf("chart %d area has ink %.4f without the library, want blank", i+1, f)
				}
			}
		})
	}
}

func TestInkFraction(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 10, 10))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	img.Set(1, 1, color.Black)
	img.Set(2, 2, color.RGBA{250, 250, 250, 255}) // within tolerance of white
	for _, tc := range []struct {
		r    image.Rectangle
		want float64
	}{
		{image.Rect(0, 0, 10, 10), 0.01},
		{image.Rect(0, 0, 2, 2), 0.25},
		{image.Rect(5, 5, 10, 10), 0},
		{image.Rect(20, 20, 30, 30), 0},
	} {
		if got := InkFraction(img, tc.r, color.White); got != tc.want {
			t.Errorf("InkFraction(%v) = %g, want %g", tc.r, got, tc.want)
		}
	}
}

// A sweep of 12 settings and the learned-spread chart drawn as paper figures in headless Chromium:
// every legend entry is in the SVG, the legend lies below the plot (the column figure grows
// instead of squeezing the plot), the plot area has ink, and the spread chart draws its bars and
// error bars.
func TestFiguresTwelveSeriesAndSpreadInBrowser(t *testing.T) {
	needBrowser(t)
	var d Curves
	// The README's first figure's title, clipped at both edges before titles were fitted.
	d.Title = "quick-digits (T=3, E=2, 1 seed, 1,438 / 359 examples): fedavg, gaa, cf and 9 variational rules"
	for i := 0; i < 12; i++ {
		d.Series = append(d.Series, SeedSeries{Name: fmt.Sprintf("vi-rule%02d-dirichlet", i), X: []float64{1, 2, 3, 4},
			Runs: [][]float64{{0.5, 0.6 + 0.01*float64(i), 0.7, 0.72}, {0.52, 0.61, 0.69, 0.73}}})
	}
	curves, err := LearningCurves("sweep", d)
	if err != nil {
		t.Fatal(err)
	}
	spread, err := LearnedSpread("spread", Spread{Rules: []string{"EAA", "GAA", "AALV", "CF"}, LogY: true, Groups: []SpreadGroup{
		{Name: "iid", Mean: []float64{9.8, 0.031, 9.8, 0.031}, SE: []float64{0.0001, 1.7e-7, 0.0001, 1.7e-7}},
		{Name: "dirichlet", Mean: []float64{9.84, 0.039, 9.84, 0.09}, SE: []float64{0.008, 0.0027, 0.008, 0.015}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	if keep := os.Getenv("FEDBAYES_KEEP_FIGURES"); keep != "" { // to look at them
		dir = keep
	}
	paths, err := WriteFigures(ctx, dir, FigureOptions{PNGScale: 1}, curves, spread)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "sweep.svg"))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(raw)
	for i := 0; i < 12; i++ {
		mustContainAll(t, "sweep.svg", svg, fmt.Sprintf(">vi-rule%02d-dirichlet<", i))
	}
	// Twelve legend handles, each with a marker and a dash, no two alike in colour, marker and dash,
	// nor in marker and dash alone (grayscale).
	styled, err := curves.Styled(Style{FontFamily: "sans-serif", FontSize: ColumnFigure.FontSize}, ColumnFigure.Width, ColumnFigure.Height)
	if err != nil {
		t.Fatal(err)
	}
	hs := LegendHandles(styled)
	if len(hs) != 12 {
		t.Fatalf("%d legend handles, want 12", len(hs))
	}
	gray := map[[2]string]bool{}
	for _, h := range hs {
		if h.Marker == "none" || gray[[2]string{h.Marker, h.Dash}] {
			t.Errorf("legend handle %+v has no marker or repeats another's marker and dash", h)
		}
		gray[[2]string{h.Marker, h.Dash}] = true
	}
	// Every legend symbol is drawn with its dash: the SVG has dashed legend strokes.
	if n := strings.Count(svg, "stroke-dasharray"); n < 8 {
		t.Errorf("sweep.svg has %d dashed strokes, want the dashed lines and their legend handles (at least 8)", n)
	}
	// The title fits the width: each of its lines measures at most the figure's width less margins,
	// the full title is the caption, and no ink touches the figure's side edges in the title band.
	title := regexp.MustCompile(`<text[^>]*font-weight:bold[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	if len(title) == 0 {
		t.Fatal("sweep.svg has no bold title text")
	}
	for _, m := range title {
		if w := TextWidth(html.UnescapeString(m[1]), float64(ColumnFigure.FontSize+1), true); w > float64(ColumnFigure.Width-16) {
			t.Errorf("title line %q is %.0f px wide in a %d px figure", m[1], w, ColumnFigure.Width)
		}
	}
	caption, err := os.ReadFile(filepath.Join(dir, "sweep.txt"))
	if err != nil || !strings.Contains(string(caption), d.Title) {
		t.Errorf("sweep.txt = %q, %v; want the full title", caption, err)
	}
	// One vector page per figure, of the figure's size, with its fonts embedded.
	for _, name := range []string{"sweep", "spread"} {
		info, err := PDFStats(filepath.Join(dir, name+".pdf"))
		if err != nil {
			t.Fatal(err)
		}
		if info.Pages != 1 || info.EmbeddedFonts == 0 || info.Images != 0 {
			t.Errorf("%s.pdf: %+v, want 1 page, embedded fonts, no images", name, info)
		}
		// The PDF's title is the figure's (in full), or its name without one; never the page's file.
		if want := map[string]string{"sweep": d.Title, "spread": "spread"}[name]; info.Title != want {
			t.Errorf("%s.pdf's title is %q, want %q", name, info.Title, want)
		}
	}
	if strings.Contains(svg, `height="250"`) {
		t.Error("sweep.svg kept the column height: the legend squeezes the plot")
	}
	var png string
	for _, p := range paths {
		if strings.HasSuffix(p, "sweep.png") {
			png = p
		}
	}
	img := readPNG(t, png)
	b := img.Bounds()
	for _, edge := range []image.Rectangle{image.Rect(0, 0, 3, 40), image.Rect(b.Dx()-3, 0, b.Dx(), 40)} {
		if f := InkFraction(img, edge, color.White); f > 0 {
			t.Errorf("ink %.4f at the figure's edge %v in the title band: the title is clipped", f, edge)
		}
	}
	// The plot (upper part, below the title) has the curves; the legend rows fill the bottom.
	if f := InkFraction(img, image.Rect(b.Dx()/5, b.Dy()/8, b.Dx()*9/10, b.Dy()/2), color.White); f < 0.02 {
		t.Errorf("plot area ink %.4f, want > 0.02", f)
	}
	if f := InkFraction(img, image.Rect(0, b.Dy()*3/4, b.Dx(), b.Dy()), color.White); f < 0.01 {
		t.Errorf("legend area ink %.4f, want > 0.01", f)
	}
	raw, err = os.ReadFile(filepath.Join(dir, "spread.svg"))
	if err != nil {
		t.Fatal(err)
	}
	mustContainAll(t, "spread.svg", string(raw), ">EAA<", ">CF<", ">iid<", ">dirichlet<")
	if strings.Contains(string(raw), "±") {
		t.Error("spread.svg still prints ± labels")
	}
	if n := strings.Count(string(raw), "<path"); n < 16 {
		t.Errorf("spread.svg has %d paths, want bars and error bars (at least 16)", n)
	}
}

// TestRenderSVGFailedWriteLeavesNoPart simulates a renderer that dies part way through writing
// (a full disk): it writes half of the first chart's SVG and exits with ENOSPC. The folder keeps the
// earlier figure of that name unchanged and holds no new file, partial or temporary.
func TestRenderSVGFailedWriteLeavesNoPart(t *testing.T) {
	fakeECharts(t, EChartsVersion, "")
	bin := t.TempDir()
	node := filepath.Join(bin, "node")
	// Arguments: render.cjs ECHARTS_DIR JOBS.json WIDTHS.json; the first job's "out" gets half a file.
	script := "#!/bin/sh\nout=$(grep -o '\"out\":\"[^\"]*\"' \"$3\" | head -n 1 | cut -d'\"' -f4)\n" +
		"printf '<svg xmlns=\"http://www.w3.org/2000/svg\"><path d=\"M0' > \"$out\"\n" +
		"echo 'Error: ENOSPC: no space left on device, write' >&2\nexit 1\n"
	if err := os.WriteFile(node, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(NodeEnv, node)
	dir := t.TempDir()
	old := filepath.Join(dir, "toy.svg")
	if err := os.WriteFile(old, []byte("<svg>old</svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	heat, err := PartitionHeatmap("heat", Partition{Title: "Partition", Counts: [][]int{{3, 0}, {1, 5}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RenderSVG(context.Background(), dir, toyChart(t), heat)
	if err == nil || !strings.Contains(err.Error(), "ENOSPC") {
		t.Fatalf("RenderSVG with a failing write: error %v, want the renderer's ENOSPC", err)
	}
	if raw, _ := os.ReadFile(old); string(raw) != "<svg>old</svg>" {
		t.Errorf("the earlier toy.svg was replaced by %q", raw)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "toy.svg" {
			t.Errorf("the failed write left %s in the folder", e.Name())
		}
	}
}

// TestPDFTitleIsTheFigures checks that the page Chromium prints a PDF from carries the figure's
// title (the PDF's title metadata), escaped, and a chart's title in full even where the drawn one
// was shortened.
func TestPDFTitleIsTheFigures(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "f.svg")
	if err := os.WriteFile(svg, []byte("<svg></svg>"), 0o644); err != nil {
		t.Fatal(err)
	}
	page, cleanup, err := svgPage(svg, 360, 250, "Accuracy <FMNIST> & 10 clients")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	raw, _ := os.ReadFile(page)
	if !strings.Contains(string(raw), "<title>Accuracy &lt;FMNIST&gt; &amp; 10 clients</title>") {
		t.Errorf("page lacks the escaped title: %s", raw[:min(len(raw), 300)])
	}
	long := strings.Repeat("a long title that cannot fit ", 6)
	c, err := LearningCurves("lc", Curves{Title: long, Series: []SeedSeries{{Name: "EAA", X: []float64{1, 2}, Runs: [][]float64{{0.5, 0.6}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Styled(Style{FontSize: 12}, 360, 250)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.TitleText(); got != strings.TrimSpace(long) {
		t.Errorf("TitleText of a shortened title = %q, want the full title", got)
	}
}

// TestPDFText decodes the PDF string forms a title comes in: literal with escapes, and UTF-16BE hex.
func TestPDFText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`(quick \(T=3\) a\\b)`, `quick (T=3) a\b`},
		{`(caf\351)`, "caf\xe9"},
		{"<FEFF03C3005F0032>", "σ_2"},
		{"<6162>", "ab"},
	} {
		if got := pdfText(tc.in); got != tc.want {
			t.Errorf("pdfText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStaleStagesRemoved checks that a stage folder a killed renderer left behind is removed by the
// next write into the folder once it is old, and a recent one (maybe another process's) is kept.
func TestStaleStagesRemoved(t *testing.T) {
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, ".figures.tmp-111"), filepath.Join(dir, ".figures.tmp-222")
	for _, d := range []string{stale, fresh} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "a.svg"), []byte("<svg"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleStage)
	if err := os.Chtimes(stale, long, long); err != nil {
		t.Fatal(err)
	}
	st, err := newStage(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.remove()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale stage kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("recent stage removed: %v", err)
	}
	if _, err := os.Stat(st.dir); !os.IsNotExist(err) {
		t.Errorf("the stage of this write is left: %v", err)
	}
}
