package plots

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf16"

	"fedbayes.dev/fedbayes/results"
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
// animation off, at the chart's size; all charts are drawn by one Node process. The files are drawn
// into a temporary folder inside dir and moved into dir only once every one is complete (stage), so
// a failed run (a full disk, a crash) leaves dir as it was. It returns the paths written, in the
// order of charts.
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
	st, err := newStage(dir)
	if err != nil {
		return nil, err
	}
	defer st.remove()
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
		paths[i] = c.Name + ".svg"
		jobs[i] = map[string]any{"name": c.Name, "option": c.Option, "width": c.Width, "height": c.Height, "out": st.path(paths[i])}
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
		if _, err := os.Stat(st.path(p)); err != nil {
			return nil, fmt.Errorf("plots: Node did not write %s: %w\n%s", p, err, outBuf.String())
		}
	}
	return st.publish(paths...)
}

// stage is a temporary folder inside a destination folder: files are written there whole, then
// moved into the destination by publish, each by a rename within one file system, so that a write
// that fails part way (a full disk, a renderer killed or crashing) never leaves part of a file under
// its final name, nor replaces a good file with a broken one.
type stage struct{ dir, dest string }

// stagePattern names stage folders (hidden, with results' temporary-file marker).
const stagePattern = ".figures.tmp-*"

// staleStage is the age after which a stage folder is taken as left by a killed process: a stage
// lives for one Node or Chromium run, seconds to minutes.
const staleStage = time.Hour

// newStage makes dest (and its parents) and a stage folder inside it, first removing stage folders
// older than staleStage that a killed process left there.
func newStage(dest string) (*stage, error) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	removeStaleStages(dest)
	abs, err := filepath.Abs(dest)
	if err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	dir, err := os.MkdirTemp(abs, stagePattern)
	if err != nil {
		return nil, fmt.Errorf("plots: figures in %s: %w", dest, err)
	}
	return &stage{dir: dir, dest: abs}, nil
}

// removeStaleStages removes the stage folders in dest older than staleStage; one it cannot read or
// remove is left (it hides nothing: its name starts with a dot, and nothing reads it).
func removeStaleStages(dest string) {
	old, _ := filepath.Glob(filepath.Join(dest, stagePattern))
	for _, d := range old {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && time.Since(fi.ModTime()) > staleStage {
			_ = os.RemoveAll(d)
		}
	}
}

// path is where the file name is written in the stage.
func (s *stage) path(name string) string { return filepath.Join(s.dir, name) }

// publish moves the staged files names into the destination, in order, and returns their paths
// there. On an error the files moved so far are complete and the rest stay in the stage.
func (s *stage) publish(names ...string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		to := filepath.Join(s.dest, n)
		if err := os.Rename(s.path(n), to); err != nil {
			return out, fmt.Errorf("plots: %w", err)
		}
		out = append(out, to)
	}
	return out, nil
}

// remove deletes the stage and whatever is left in it.
func (s *stage) remove() { _ = os.RemoveAll(s.dir) }

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
	if scale <= 0 {
		scale = 1
	}
	if budgetMS <= 0 {
		budgetMS = 3000
	}
	st, err := newStage(filepath.Dir(pngPath))
	if err != nil {
		return err
	}
	defer st.remove()
	name := filepath.Base(pngPath)
	if err := runChromium(ctx, abs, st.path(name), "screenshot",
		fmt.Sprintf("--window-size=%d,%d", width, height),
		fmt.Sprintf("--force-device-scale-factor=%g", scale),
		fmt.Sprintf("--virtual-time-budget=%d", budgetMS),
		"--screenshot="+st.path(name),
		target,
	); err != nil {
		return err
	}
	_, err = st.publish(name)
	return err
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
	page, cleanup, err := svgPage(svgPath, width, height, "")
	if err != nil {
		return err
	}
	defer cleanup()
	return Screenshot(ctx, page, pngPath, width, height, scale, 500)
}

