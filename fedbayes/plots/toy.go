package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Gaussian1D is a univariate Gaussian given by its mean and variance.
type Gaussian1D struct {
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}

// NamedGaussian is the result of one aggregation rule on the toy problem.
type NamedGaussian struct {
	// Name is the legend entry, typically the rule.
	Name string  `json:"name"`
	Mean float64 `json:"mean"`
	Var  float64 `json:"var"`
}

// Toy is the data of the toy aggregation chart: K client Gaussians and the Gaussian each rule
// aggregates them to, drawn as densities (Ozer et al. (2022), Fig. 1; Jamoussi et al., BA-BFL,
// Fig. 1, with N(0,1) and N(2,0.25)).
type Toy struct {
	// Title is shown above the chart; empty for none.
	Title string `json:"title,omitempty"`
	// Clients are the K client distributions, drawn dashed in grey under one legend entry, or each
	// under its own name when ClientNames names every client (an explorer whose clients are set one
	// by one).
	Clients     []Gaussian1D `json:"clients"`
	ClientNames []string     `json:"client_names,omitempty"`
	// Weights of the clients in the exact mixture (normalised here); empty means equal weights.
	Weights []float64 `json:"weights,omitempty"`
	// Aggregates holds one aggregated Gaussian per rule.
	Aggregates []NamedGaussian `json:"aggregates"`
	// Reference, when given, is the Gaussian the rules are measured against (the exact global
	// posterior of a problem with a known one), drawn in black under the rules.
	Reference *NamedGaussian `json:"reference,omitempty"`
	// Mixture also draws the exact weighted mixture of the clients, linear pooling (LP) as a
	// density (Fischer et al. (2024), Eq. 12); the Gaussian rule LP matches its moments (Eqs. 13-14).
	Mixture bool `json:"mixture,omitempty"`
	// XMin and XMax bound the x axis; when both are 0 the range covers every curve to 3.5 standard
	// deviations, widened to round numbers.
	XMin float64 `json:"x_min,omitempty"`
	XMax float64 `json:"x_max,omitempty"`
	// Points is the number of grid points per curve (0 means 401).
	Points int `json:"points,omitempty"`
}

// NormalPDF is the density of N(mean, variance) at x.
func NormalPDF(x, mean, variance float64) float64 {
	d := x - mean
	return math.Exp(-d*d/(2*variance)) / math.Sqrt(2*math.Pi*variance)
}

// MixtureDensity is the density at x of the mixture sum_k w_k N(mean_k, var_k), linear pooling
// (Fischer et al. (2024), Eq. 12), with weights normalised to sum to 1 (equal weights when weights
// is empty). Callers check the weights (ToyAggregation does).
func MixtureDensity(clients []Gaussian1D, weights []float64, x float64) float64 {
	total := 0.0
	for k := range clients {
		total += toyWeight(weights, k, len(clients))
	}
	p := 0.0
	for k, c := range clients {
		p += toyWeight(weights, k, len(clients)) / total * NormalPDF(x, c.Mean, c.Var)
	}
	return p
}

func toyWeight(weights []float64, k, K int) float64 {
	if len(weights) == 0 {
		return 1 / float64(K)
	}
	return weights[k]
}

