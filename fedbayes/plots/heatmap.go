package plots

import (
	"fmt"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// Partition is the data of the partition heatmap: how many examples of each class each client
// holds (Jamoussi et al., BA-BFL, Fig. 2).
type Partition struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// Counts[k][c] is the number of examples of class c on client k.
	Counts [][]int `json:"counts"`
	// ClassNames label the classes; empty means 0, 1, 2, ...
	ClassNames []string `json:"class_names,omitempty"`
}

// PartitionHeatmap draws a client-by-class heatmap of example counts, clients on the y axis
// (client 1 at the top) and classes on the x axis, with a colour scale from 0 to the largest count.
func PartitionHeatmap(name string, d Partition) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: partition heatmap %q: %s", name, fmt.Sprintf(format, args...))
	}
	K := len(d.Counts)
	if K == 0 {
		return fail("no clients")
	}
	C := len(d.Counts[0])
	if C == 0 {
		return fail("client 0 has no classes")
	}
	if len(d.ClassNames) != 0 && len(d.ClassNames) != C {
		return fail("%d class names for %d classes", len(d.ClassNames), C)
	}
	classes := d.ClassNames
	if len(classes) == 0 {
		classes = make([]string, C)
		for c := range classes {
			classes[c] = strconv.Itoa(c)
		}
	}
	clients := make([]string, K)
	maxCount := 0
	data := make([]opts.HeatMapData, 0, K*C)
	for k, row := range d.Counts {
		if len(row) != C {
			return fail("client %d has %d classes, client 0 has %d", k, len(row), C)
		}
		clients[k] = strconv.Itoa(k + 1)
		for c, n := range row {
			if n < 0 {
				return fail("client %d, class %d: negative count %d", k, c, n)
			}
			maxCount = max(maxCount, n)
			data = append(data, opts.HeatMapData{Value: [3]int{c, k, n}})
		}
	}
	hm := charts.NewHeatMap()
	hm.SetXAxis(classes)
	hm.AddSeries("examples", data)
	hm.SetGlobalOptions(
		charts.WithTitleOpts(opts.Title{Title: d.Title}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "class", Data: classes, SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Name: "client", Data: clients, Inverse: opts.Bool(true), SplitArea: &opts.SplitArea{Show: opts.Bool(true)}}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithVisualMapOpts(opts.VisualMap{
			Type: "continuous", Calculable: opts.Bool(true), Min: 0, Max: float32(max(maxCount, 1)),
			Orient: "vertical", Right: "0", Top: "middle",
			InRange: &opts.VisualMapInRange{Color: []string{"#f7fbff", "#6baed6", "#08306b"}},
		}),
	)
	c, err := FromGoECharts(name, hm, 0, 0)
	if err != nil {
		return nil, err
	}
	return c.Styled(ScreenStyle, 0, 0)
}
