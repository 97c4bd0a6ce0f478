package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Style is the text and layout style applied to a chart's option before it is drawn.
type Style struct {
	// FontFamily is the CSS font family of every text.
	FontFamily string
	// FontSize is the size in pixels of axis labels, axis names and legend; the title is 1 px larger.
	FontSize int
	// Animation turns ECharts' animations on (interactive charts) or off (static figures).
	Animation bool
}

// ScreenStyle is the style of interactive charts in notebooks and browsers.
var ScreenStyle = Style{FontFamily: "sans-serif", FontSize: 13, Animation: true}

// FigureSize is the size of a static figure in CSS pixels (1 px = 1/96 in in an SVG viewer) with its
// font size.
type FigureSize struct {
	Width, Height, FontSize int
}

// Paper figure sizes for a two-column paper. A column is about 3.5 in (252 pt) wide: a 360 px wide
// figure placed at column width scales 1 px to 0.7 pt, so 12 px text prints at about 8.4 pt.
var (
	// ColumnFigure fits one column of a two-column paper.
	ColumnFigure = FigureSize{Width: 360, Height: 250, FontSize: 12}
	// WideFigure spans both columns (about 7 in).
	WideFigure = FigureSize{Width: 720, Height: 300, FontSize: 12}
)

// FigureSizeByName returns the figure size called "column" or "wide".
func FigureSizeByName(name string) (FigureSize, error) {
	switch name {
	case "", "column":
		return ColumnFigure, nil
	case "wide":
		return WideFigure, nil
	}
	return FigureSize{}, fmt.Errorf("unknown figure size %q (want \"column\" or \"wide\")", name)
}

// Styled returns a copy of the chart at the given size (0 keeps the chart's own) with the style
// applied: fonts of title, legend, axes and visual map, animation, and the plot grid placed below
// the title and legend so they do not overlap at small sizes. A legend of up to MaxTopLegendRows
// rows sits above the plot; a longer one (a sweep of many settings) goes below it in aligned
// columns, and the chart grows by the legend's height so that the plot keeps its size.
func (c *Chart) Styled(s Style, width, height int) (*Chart, error) {
	out, err := c.Clone()
	if err != nil {
		return nil, err
	}
	if width > 0 {
		out.Width = width
	}
	if height > 0 {
		out.Height = height
	}
	if s.FontSize <= 0 {
		return nil, fmt.Errorf("plots: chart %q: style font size %d must be positive", c.Name, s.FontSize)
	}
	// The title is fitted to the width (at most MaxTitleLines lines, shortened with "…" beyond), from
	// the title as first given: a chart styled again at another width starts from the full text.
	title := sub(out.Option, "title")
	full := out.fullTitle
	if full == "" {
		// The title as drawn: lines this function broke join again (line breaks in a given title
		// are taken as spaces too).
		text, _ := title["text"].(string)
		full = strings.Join(strings.Fields(text), " ")
	}
	if full != "" {
		lines, fits := FitText(full, float64(out.Width-16), float64(s.FontSize+1), true, MaxTitleLines)
		title["text"] = strings.Join(lines, "\n")
		out.fullTitle = ""
		if !fits {
			out.fullTitle = full
		}
	}
	out.Height += applyStyle(out.Option, s, out.Width, out.Height)
	return out, nil
}

// sub returns m[key] as a map, creating it when absent.
func sub(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	v := map[string]any{}
	m[key] = v
	return v
}

// eachComponent calls f on m[key] when it is one component (a map) or on each of a list of them.
func eachComponent(m map[string]any, key string, f func(map[string]any)) {
	switch v := m[key].(type) {
	case map[string]any:
		f(v)
	case []any:
		for _, e := range v {
			if em, ok := e.(map[string]any); ok {
				f(em)
			}
		}
	}
}

// MaxTopLegendRows is the most legend rows placed above the plot.
const MaxTopLegendRows = 2

// MaxTitleLines is the most lines a title is wrapped into to fit a chart's width; a longer title is
// shortened with "…" and given in full by the caption (Chart.CaptionText).
const MaxTitleLines = 2

