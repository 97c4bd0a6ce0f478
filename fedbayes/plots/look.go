package plots

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"fedbayes.dev/fedbayes/report"
)

// Palette is the colour of the i-th series (cyclic), chosen to stay distinct in print: Tableau's ten
// with its grey replaced by indigo, since grey is the clients' colour in the toy charts (toy.go).
var Palette = []string{
	"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
	"#8c564b", "#e377c2", "#17becf", "#3b3eac", "#bcbd22",
}

func seriesColor(i int) string { return Palette[i%len(Palette)] }

// Markers and Dashes give each line series a marker and a dash pattern besides its colour. Series i
// has colour i mod 10, marker i mod 8 and dash i mod 5: no two of the first 40 series share marker
// and dash, so a figure of up to 40 series stays readable printed in grayscale, where colours may
// merge (and no two of the first 40 share all three). Every marker is filled with the series' colour
// (no white fill that would hide a marker beneath it); the ones ECharts lacks are SVG paths.
var (
	Markers = []string{"circle", "rect", "triangle", "diamond", markerTriangleDown, markerCross, markerPlus, markerStar}
	Dashes  = []string{"solid", "dashed", "dotted", "dashdot", "longdash"}
)

// dashStyles are the ECharts line types of Dashes, with the drawing layer of each (solid lines
// lowest, the sparsest patterns on top, so that a patterned curve on a solid one shows both) and
// the marker size of that layer (lower layers larger, so that a marker on top of another leaves its
// rim visible).
var dashStyles = map[string]struct {
	echarts any
	layer   int
	marker  float64
}{
	"solid":    {"solid", 0, 9},
	"longdash": {[]any{12.0, 4.0}, 1, 8},
	"dashed":   {"dashed", 2, 7.5},
	"dashdot":  {[]any{8.0, 3.0, 2.0, 3.0}, 3, 7},
	"dotted":   {"dotted", 4, 6},
}

// LineType returns a Dashes name as ECharts' lineStyle.type: a name ECharts knows or a dash array in
// pixels; an unknown name is returned as it is.
func LineType(dash string) any {
	if st, ok := dashStyles[dash]; ok {
		return st.echarts
	}
	return dash
}

// Marker paths in ECharts' "path://" form (scaled to the symbol size).
const (
	markerTriangleDown = "path://M0,0L10,0L5,9Z"
	markerCross        = "path://M0,2L2,0L5,3L8,0L10,2L7,5L10,8L8,10L5,7L2,10L0,8L3,5Z"
	markerPlus         = "path://M3.5,0H6.5V3.5H10V6.5H6.5V10H3.5V6.5H0V3.5H3.5Z"
	markerStar         = "path://M5,0L6.2,3.5L10,3.6L7,5.9L8.1,9.5L5,7.4L1.9,9.5L3,5.9L0,3.6L3.8,3.5Z"
)

// Look is the colour, marker and dash of series i of a line chart, and how it is drawn so that a
// curve lying exactly on another one still shows.
type Look struct {
	Color, Marker, Dash string
	// MarkerSize is the marker's size in pixels, by the dash's layer: lower layers have larger
	// markers, so a marker drawn on top of another leaves that one's rim visible.
	MarkerSize float64
	// DashOffset shifts the dash pattern (pixels), so that two curves of the same pattern that
	// coincide interleave their dashes instead of covering each other.
	DashOffset float64
	// Z is the drawing order (higher on top): solid lines lowest, then long dashes, dashes,
	// dash-dots and dots, each layer in series order; a patterned curve drawn over a solid one
	// leaves it visible through its gaps (CF under GAA when the clients are of equal size).
	Z int
}

// LookCycle is the number of looks SeriesLook tells apart by colour and marker: the least common
// multiple of len(Palette) and len(Markers), so that no two looks below it share colour and marker.
const LookCycle = 40

// SeriesLook returns look i: colour i mod 10 and marker i mod 8 of m = i mod LookCycle, and dash
// (m + k) mod 5 for k = i / LookCycle, so that looks m, m + 40, m + 80, ... share colour and marker
// and differ by their dash (the variants of one method in IdentityLooks). Below LookCycle, look i
// has dash i mod 5 (see Markers).
func SeriesLook(i int) Look {
	m, k := i%LookCycle, i/LookCycle
	dash := Dashes[(m+k)%len(Dashes)]
	st := dashStyles[dash]
	return Look{
		Color: seriesColor(m), Marker: Markers[m%len(Markers)], Dash: dash,
		MarkerSize: st.marker,
		DashOffset: float64((m / len(Dashes)) % 2 * 4),
		Z:          3 + st.layer*100 + i%100,
	}
}

