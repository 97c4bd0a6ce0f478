package plots

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
)

// Chart is one ECharts chart: its option (plain JSON data, no JavaScript functions) and its size.
// The same Chart draws in a notebook (Display), in an HTML page (PageHTML) and as a static figure
// (WriteFigures).
type Chart struct {
	// Name identifies the chart: it is the file stem of its static figures and part of its HTML id.
	// Letters, digits, '-', '_' and '.' only.
	Name string
	// Width and Height are the size in CSS pixels.
	Width, Height int
	// Option is the ECharts option (https://echarts.apache.org/en/option.html) as plain JSON values
	// (maps, slices, strings, float64, bool, nil).
	Option map[string]any
	// Caption is the figure's caption (its provenance: data, budget, seeds), shown under the chart in
	// a page and written beside a static figure as NAME.txt (CaptionText).
	Caption string
	// fullTitle is the title as given, when Styled shortened the drawn one to fit the width.
	fullTitle string
}

// GoEChartsChart is what FromGoECharts needs of a go-echarts chart (*charts.Line, *charts.Bar, ...).
type GoEChartsChart interface {
	// Validate finalises the go-echarts configuration (axis data, assets).
	Validate()
	// JSON returns the ECharts option.
	JSON() map[string]interface{}
}

// Default sizes of interactive charts, in CSS pixels.
const (
	DefaultWidth  = 720
	DefaultHeight = 400
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// goEChartsFuncPrefix marks JavaScript functions in go-echarts options (opts.FuncOpts); they cannot
// be represented in JSON and server-side rendering.
const goEChartsFuncPrefix = "__f__"

// FromGoECharts converts a go-echarts chart into a Chart of the given name and size (0 means the
// default size). The option goes through JSON, so the Chart holds plain values. It fails when the
// option is not plain JSON: non-finite numbers or JavaScript functions (opts.FuncOpts).
func FromGoECharts(name string, c GoEChartsChart, width, height int) (*Chart, error) {
	if c == nil {
		return nil, fmt.Errorf("plots: chart %q: nil go-echarts chart", name)
	}
	c.Validate()
	raw, err := json.Marshal(c.JSON())
	if err != nil {
		return nil, fmt.Errorf("plots: chart %q: option is not valid JSON (non-finite number?): %w", name, err)
	}
	var option map[string]any
	if err := json.Unmarshal(raw, &option); err != nil {
		return nil, fmt.Errorf("plots: chart %q: %w", name, err)
	}
	return NewChart(name, option, width, height)
}

// NewChart makes a Chart from an ECharts option given as plain JSON values, checking the name,
// the size (0 means the default) and that the option holds no JavaScript function.
func NewChart(name string, option map[string]any, width, height int) (*Chart, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("plots: chart name %q: use only letters, digits, '-', '_' and '.'", name)
	}
	if width == 0 {
		width = DefaultWidth
	}
	if height == 0 {
		height = DefaultHeight
	}
	if width < 50 || height < 50 || width > 10000 || height > 10000 {
		return nil, fmt.Errorf("plots: chart %q: size %dx%d out of range [50, 10000] pixels", name, width, height)
	}
	if option == nil {
		return nil, fmt.Errorf("plots: chart %q: nil option", name)
	}
	if path := findFunc(option, "option"); path != "" {
		return nil, fmt.Errorf("plots: chart %q: %s is a JavaScript function; fedbayes charts must be plain JSON (for static rendering)", name, path)
	}
	return &Chart{Name: name, Width: width, Height: height, Option: option}, nil
}

// findFunc returns the path of the first go-echarts JavaScript function string inside v, or "".
func findFunc(v any, path string) string {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, goEChartsFuncPrefix) {
			return path
		}
	case map[string]any:
		for k, e := range x {
			if p := findFunc(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := findFunc(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// OptionJSON returns the option as JSON text. It fails on non-finite numbers.
func (c *Chart) OptionJSON() ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("plots: nil chart")
	}
	raw, err := json.Marshal(c.Option)
	if err != nil {
		return nil, fmt.Errorf("plots: chart %q: option is not valid JSON: %w", c.Name, err)
	}
	return raw, nil
}

// Clone returns a deep copy of the chart (through JSON).
func (c *Chart) Clone() (*Chart, error) {
	raw, err := c.OptionJSON()
	if err != nil {
		return nil, err
	}
	var option map[string]any
	if err := json.Unmarshal(raw, &option); err != nil {
		return nil, fmt.Errorf("plots: chart %q: %w", c.Name, err)
	}
	return &Chart{Name: c.Name, Width: c.Width, Height: c.Height, Option: option, Caption: c.Caption, fullTitle: c.fullTitle}, nil
}

// CaptionText returns the text to print under the figure: the full title when the drawn one was
// shortened to fit the chart's width, then Caption.
func (c *Chart) CaptionText() string {
	parts := make([]string, 0, 2)
	if c.fullTitle != "" {
		parts = append(parts, c.fullTitle)
	}
	if c.Caption != "" {
		parts = append(parts, c.Caption)
	}
	return strings.Join(parts, ". ")
}

// TitleText returns the chart's title in full on one line: as given, even where Styled shortened or
// wrapped the drawn one ("" for none). Static figures carry it as their document title.
func (c *Chart) TitleText() string {
	if c.fullTitle != "" {
		return c.fullTitle
	}
	if t, ok := c.Option["title"].(map[string]any); ok {
		text, _ := t["text"].(string)
		return strings.Join(strings.Fields(text), " ")
	}
	return ""
}

// checkFinite returns an error naming where a value is NaN or infinite.
func checkFinite(where string, xs ...float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if len(xs) == 1 {
				return fmt.Errorf("%s is %v", where, x)
			}
			return fmt.Errorf("%s[%d] is %v", where, i, x)
		}
	}
	return nil
}