// SVGToPDF prints an SVG file of width x height CSS pixels into a one-page vector PDF of that size
// (1 CSS px = 0.75 pt), fonts embedded, through headless Chromium's --print-to-pdf; the PDF's title
// (its document information) is title, or the file's stem when title is "".
func SVGToPDF(ctx context.Context, svgPath, pdfPath string, width, height int, title string) error {
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(pdfPath), filepath.Ext(pdfPath))
	}
	page, cleanup, err := svgPage(svgPath, width, height, title)
	if err != nil {
		return err
	}
	defer cleanup()
	st, err := newStage(filepath.Dir(pdfPath))
	if err != nil {
		return err
	}
	defer st.remove()
	name := filepath.Base(pdfPath)
	if err := runChromium(ctx, svgPath, st.path(name), "PDF", "--no-pdf-header-footer", "--print-to-pdf="+st.path(name), "file://"+page); err != nil {
		return err
	}
	_, err = st.publish(name)
	return err
}

// svgPage writes an HTML page holding the SVG file alone on a white page of exactly width x height
// CSS pixels (also the printed page size, by @page), titled title (Chromium's PDF title), into a
// temporary folder that cleanup removes.
func svgPage(svgPath string, width, height int, title string) (page string, cleanup func(), err error) {
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
	doc := fmt.Sprintf("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>%s</title><style>@page{size:%dpx %dpx;margin:0}"+
		"html,body{margin:0;padding:0;background:#fff;overflow:hidden;width:%dpx;height:%dpx}svg{display:block}</style></head><body>",
		html.EscapeString(title), width, height, width, height) + string(svg) + "</body></html>"
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
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
	// Title is the document's title (/Title of its information dictionary), "" for none.
	Title string
}

var (
	pdfPageRE  = regexp.MustCompile(`/Type\s*/Page\b`)
	pdfFontRE  = regexp.MustCompile(`/FontFile[23]?\b`)
	pdfImageRE = regexp.MustCompile(`/Subtype\s*/Image\b`)
	pdfTitleRE = regexp.MustCompile(`/Title\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f\s]*>)`)
)

// pdfText decodes a PDF string object: a literal "(...)" with backslash escapes (octal codes, \n,
// \( and the like), or a hexadecimal "<...>", which Chromium writes as UTF-16BE after a byte-order
// mark for text beyond ASCII (PDF 1.7, Sec. 7.3.4 and 7.9.2.2).
func pdfText(s string) string {
	if strings.HasPrefix(s, "<") {
		raw, err := hex.DecodeString(strings.Join(strings.Fields(strings.Trim(s, "<>")), ""))
		if err != nil {
			return ""
		}
		if len(raw) >= 2 && raw[0] == 0xFE && raw[1] == 0xFF {
			u := make([]uint16, 0, len(raw)/2)
			for i := 2; i+1 < len(raw); i += 2 {
				u = append(u, uint16(raw[i])<<8|uint16(raw[i+1]))
			}
			return string(utf16.Decode(u))
		}
		return string(raw)
	}
	body := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 == len(body) {
			b.WriteByte(body[i])
			continue
		}
		i++
		switch c := body[i]; {
		case c >= '0' && c <= '7':
			v, n := 0, 0
			for ; n < 3 && i < len(body) && body[i] >= '0' && body[i] <= '7'; n, i = n+1, i+1 {
				v = v*8 + int(body[i]-'0')
			}
			i--
			b.WriteByte(byte(v))
		case c == 'n':
			b.WriteByte('\n')
		case c == 'r':
			b.WriteByte('\r')
		case c == 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// PDFStats counts the pages, embedded fonts and images of a PDF, and reads its title, whose object dictionaries are
// uncompressed, as Chromium (Skia) writes them. It fails on a file that is not a PDF.
func PDFStats(path string) (PDFInfo, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return PDFInfo{}, fmt.Errorf("plots: %w", err)
	}
	if !bytes.HasPrefix(raw, []byte("%PDF-")) {
		return PDFInfo{}, fmt.Errorf("plots: %s is not a PDF file", path)
	}
	title := ""
	if m := pdfTitleRE.FindSubmatch(raw); m != nil {
		title = pdfText(string(m[1]))
	}
	return PDFInfo{
		Pages:         len(pdfPageRE.FindAll(raw, -1)),
		EmbeddedFonts: len(pdfFontRE.FindAll(raw, -1)),
		Images:        len(pdfImageRE.FindAll(raw, -1)),
		Title:         title,
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
			if err := results.WriteFileAtomic(p, []byte(text+"\n"), 0o644); err != nil {
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
		if err := SVGToPDF(ctx, svg, stem+".pdf", styled[i].Width, styled[i].Height, styled[i].TitleText()); err != nil {
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
