package plots

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed js/render.cjs
var renderScript []byte

// NodeEnv and ChromiumEnv name environment variables that point at the node and chromium binaries
// when they are not on PATH under their usual names.
const (
	NodeEnv     = "FEDBAYES_NODE"
	ChromiumEnv = "FEDBAYES_CHROMIUM"
)

// FindNode returns the path of Node.js ($FEDBAYES_NODE, else node or nodejs on PATH).
func FindNode() (string, error) {
	return findBinary(NodeEnv, []string{"node", "nodejs"}, "Node.js (Debian: apt-get install -y nodejs)")
}

// FindChromium returns the path of a Chromium-like browser ($FEDBAYES_CHROMIUM, else chromium,
// chromium-browser, google-chrome on PATH).
func FindChromium() (string, error) {
	return findBinary(ChromiumEnv, []string{"chromium", "chromium-browser", "google-chrome"},
		"Chromium (Debian: apt-get install -y chromium chromium-driver)")
}

func findBinary(env string, names []string, what string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("plots: $%s=%s: %w", env, p, err)
		}
		return p, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("plots: %s not found on PATH (looked for %s; or set $%s)", what, strings.Join(names, ", "), env)
}

// RenderSVG writes each chart as dir/NAME.svg with ECharts' server-side SVG renderer in Node.js,
// animation off, at the chart's size; all charts are drawn by one Node process. It returns the
// paths written, in the order of charts.
func RenderSVG(ctx context.Context, dir string, charts ...*Chart) ([]string, error) {
	if len(charts) == 0 {
		return nil, nil
	}
	node, err := FindNode()
	if err != nil {
		return nil, err
	}
	echartsDir, err := EChartsDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	jobs := make([]map[string]any, len(charts))
	paths := make([]string, len(charts))
	seen := map[string]bool{}
	for i, c := range charts {
		if c == nil {
			return nil, fmt.Errorf("plots: chart %d is nil", i)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("plots: two charts are named %q (their files would collide)", c.Name)
		}
		seen[c.Name] = true
		if _, err := c.OptionJSON(); err != nil {
			return nil, err
		}
		out, err := filepath.Abs(filepath.Join(dir, c.Name+".svg"))
		if err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
		paths[i] = out
		jobs[i] = map[string]any{"name": c.Name, "option": c.Option, "width": c.Width, "height": c.Height, "out": out}
	}
	tmp, err := os.MkdirTemp("", "fedbayes-svg-")
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	defer os.RemoveAll(tmp)
	script := filepath.Join(tmp, "render.cjs")
	jobsPath := filepath.Join(tmp, "jobs.json")
	raw, err := json.Marshal(jobs)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := os.WriteFile(script, renderScript, 0o644); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := os.WriteFile(jobsPath, raw, 0o644); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	// ECharts measures text with the widths it is drawn with (TextWidth's tables).
	widthsPath := filepath.Join(tmp, "widths.json")
	widths, err := json.Marshal(map[string]any{"regular": dejaVuSans, "bold": dejaVuSansBold})
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	if err := os.WriteFile(widthsPath, widths, 0o644); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	cmd := exec.CommandContext(ctx, node, script, echartsDir, jobsPath, widthsPath)
	var outBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("plots: server-side rendering with %s failed: %w\n%s", node, err, strings.TrimSpace(outBuf.String()))
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("plots: Node did not write %s: %w\n%s", p, err, outBuf.String())
		}
	}
	return paths, nil
}

// ChromiumFlags are the command-line flags of every headless Chromium run: no sandbox (root in
// containers), no GPU, no network side traffic, no first-run UI. A fresh --user-data-dir is added
// per run.
var ChromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio",
}

