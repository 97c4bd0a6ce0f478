package plots

import (
	"context"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestDecompositionBars(t *testing.T) {
	d := Decomposition{Title: "t", Sets: []string{"test", "noise"}, YLabel: "trace", Nets: []DecompositionNet{
		{Name: "deterministic", Aleatoric: []float64{0.1, 0.5}, Epistemic: []float64{0, 0}},
		{Name: "variational", Aleatoric: []float64{0.2, 0.4}, Epistemic: []float64{0.05, 0.3}},
	}}
	c, err := DecompositionBars("dec", d)
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	if len(s) != 4 {
		t.Fatalf("%d series, want 2 per model", len(s))
	}
	for i, want := range []struct {
		name, stack, color string
		data               []float64
		light              bool
	}{
		{"deterministic · aleatoric", "deterministic", Palette[0], []float64{0.1, 0.5}, true},
		{"deterministic · epistemic", "deterministic", Palette[0], []float64{0, 0}, false},
		{"variational · aleatoric", "variational", Palette[1], []float64{0.2, 0.4}, true},
		{"variational · epistemic", "variational", Palette[1], []float64{0.05, 0.3}, false},
	} {
		style := s[i]["itemStyle"].(map[string]any)
		data := s[i]["data"].([]any)
		_, light := style["opacity"]
		if s[i]["name"] != want.name || s[i]["stack"] != want.stack || style["color"] != want.color || light != want.light ||
			len(data) != 2 || data[0] != want.data[0] || data[1] != want.data[1] {
			t.Errorf("series %d = %v", i, s[i])
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*Decomposition)
		err  string
	}{
		{"no models", func(d *Decomposition) { d.Nets = nil }, "0 models"},
		{"short", func(d *Decomposition) { d.Nets[1].Epistemic = d.Nets[1].Epistemic[:1] }, `"variational": 1 epistemic values for 2 input sets`},
		{"NaN", func(d *Decomposition) { d.Nets[0].Aleatoric = []float64{math.NaN(), 0} }, "NaN"},
		{"twice", func(d *Decomposition) { d.Nets[1].Name = "deterministic" }, "two series"},
	} {
		bad := d
		bad.Nets = append([]DecompositionNet(nil), d.Nets...)
		tc.edit(&bad)
		if _, err := DecompositionBars("dec", bad); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestScatterChart(t *testing.T) {
	d := Scatter{Title: "t", XLabel: "aleatoric", YLabel: "epistemic", Groups: []ScatterGroup{
		{Name: "test", Points: [][2]float64{{0.1, 0.2}, {0.3, 0}}, Color: "#7f7f7f"},
		{Name: "noise", Points: [][2]float64{{0.5, 0.5}}},
	}}
	c, err := ScatterChart("sc", d)
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	if len(s) != 2 || s[0]["itemStyle"].(map[string]any)["color"] != "#7f7f7f" || s[1]["itemStyle"].(map[string]any)["color"] != Palette[1] {
		t.Fatalf("series: %v", s)
	}
	pts := s[0]["data"].([]any)
	if len(pts) != 2 || pts[0].([]any)[0] != 0.1 || pts[0].([]any)[1] != 0.2 {
		t.Errorf("points of test: %v", pts)
	}
	for _, tc := range []struct {
		name string
		d    Scatter
		err  string
	}{
		{"no groups", Scatter{}, "no groups"},
		{"infinite", Scatter{Groups: []ScatterGroup{{Name: "a", Points: [][2]float64{{math.Inf(1), 0}}}}}, "point 0"},
		{"unnamed", Scatter{Groups: []ScatterGroup{{Points: [][2]float64{{0, 0}}}}}, "no name"},
	} {
		if _, err := ScatterChart("sc", tc.d); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

// Notebook 03's decomposition chart at column width: all four input sets are labelled on the x axis
// (ECharts hid two of them as overlapping), each label within its band.
func TestDecompositionShowsEveryLabel(t *testing.T) {
	needRenderTools(t)
	sets := []string{"test", "rotated 90°", "foreign: fashion-mnist", "uniform noise"}
	d := Decomposition{Title: "mean aleatoric (light) and epistemic (dark) trace per input set", Sets: sets, YLabel: "trace",
		Nets: []DecompositionNet{{Name: "VI", Aleatoric: []float64{1, 2, 3, 4}, Epistemic: []float64{0.1, 0.2, 0.3, 0.4}}}}
	c, err := DecompositionBars("decomposition", d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, size := range []FigureSize{ColumnFigure, WideFigure} {
		s, err := c.Styled(Style{FontFamily: "sans-serif", FontSize: size.FontSize}, size.Width, size.Height)
		if err != nil {
			t.Fatal(err)
		}
		paths, err := RenderSVG(context.Background(), dir, s)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(paths[0])
		// The texts of the SVG joined without spaces: a label broken into lines reads whole.
		var text strings.Builder
		for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(string(raw), -1) {
			text.WriteString(strings.ReplaceAll(m[1], " ", ""))
		}
		for _, set := range sets {
			if !strings.Contains(text.String(), strings.ReplaceAll(set, " ", "")) {
				t.Errorf("%d px: the x axis lacks label %q (texts: %s)", size.Width, set, text.String())
			}
		}
	}
}
