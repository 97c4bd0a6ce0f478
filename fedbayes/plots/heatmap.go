package plots

import (
	"fmt"
	"slices"
	"strconv"
)

// Partition is the data of the partition heatmap: how many examples of each class each client
// holds (Jamoussi et al., BA-BFL, Fig. 2); a client's size is its row's sum.
type Partition struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// Counts[k][c] is the number of examples of class c on client k.
	Counts [][]int `json:"counts"`
	// ClassNames label the classes; empty means 0, 1, 2, ...
	ClassNames []string `json:"class_names,omitempty"`
}

// PartitionHeatmap draws a client-by-class heatmap of example counts, clients on the y axis
// (client 1 at the top) and classes on the x axis, with a colour scale from 0 to the largest count,
// and beside it, on the same client rows, a bar of each client's size (its examples over every
// class), so that quantity skew (docs/partitions.md, partition.sizes) shows as well as label skew.
// The caption states the range of sizes.
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
	sizes := make([]int, K)
	maxCount := 0
	data := make([]any, 0, K*C)
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
			sizes[k] += n
			data = append(data, map[string]any{"value": []int{c, k, n}})
		}
	}
	category := func(name string, cats []string, grid int) map[string]any {
		return map[string]any{"type": "category", "name": name, "data": cats, "gridIndex": grid,
			"splitArea": map[string]any{"show": true}}
	}
	clientAxis := category("client", clients, 0)
	clientAxis["inverse"] = true
	sizeAxis := category("", clients, 1)
	sizeAxis["inverse"], sizeAxis["axisLabel"], sizeAxis["axisTick"] = true, map[string]any{"show": false}, map[string]any{"show": false}
	option := map[string]any{
		"title": map[string]any{"text": d.Title},
		// Two panels side by side (Styled places them): the heatmap, and the sizes on its rows.
		"grid":  []any{map[string]any{}, map[string]any{"width": fmt.Sprintf("%g%%", SizePanelShare*100)}},
		"xAxis": []any{category("class", classes, 0), map[string]any{"type": "value", "name": "examples", "gridIndex": 1, "min": 0, "splitNumber": 2}},
		"yAxis": []any{clientAxis, sizeAxis},
		"series": []any{
			map[string]any{"type": "heatmap", "name": "examples", "data": data, "xAxisIndex": 0, "yAxisIndex": 0},
			map[string]any{"type": "bar", "name": "client size", "data": sizes, "xAxisIndex": 1, "yAxisIndex": 1,
				"barCategoryGap": "25%", "itemStyle": map[string]any{"color": "#737373"}},
		},
		"tooltip": map[string]any{"show": true, "trigger": "item"},
		"legend":  map[string]any{"show": false},
		"visualMap": []any{map[string]any{
			"type": "continuous", "calculable": true, "min": 0, "max": max(maxCount, 1), "seriesIndex": 0,
			"orient": "vertical", "top": "middle",
			"inRange": map[string]any{"color": []string{"#f7fbff", "#6baed6", "#08306b"}},
		}},
	}
	c, err := NewChart(name, option, 0, 0)
	if err != nil {
		return nil, err
	}
	lo, hi := slices.Min(sizes), slices.Max(sizes)
	c.Caption = fmt.Sprintf("Right: each client's number of examples, %d to %d", lo, hi)
	if lo > 0 && hi > lo {
		c.Caption += fmt.Sprintf(" (the largest %.3g times the smallest)", float64(hi)/float64(lo))
	}
	c.Caption += "."
	return c.Styled(ScreenStyle, 0, 0)
}