// Screenshot loads the page at path (a local HTML or SVG file, or an http(s) URL) in headless Chromium with a viewport
// of width x height CSS pixels and writes a PNG of it to pngPath, scale device pixels per CSS pixel
// (so the PNG is scale*width x scale*height). Virtual time runs ahead budgetMS milliseconds before
// the capture so that scripts and animations finish (0 means 3000).
func Screenshot(ctx context.Context, path, pngPath string, width, height int, scale float64, budgetMS int) error {
	var err error
	abs, target := path, path // an http(s) URL is opened as it is
	if !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://") {
		if abs, err = filepath.Abs(path); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("plots: screenshot: %w", err)
		}
		target = "file://" + abs
	}
	out, err := filepath.Abs(pngPath)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if scale <= 0 {
		scale = 1
	}
	if budgetMS <= 0 {
		budgetMS = 3000
	}
	_ = os.Remove(out)
	return runChromium(ctx, abs, out, "screenshot",
		fmt.Sprintf("--window-size=%d,%d", width, height),
		fmt.Sprintf("--force-device-scale-factor=%g", scale),
		fmt.Sprintf("--virtual-time-budget=%d", budgetMS),
		"--screenshot="+out,
		target,
	)
}

// runChromium runs headless Chromium with ChromiumFlags, a fresh profile and args, on the page
// source (for messages), and checks that it wrote out.
func runChromium(ctx context.Context, source, out, what string, args ...string) error {
	chromium, err := FindChromium()
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "fedbayes-chromium-")
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	defer os.RemoveAll(profile)
	all := append(append([]string{}, ChromiumFlags...), "--user-data-dir="+profile)
	all = append(all, args...)
	cmd := exec.CommandContext(ctx, chromium, all...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("plots: headless %s on %s failed: %w\n%s", chromium, source, err, tail(log.String(), 2000))
	}
	if _, err := os.Stat(out); err != nil {
		return fmt.Errorf("plots: headless chromium wrote no %s for %s: %w\n%s", what, source, err, tail(log.String(), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// SVGToPNG rasterises an SVG file of width x height CSS pixels into a PNG with scale device pixels
// per CSS pixel, on a white background, through headless Chromium.
func SVGToPNG(ctx context.Context, svgPath, pngPath string, width, height int, scale float64) error {
	page, cleanup, err := svgPage(svgPath, width, height)
	if err != nil {
		return err
	}
	defer cleanup()
	return Screenshot(ctx, page, pngPath, width, height, scale, 500)
}

// SVGToPDF prints an SVG file of width x height CSS pixels into a one-page vector PDF of that size
// (1 CSS px = 0.75 pt), fonts embedded, through headless Chromium's --print-to-pdf.
func SVGToPDF(ctx context.Context, svgPath, pdfPath string, width, height int) error {
	page, cleanup, err := svgPage(svgPath, width, height)
	if err != nil {
		return err
	}
	defer cleanup()
	out, err := filepath.Abs(pdfPath)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	_ = os.Remove(out)
	return runChromium(ctx, svgPath, out, "PDF", "--no-pdf-header-footer", "--print-to-pdf="+out, "file://"+page)
}

// svgPage writes an HTML page holding the SVG file alone on a white page of exactly width x height
// CSS pixels (also the printed page size, by @page), into a temporary folder that cleanup removes.
func svgPage(svgPath string, width, height int) (page string, cleanup func(), err error) {
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		return "", nil, fmt.Errorf("plots: %w", err)
	}
	tmp, err := os.MkdirTemp("", "fedbayes-figure-")
	if err != nil {
		return "", nil, fmt.Errorf("plots: %w", err)
	}
	cleanup = func() { os.RemoveAll(tmp) }
	page = filepath.Join(tmp, "figure.html")
	html := fmt.Sprintf("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>@page{size:%dpx %dpx;margin:0}"+
		"html,body{margin:0;padding:0;background:#fff;overflow:hidden;width:%dpx;height:%dpx}svg{display:block}</style></head><body>",
		width, height, width, height) + string(svg) + "</body></html>"
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("plots: %w", err)
	}
	return page, cleanup, nil
}

// PDFInfo is what PDFStats reads from a PDF file.
type PDFInfo struct {
	// Pages is the number of page objects ("/Type /Page").
	Pages int
	// EmbeddedFonts is the number of embedded font programs (/FontFile, /FontFile2, /FontFile3).
	EmbeddedFonts int
	// Images is the number of image objects (/Subtype /Image): 0 for a vector figure.
	Images int
}

var (
	pdfPageRE  = regexp.MustCompile(`/Type\s*/Page\b`)
	pdfFontRE  = regexp.MustCompile(`/FontFile[23]?\b`)
	pdfImageRE = regexp.MustCompile(`/Subtype\s*/Image\b`)
)

// PDFStats counts the pages, embedded fonts and images of a PDF whose object dictionaries are
// uncompressed, as Chromium (Skia) writes them. It fails on a file that is not a PDF.
func PDFStats(path string) (PDFInfo, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return PDFInfo{}, fmt.Errorf("plots: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte("%PDF-")) {
		return PDFInfo{}, fmt.Errorf("plots: %s is not a PDF file", path)
	}
	return PDFInfo{
		Pages:         len(pdfPageRE.FindAll(raw, -1)),
		EmbeddedFonts: len(pdfFontRE.FindAll(raw, -1)),
		Images:        len(pdfImageRE.FindAll(raw, -1)),
	}, nil
}

// FigureOptions controls WriteFigures.
type FigureOptions struct {
	// Size gives the width, height and font size of every figure; zero means ColumnFigure.
	Size FigureSize
	// KeepSize keeps each chart's own width and height (fonts still follow Size.FontSize).
	KeepSize bool
	// PNGScale is device pixels per CSS pixel of the PNG files (0 means 3, about 300 dpi at the
	// printed size of ColumnFigure); negative writes neither PNG nor PDF (no Chromium needed).
	PNGScale float64
}

// WriteFigures writes each chart as a static figure dir/NAME.svg (server-side rendering, animation
// off), dir/NAME.png (the SVG rasterised by headless Chromium) and dir/NAME.pdf (the SVG printed by
// headless Chromium: one vector page, fonts embedded), sized for a two-column paper, and
// dir/NAME.txt with its caption (Chart.CaptionText) when it has one. It returns the paths written.
func WriteFigures(ctx context.Context, dir string, opt FigureOptions, charts ...*Chart) ([]string, error) {
	size := opt.Size
	if size == (FigureSize{}) {
		size = ColumnFigure
	}
	scale := opt.PNGScale
	if scale == 0 {
		scale = 3
	}
	styled := make([]*Chart, len(charts))
	for i, c := range charts {
		if c == nil {
			return nil, fmt.Errorf("plots: chart %d is nil", i)
		}
		w, h := size.Width, size.Height
		if opt.KeepSize {
			w, h = c.Width, c.Height
		}
		s, err := c.Styled(Style{FontFamily: "sans-serif", FontSize: size.FontSize}, w, h)
		if err != nil {
			return nil, err
		}
		styled[i] = s
	}
	return writeStatic(ctx, dir, scale, styled)
}

// writeStatic renders styled charts to SVG, then to PNG and PDF unless scale < 0, and writes the
// captions.
func writeStatic(ctx context.Context, dir string, scale float64, styled []*Chart) ([]string, error) {
	svgs, err := RenderSVG(ctx, dir, styled...)
	if err != nil {
		return nil, err
	}
	written := append([]string{}, svgs...)
	for i, svg := range svgs {
		if text := styled[i].CaptionText(); text != "" {
			p := strings.TrimSuffix(svg, ".svg") + ".txt"
			if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
				return written, fmt.Errorf("plots: %w", err)
			}
			written = append(written, p)
		}
	}
	if scale < 0 {
		return written, nil
	}
	for i, svg := range svgs {
		stem := strings.TrimSuffix(svg, ".svg")
		if err := SVGToPNG(ctx, svg, stem+".png", styled[i].Width, styled[i].Height, scale); err != nil {
			return written, err
		}
		if err := SVGToPDF(ctx, svg, stem+".pdf", styled[i].Width, styled[i].Height); err != nil {
			return written, err
		}
		written = append(written, stem+".png", stem+".pdf")
	}
	return written, nil
}

// InkFraction returns the fraction of pixels inside r that differ from the background colour bg
// by more than a small tolerance: a check that something drew there (used on screenshots).
func InkFraction(img image.Image, r image.Rectangle, bg color.Color) float64 {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return 0
	}
	br, bgG, bb, _ := bg.RGBA()
	diff := func(a, b uint32) uint32 {
		if a > b {
			return a - b
		}
		return b - a
	}
	ink, total := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if diff(cr, br)+diff(cg, bgG)+diff(cb, bb) > 3*0x0a00 {
				ink++
			}
			total++
		}
	}
	return float64(ink) / float64(total)
}