// methodLooks lists the methods and rules fedbayes names (DisplayNames' ids, and the baselines of
// results' tables), each at the look index (SeriesLook) that is its own in every figure: FedAvg, then
// the rules in the tables' order (report.RuleOrder: ten distinct colours), their aliases, the other
// baselines; the predictive-space methods from 21 and FedBE from 31, so that each group drawn
// together with FedAvg has colours of its own. An alias (and a former name, engine.MethodAliases:
// "fedbe" for fedbe-gaussian) has its method's look. The empty entries are
// the looks IdentityLooks gives first to names it does not know.
var methodLooks = [LookCycle][]string{
	0: {"fedavg"}, 1: {"eaa", "nwa"}, 2: {"gaa", "ws"}, 3: {"aalv"}, 4: {"ppa"}, 5: {"lp"}, 6: {"conflation"},
	7: {"cf", "wc"}, 8: {"rklb", "llp"}, 9: {"wb"}, 10: {"dwc"}, 15: {"fed"}, 16: {"deterministic", "det"},
	21: {"bcm"}, 22: {"mixture"}, 23: {"beta-predbayes"}, 24: {"d-bcm"}, 25: {"d-beta-predbayes"},
	26: {"ep-mcmc"}, 27: {"fedpa"}, 28: {"oneshot"}, 29: {"fedkt"}, 30: {"ep-mcmc-full-covariance"},
	31: {"fedbe-gaussian", "fedbe"}, 32: {"fedbe-dirichlet"}, 33: {"fedbe-gaussian-no-swa"},
}