// applyStyle styles option o for a chart of the given width and height and returns the height to
// add to the chart for a legend placed below the plot.
func applyStyle(o map[string]any, s Style, width, height int) int {
	fs := float64(s.FontSize)
	font := map[string]any{"fontSize": fs}
	if s.FontFamily != "" {
		font["fontFamily"] = s.FontFamily
	}
	setFont := func(m map[string]any, key string, size float64) {
		t := sub(m, key)
		for k, v := range font {
			t[k] = v
		}
		t["fontSize"] = size
	}
	o["textStyle"] = map[string]any{"fontSize": fs, "fontFamily": font["fontFamily"]}
	if s.FontFamily == "" {
		delete(o["textStyle"].(map[string]any), "fontFamily")
	}
	o["animation"] = s.Animation

	title := sub(o, "title")
	setFont(title, "textStyle", fs+1)
	setFont(title, "subtextStyle", fs-1)
	titleText, _ := title["text"].(string)
	hasTitle := titleText != ""
	// titleHeight is the height of the title's lines (1.25 em each, ECharts' default line height
	// for its bold text is the font size plus a little).
	titleHeight := 0.0
	if hasTitle {
		titleHeight = float64(strings.Count(titleText, "\n")+1) * math.Round((fs+1)*1.25)
	}
	if hasTitle {
		title["left"], title["top"] = "center", 4
	}

	legendRows, below := 0, false
	eachComponent(o, "legend", func(l map[string]any) {
		setFont(l, "textStyle", fs)
		if show, ok := l["show"].(bool); ok && !show {
			return
		}
		legendRows = legendRowCount(o, fs, float64(width))
		l["type"] = "plain"
		l["left"] = "center"
		l["itemGap"] = math.Round(fs * 0.8)
		l["itemWidth"] = math.Round(fs * 1.8)
		l["itemHeight"] = math.Round(fs * 0.8)
		if legendRows > MaxTopLegendRows {
			// Below the plot, in columns: every entry as wide as the longest name.
			below = true
			cols, textWidth := legendColumns(o, fs, float64(width))
			legendRows = (len(legendNames(o)) + cols - 1) / cols
			delete(l, "top")
			l["bottom"] = 4
			t := sub(l, "textStyle")
			t["width"], t["overflow"] = textWidth, "truncate"
			return
		}
		if hasTitle {
			l["top"] = titleHeight + 12
		} else {
			l["top"] = 2
		}
	})
	gridLeft, gridRight := math.Round(fs*3.8)+8, 16.0
	if _, ok := o["visualMap"]; ok {
		gridRight = math.Round(fs*5) + 16
	}
	labelLines := 1 // lines of the x axis' category labels
	for _, axis := range []string{"xAxis", "yAxis"} {
		eachComponent(o, axis, func(a map[string]any) {
			setFont(a, "axisLabel", fs)
			setFont(a, "nameTextStyle", fs)
			a["nameLocation"] = "middle"
			// Keep the axes at the grid's edges even when the other axis' range crosses zero.
			sub(a, "axisLine")["onZero"] = false
			if axis == "xAxis" {
				a["nameGap"] = math.Round(fs * 1.9)
			} else {
				a["nameGap"] = math.Round(fs * 3.2)
			}
			// Category labels: every one shown (ECharts hides those it finds overlapping), each
			// broken into lines within its band; the axis name moves down below the lines.
			cats, _ := a["data"].([]any)
			if axis != "xAxis" || a["type"] != "category" || len(cats) == 0 {
				return
			}
			band := (float64(width)-gridLeft-gridRight)/float64(len(cats)) - 4
			l := sub(a, "axisLabel")
			l["interval"], l["width"], l["overflow"] = 0, math.Floor(band), "break"
			for _, c := range cats {
				lines, _ := FitText(fmt.Sprint(c), band, fs, false, 4)
				labelLines = max(labelLines, len(lines))
			}
			a["nameGap"] = math.Round(fs*1.9 + float64(labelLines-1)*fs*1.2)
		})
	}
	eachComponent(o, "visualMap", func(v map[string]any) { setFont(v, "textStyle", fs) })

	top := 8.0
	if hasTitle {
		top += titleHeight + 10
	}
	bottom, extra := math.Round(fs*3.2+float64(labelLines-1)*fs*1.2), 0.0
	if below {
		// A row is a line of text plus the item gap (0.8 em): fs + 11 px, measured in Chromium.
		extra = float64(legendRows)*(fs+11) + 12
		bottom += extra
	} else {
		top += float64(legendRows) * (fs + 8)
	}
	grid := map[string]any{
		"left": gridLeft, "right": gridRight, "top": top + 8, "bottom": bottom,
		"containLabel": false,
	}
	if share, ok := sidePanelShare(o); ok {
		o["grid"] = sidePanels(o, grid, share, width, fs)
	} else {
		o["grid"] = grid
	}
	if height > 0 {
		fitYName(o, fs, float64(height)+extra, top+8, bottom)
	}
	return int(extra)
}