// ToyAggregation draws the densities of the clients, of each rule's aggregate and optionally of the
// exact mixture.
func ToyAggregation(name string, d Toy) (*Chart, error) {
	fail := func(format string, args ...any) (*Chart, error) {
		return nil, fmt.Errorf("plots: toy aggregation %q: %s", name, fmt.Sprintf(format, args...))
	}
	if len(d.Clients) == 0 {
		return fail("no clients")
	}
	checkG := func(where string, mean, v float64) error {
		if err := checkFinite(where+" mean", mean); err != nil {
			return err
		}
		if err := checkFinite(where+" variance", v); err != nil {
			return err
		}
		if v <= 0 {
			return fmt.Errorf("%s variance %g must be positive", where, v)
		}
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	grow := func(mean, v float64) {
		s := 3.5 * math.Sqrt(v)
		lo, hi = math.Min(lo, mean-s), math.Max(hi, mean+s)
	}
	for k, c := range d.Clients {
		if err := checkG(fmt.Sprintf("client %d", k), c.Mean, c.Var); err != nil {
			return fail("%v", err)
		}
		grow(c.Mean, c.Var)
	}
	if len(d.Weights) != 0 {
		if len(d.Weights) != len(d.Clients) {
			return fail("%d weights for %d clients", len(d.Weights), len(d.Clients))
		}
		sum := 0.0
		for k, w := range d.Weights {
			if err := checkFinite(fmt.Sprintf("weight %d", k), w); err != nil {
				return fail("%v", err)
			}
			if w < 0 {
				return fail("weight %d is negative (%g)", k, w)
			}
			sum += w
		}
		if sum <= 0 {
			return fail("weights sum to %g", sum)
		}
	}
	seen := map[string]bool{}
	if r := d.Reference; r != nil {
		if err := checkG(fmt.Sprintf("reference %q", r.Name), r.Mean, r.Var); err != nil {
			return fail("%v", err)
		}
		if r.Name == "" {
			return fail("the reference has no name")
		}
		grow(r.Mean, r.Var)
		seen[r.Name] = true
	}
	for i, a := range d.Aggregates {
		if a.Name == "" {
			return fail("aggregate %d has no name", i)
		}
		if seen[a.Name] {
			return fail("two aggregates are named %q", a.Name)
		}
		seen[a.Name] = true
		if err := checkG(fmt.Sprintf("aggregate %q", a.Name), a.Mean, a.Var); err != nil {
			return fail("%v", err)
		}
		grow(a.Mean, a.Var)
	}
	if d.XMin != 0 || d.XMax != 0 {
		if err := checkFinite("x range", d.XMin, d.XMax); err != nil {
			return fail("%v", err)
		}
		if d.XMax <= d.XMin {
			return fail("x range [%g, %g] is empty", d.XMin, d.XMax)
		}
		lo, hi = d.XMin, d.XMax
	} else {
		// Widen to round numbers so the axis ends on labelled ticks.
		step := math.Pow(10, math.Floor(math.Log10((hi-lo)/2.5)))
		lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	}
	n := d.Points
	if n == 0 {
		n = 401
	}
	if n < 2 || n > 100000 {
		return fail("points %d not in [2, 100000]", n)
	}
	grid := make([]float64, n)
	for i := range grid {
		grid[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	curves := toyCurves(d)
	values := make([][]float64, len(curves))
	for j, cv := range curves {
		values[j] = make([]float64, n)
		for i, x := range grid {
			values[j][i] = cv.f(x)
		}
	}
	groups := coincident(curves, values)
	option := map[string]any{
		"title":   map[string]any{"text": d.Title},
		"xAxis":   map[string]any{"type": "value", "name": "θ", "min": round6(lo), "max": round6(hi)},
		"yAxis":   map[string]any{"type": "value", "name": "density", "min": 0},
		"tooltip": map[string]any{"show": true, "trigger": "axis"},
		"legend":  map[string]any{"show": true},
		"dataset": map[string]any{"source": toySource(grid, values)},
		"series":  toySeries(curves, values, grid, groups),
	}
	c, err := NewChart(name, option, 0, 0)
	if err != nil {
		return nil, err
	}
	c.Caption = coincidenceNote(curves, groups)
	return c.Styled(ScreenStyle, 0, 0)
}

// toyMarkerEvery is the spacing, in grid points, of the markers on a rule's density (only where it
// is above 5 % of its peak).
const toyMarkerEvery = 20

// toyTail is the share of a curve's own peak below which the chart stores its density as 0: far
// below a pixel, and most of the grid of a narrow curve, whose tail values would otherwise fill the
// saved notebook with digits.
const toyTail = 1e-4

// ToyCoincide is the largest difference between two densities, as a share of the chart's highest
// density, at which the toy chart calls them coincident: about a pixel of a 300 px high plot, where
// the later curve would hide the earlier one.
const ToyCoincide = 0.01

// toyCurve is one density of the toy chart: its legend name, the function drawn and its style.
type toyCurve struct {
	name string
	f    func(float64) float64
	// client is set for a client's density (never compared for coincidence).
	client bool
	// rule is set for an aggregate (drawn in its method's look with markers); look is its look index.
	rule bool
	look int
	// style holds the series fields of a client, the mixture or the reference.
	style map[string]any
}

// toyCurves lists the toy chart's curves in drawing order: the clients dashed in grey under one
// legend entry (or their own names), the mixture dotted in black, the reference in black, then each
// rule in its method's colour, dash and marker (IdentityLooks).
func toyCurves(d Toy) []toyCurve {
	var out []toyCurve
	clients := "client"
	if len(d.Clients) > 1 {
		clients = fmt.Sprintf("clients (%d)", len(d.Clients))
	}
	for k, c := range d.Clients {
		name := clients
		if len(d.ClientNames) == len(d.Clients) {
			name = d.ClientNames[k]
		}
		out = append(out, toyCurve{name: name, f: func(x float64) float64 { return NormalPDF(x, c.Mean, c.Var) }, client: true,
			style: toyLine("#888888", 1.5, "dashed", 1)})
	}
	if d.Mixture {
		out = append(out, toyCurve{name: "mixture", f: func(x float64) float64 { return MixtureDensity(d.Clients, d.Weights, x) },
			style: toyLine("#000000", 2, "dotted", 1)})
	}
	if r := d.Reference; r != nil {
		st := toyLine("#000000", 3.5, "solid", 0.55)
		out = append(out, toyCurve{name: r.Name, f: func(x float64) float64 { return NormalPDF(x, r.Mean, r.Var) }, style: st})
	}
	names := make([]string, len(d.Aggregates))
	for i, a := range d.Aggregates {
		names[i] = a.Name
	}
	looks := IdentityLooks(names)
	for _, a := range d.Aggregates {
		out = append(out, toyCurve{name: a.Name, f: func(x float64) float64 { return NormalPDF(x, a.Mean, a.Var) },
			rule: true, look: looks[a.Name]})
	}
	return out
}

// toyLine is the series style of an unmarked curve.
func toyLine(color string, width float64, dash string, opacity float64) map[string]any {
	ls := map[string]any{"color": color, "width": width, "type": dash}
	if opacity < 1 {
		ls["opacity"] = opacity
	}
	return map[string]any{"symbol": "none", "showSymbol": false, "lineStyle": ls, "itemStyle": map[string]any{"color": color}}
}

// toySource is the chart's dataset: one row per grid point, x then every curve's density, each to
// 5 significant digits and 0 below toyTail of the curve's own peak. Every series reads its column
// of this one table, so the grid is stored once (series data of [x, y] pairs stored it per curve,
// and made a notebook of five toy charts about 770 KB).
func toySource(grid []float64, values [][]float64) [][]float64 {
	peaks := make([]float64, len(values))
	for j, v := range values {
		for _, y := range v {
			peaks[j] = math.Max(peaks[j], y)
		}
	}
	rows := make([][]float64, len(grid))
	for i, x := range grid {
		row := make([]float64, 1+len(values))
		row[0] = round6(x)
		for j, v := range values {
			if v[i] >= toyTail*peaks[j] {
				row[1+j] = roundDigits(v[i], 5)
			}
		}
		rows[i] = row
	}
	return rows
}

// coincident groups the curves other than the clients whose densities differ nowhere on the grid by
// more than ToyCoincide of the highest density drawn: each curve joins the first group whose first
// curve it coincides with. It returns the groups of two or more curves (indices into curves, in
// drawing order).
func coincident(curves []toyCurve, values [][]float64) [][]int {
	top := 0.0
	for _, v := range values {
		for _, y := range v {
			top = math.Max(top, y)
		}
	}
	var rules []int // the curves other than the clients, in drawing order
	for j, cv := range curves {
		if !cv.client {
			rules = append(rules, j)
		}
	}
	groups := Coincident(len(rules), func(f, j int) bool {
		return maxDiff(values[rules[f]], values[rules[j]]) <= ToyCoincide*top
	})
	for _, g := range groups {
		for k, i := range g {
			g[k] = rules[i]
		}
	}
	return groups
}

func maxDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// coincidenceNote says which curves the chart draws on top of each other ("" when none do).
func coincidenceNote(curves []toyCurve, groups [][]int) string {
	if len(groups) == 0 {
		return ""
	}
	parts := make([]string, len(groups))
	for g, members := range groups {
		names := make([]string, len(members))
		for k, j := range members {
			names[k] = curves[j].name
		}
		parts[g] = joinAnd(names)
	}
	return fmt.Sprintf("Drawn on top of each other here (densities within %g %% of the highest): %s. The first of each is the wide pale line, the others the thinner lines on it.",
		ToyCoincide*100, strings.Join(parts, "; "))
}

// joinAnd joins names as "a and b" or "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// toySeries returns the series of the curves, each reading its column of the dataset. A rule has
// its method's colour, dash and marker (SeriesLook), the markers every toyMarkerEvery grid points
// where its density is above 5 % of its peak, each rule's at its own phase, drawn as mark points
// (so that the dataset holds numbers only). In a group of coincident curves the first is drawn wide
// and pale and the others, thinner, on top of it, so that each shows.
func toySeries(curves []toyCurve, values [][]float64, grid []float64, groups [][]int) []any {
	rank := map[int]int{}
	for _, g := range groups {
		for r, j := range g {
			rank[j] = r
		}
	}
	leader := map[int]bool{}
	for _, g := range groups {
		leader[g[0]] = true
	}
	out := make([]any, len(curves))
	rules := 0
	for j, cv := range curves {
		s := map[string]any{"type": "line", "name": cv.name, "encode": map[string]any{"x": 0, "y": j + 1}}
		if !cv.rule {
			for k, v := range cv.style {
				s[k] = v
			}
		} else {
			look := SeriesLook(cv.look)
			s["symbol"], s["symbolSize"], s["showSymbol"] = look.Marker, look.MarkerSize, false
			s["lineStyle"] = map[string]any{"color": look.Color, "width": 2.0, "type": LineType(look.Dash), "dashOffset": look.DashOffset}
			s["itemStyle"] = map[string]any{"color": look.Color}
			s["z"] = look.Z
			peak := 0.0
			for _, y := range values[j] {
				peak = math.Max(peak, y)
			}
			phase := (rules * 7) % toyMarkerEvery
			rules++
			var marks []any
			for i, y := range values[j] {
				if (i-phase)%toyMarkerEvery == 0 && y >= 0.05*peak {
					marks = append(marks, map[string]any{"coord": []float64{round6(grid[i]), roundDigits(y, 5)}})
				}
			}
			s["markPoint"] = map[string]any{"symbol": look.Marker, "symbolSize": look.MarkerSize, "silent": true,
				"label": map[string]any{"show": false}, "itemStyle": map[string]any{"color": look.Color}, "data": marks}
		}
		if r, ok := rank[j]; ok {
			ls := s["lineStyle"].(map[string]any)
			switch {
			case leader[j] && cv.rule:
				ls["width"], ls["opacity"] = 6.0, 0.4
			case r > 0:
				ls["width"] = math.Max(1, 2.5-0.75*float64(r-1))
				z, _ := s["z"].(int)
				s["z"] = max(z, 1000+r) // above every rule's own layer
			}
		}
		out[j] = s
	}
	return out
}

// round6 rounds to 6 significant decimals, keeping the option JSON small (roundDigits).
func round6(x float64) float64 { return roundDigits(x, 6) }

// roundDigits rounds x to the given significant decimals. It goes through the decimal text of x,
// so it is exact for every finite x, subnormal densities such as 1e-310 included (scaling by a
// power of ten overflows there and gave NaN).
func roundDigits(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', digits, 64), 64)
	if err != nil { // cannot happen for a finite x; keep x rather than a non-finite value
		return x
	}
	return r
}