// nameWords splits a name into lower-case words at anything but letters and digits.
func nameWords(name string) []string {
	return strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// MethodLook returns the look index (methodLooks) of the method a series name is of: the known
// method id or display name (DisplayNames) whose words occur in the name's words most fully, in
// order and contiguous ("vi-EAA-iid" and "FVBWA-EAA" are EAA, "d-bcm" is D-BCM, not BCM). ok is
// false when the name holds none.
func MethodLook(name string) (index int, ok bool) {
	index, _, _, ok = findMethod(nameWords(name))
	return index, ok
}

// findMethod finds the method whose id or display name occurs most fully in words, as a contiguous
// run: its look index, its id and where the run starts and ends in words.
func findMethod(words []string) (index int, id string, span [2]int, ok bool) {
	best := 0
	for i, ids := range methodLooks {
		for _, mid := range ids {
			for _, form := range []string{mid, DisplayName(mid)} {
				w := nameWords(form)
				if at := runIndex(words, w); len(w) > best && at >= 0 {
					best, index, id, span, ok = len(w), i, mid, [2]int{at, at + len(w)}, true
				}
			}
		}
	}
	return index, id, span, ok
}

// runIndex returns where sub occurs in words as a contiguous run, or -1.
func runIndex(words, sub []string) int {
	for i := 0; i+len(sub) <= len(words); i++ {
		if slices.Equal(words[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// ShortNames returns names less the leading "-"-separated words they all share ("sweep-EAA-iid" and
// "sweep-GAA-iid" are "EAA-iid" and "GAA-iid"), so that a legend shows what tells its series apart
// (a figure's title names what they share). A single name, or one that would be left empty, is
// kept whole.
func ShortNames(names []string) []string {
	out := append([]string(nil), names...)
	if len(names) < 2 {
		return out
	}
	words := make([][]string, len(names))
	for i, n := range names {
		words[i] = strings.Split(n, "-")
	}
	common := len(words[0])
	for _, w := range words[1:] {
		n := 0
		for n < common && n < len(w) && w[n] == words[0][n] {
			n++
		}
		common = n
	}
	for i, w := range words {
		if short := strings.Join(w[min(common, len(w)):], "-"); short != "" {
			out[i] = short
		}
	}
	return out
}

// SplitMethod splits a series or setting name into the method it is of (MethodLook), under its
// display name, and the words of the name around it, as written: "vi-gaa-iid" is GAA and [vi iid].
// ok is false when the name holds no known method.
func SplitMethod(name string) (method string, rest []string, ok bool) {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' })
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	_, id, span, ok := findMethod(lower)
	if !ok {
		return "", words, false
	}
	return DisplayName(id), append(append([]string{}, words[:span[0]]...), words[span[1]:]...), true
}

// IdentityLooks returns the look index (SeriesLook) of each of one figure's series names, by the
// method each is of (MethodLook), so that a method has the same colour and marker in every figure:
// several names of one method (its settings under two weightings) share them and differ by dash,
// the k-th of them in sorted order at look m + k*LookCycle (up to five are told apart). A name of no
// known method takes, in the order given, the first look no method has, then the first look no
// other name of the figure has. Within a figure, no two names share colour, marker and dash.
func IdentityLooks(names []string) map[string]int {
	looks := map[string]int{}
	used := map[int]bool{}
	byMethod := map[int][]string{}
	var unknown []string
	for _, n := range names {
		if _, dup := looks[n]; dup || slices.Contains(unknown, n) {
			continue
		}
		if m, ok := MethodLook(n); ok {
			if !slices.Contains(byMethod[m], n) {
				byMethod[m] = append(byMethod[m], n)
			}
			used[m] = true
			continue
		}
		unknown = append(unknown, n)
	}
	for m, ns := range byMethod {
		slices.Sort(ns)
		for k, n := range ns {
			looks[n] = m + k*LookCycle
			used[looks[n]] = true
		}
	}
	free := make([]int, 0, 2*LookCycle)
	for i, ids := range methodLooks {
		if len(ids) == 0 {
			free = append(free, i)
		}
	}
	for i, ids := range methodLooks {
		if len(ids) > 0 {
			free = append(free, i)
		}
	}
	for _, n := range unknown {
		for len(free) > 0 && used[free[0]] {
			free = free[1:]
		}
		i := 0
		if len(free) > 0 {
			i, free = free[0], free[1:]
		} else { // more than LookCycle looks in one figure
			for i = LookCycle; used[i]; i++ {
			}
		}
		looks[n], used[i] = i, true
	}
	return looks
}

// DisplayNames maps the internal ids of methods and rules (engine variant and rule labels) to the
// names figures and tables show, as the papers write them. A name not listed shows as it is.
var DisplayNames = map[string]string{
	"bcm": "BCM", "d-bcm": "D-BCM", "mixture": "mixture",
	"beta-predbayes": "β-PredBayes", "d-beta-predbayes": "D-β-PredBayes",
	"fedavg": "FedAvg", "fedpa": "FedPA", "ep-mcmc": "EP-MCMC", "oneshot": "OneshotFL", "fedkt": "FedKT",
	"fedbe": "FedBE", "fedbe-gaussian": "FedBE (Gaussian)", "fedbe-dirichlet": "FedBE (Dirichlet)",
	"fedbe-gaussian-no-swa": "FedBE (Gaussian, no SWA)",
	"eaa":                   "EAA", "gaa": "GAA", "aalv": "AALV", "ppa": "PPA", "lp": "LP", "conflation": "Conflation",
	"cf": "CF", "rklb": "RKLB", "wb": "WB", "dwc": "DWC", "nwa": "NWA", "ws": "WS", "wc": "WC", "llp": "LLP",
}

// DisplayName returns the display name of an internal id (DisplayNames), or the id itself.
func DisplayName(id string) string {
	if n, ok := DisplayNames[id]; ok {
		return n
	}
	return id
}

// PaperOrder returns the indices of names in the papers' order, the order of the tables' rows
// (report.PaperRank: baselines, then the rules as aggregate lists them); names of the same rank
// keep their order.
func PaperOrder(names []string) []int {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return report.PaperRank(names[a]) - report.PaperRank(names[b])
	})
	return idx
}

// LegendHandle is what a legend entry shows of its series: colour, marker and dash.
type LegendHandle struct {
	Name, Color, Marker, Dash string
}

// LegendHandles returns the legend entries of a chart with what each shows: for each legend name the
// colour, marker and dash of the first series of that name (the one ECharts draws the entry from).
// A series without a marker reports "none"; without a dash, "solid".
func LegendHandles(c *Chart) []LegendHandle {
	var out []LegendHandle
	seen := map[string]bool{}
	eachComponent(c.Option, "series", func(s map[string]any) {
		n, _ := s["name"].(string)
		if n == "" || seen[n] {
			return
		}
		seen[n] = true
		h := LegendHandle{Name: n, Marker: "none", Dash: "solid"}
		if m, ok := s["symbol"].(string); ok && m != "" {
			h.Marker = m
		}
		if ls, ok := s["lineStyle"].(map[string]any); ok {
			if t := ls["type"]; t != nil && t != "" {
				h.Dash = fmt.Sprint(t)
			}
			h.Color = fmt.Sprint(ls["color"])
		}
		if is, ok := s["itemStyle"].(map[string]any); ok && is["color"] != nil {
			h.Color = fmt.Sprint(is["color"])
		}
		if show, ok := s["showSymbol"].(bool); ok && !show {
			h.Marker = "none"
		}
		out = append(out, h)
	})
	return out
}