// SizePanelShare is the share of a chart's width that a side panel takes (grid 1 of a chart with two
// grids, the sizes beside PartitionHeatmap's heatmap).
const SizePanelShare = 0.2

// sidePanelShare returns the width share of grid 1 when option o has two grids, the second a side
// panel whose "width" is a percentage of the chart's width ("20%", as PartitionHeatmap gives it).
func sidePanelShare(o map[string]any) (float64, bool) {
	grids, ok := o["grid"].([]any)
	if !ok || len(grids) != 2 {
		return 0, false
	}
	g, _ := grids[1].(map[string]any)
	w, _ := g["width"].(string)
	pct, err := strconv.ParseFloat(strings.TrimSuffix(w, "%"), 64)
	if !strings.HasSuffix(w, "%") || err != nil || pct <= 0 || pct >= 100 {
		return 0, false
	}
	return pct / 100, true
}

// sidePanels splits the plot area grid into the main plot and a side panel of share of the width at
// its right, with the visual map, when the chart has one, between them; both have grid's top and
// bottom. The panel keeps its width as a percentage, so that the chart can be styled again.
func sidePanels(o map[string]any, grid map[string]any, share float64, width int, fs float64) []any {
	panel := math.Round(share * float64(width))
	gap := math.Round(fs * 1.5)
	main, side := map[string]any{}, map[string]any{}
	for k, v := range grid {
		main[k], side[k] = v, v
	}
	// grid's right leaves room for the visual map, which moves left of the panel, its labels a gap
	// clear of the main plot.
	main["right"] = grid["right"].(float64) + panel + 2*gap
	delete(side, "left")
	side["right"], side["width"] = 16.0, fmt.Sprintf("%g%%", share*100)
	eachComponent(o, "visualMap", func(v map[string]any) { v["right"] = 16 + panel + gap })
	return []any{main, side}
}

// fitYName shortens, with "…", a y axis name longer than the chart lets it be: ECharts centres it on
// the plot of a chart height px tall whose grid leaves top and bottom px, so it may reach each edge
// of the chart less 4 px; beyond that its ends would be clipped.
func fitYName(o map[string]any, fs, height, top, bottom float64) {
	half := (height - top - bottom) / 2
	avail := 2*math.Min(top+half, bottom+half) - 8
	eachComponent(o, "yAxis", func(a map[string]any) {
		name, _ := a["name"].(string)
		if name == "" || avail <= 0 || TextWidth(name, fs, false) <= avail {
			return
		}
		lines, _ := FitText(name, avail, fs, false, 1)
		a["name"] = lines[0]
	})
}

// legendNames returns the distinct series names of option o, in order (the legend's entries).
func legendNames(o map[string]any) []string {
	var names []string
	seen := map[string]bool{}
	eachComponent(o, "series", func(s map[string]any) {
		n, _ := s["name"].(string)
		if n != "" && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	})
	return names
}

// legendColumns returns how many equal columns of legend entries fit in width at font size fs, and
// the text width of an entry (the longest name, at most the whole width).
func legendColumns(o map[string]any, fs, width float64) (int, float64) {
	longest := 0.0
	for _, n := range legendNames(o) {
		longest = max(longest, TextWidth(n, fs, false))
	}
	avail := width - 20
	text := math.Min(math.Ceil(longest)+1, avail-1.8*fs-5-0.8*fs)
	item := text + 1.8*fs + 5 + 0.8*fs
	return max(1, int(avail/item)), math.Round(text)
}

// legendRowCount estimates how many rows the legend of option o needs at font size fs in a chart
// of the given width (TextWidth of each name plus the symbol and the gaps).
func legendRowCount(o map[string]any, fs, width float64) int {
	names := legendNames(o)
	if len(names) == 0 {
		return 0
	}
	avail := width - 20
	rows, x := 1, 0.0
	for _, n := range names {
		w := TextWidth(n, fs, false) + 1.8*fs + 5 + 0.8*fs
		if x > 0 && x+w > avail {
			rows++
			x = 0
		}
		x += w
	}
	return rows
}

// seriesNames checks that the series of one chart have distinct, non-empty names.
type seriesNames map[string]bool

// add records series i's name, or says why it is not allowed.
func (n seriesNames) add(i int, name string) error {
	if name == "" {
		return fmt.Errorf("series %d has no name", i)
	}
	if n[name] {
		return fmt.Errorf("two series are named %q", name)
	}
	n[name] = true
	return nil
}
