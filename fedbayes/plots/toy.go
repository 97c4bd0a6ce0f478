package plots

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
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
	curve := func(f func(x float64) float64) []opts.LineData {
		pts := make([]opts.LineData, n)
		for i, x := range grid {
			pts[i] = opts.LineData{Value: []float64{round6(x), round6(f(x))}}
		}
		return pts
	}
	line := charts.NewLine()
	looks := addToySeries(line, d, curve)
	line.SetGlobalOptions(
		charts.WithTitleOpts(opts.Title{Title: d.Title}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "θ", Min: round6(lo), Max: round6(hi)}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "density", Min: 0}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
	)
	c, err := FromGoECharts(name, line, 0, 0)
	if err != nil {
		return nil, err
	}
	eachComponent(c.Option, "series", func(s map[string]any) {
		if i, ok := looks[fmt.Sprint(s["name"])]; ok { // go-echarts has no field for a dash array
			look := SeriesLook(i)
			sub(s, "lineStyle")["type"], s["z"] = LineType(look.Dash), look.Z
		}
	})
	return c.Styled(ScreenStyle, 0, 0)
}

// toyMarkerEvery is the spacing, in grid points, of the markers on a rule's density (only where it
// is above 5 % of its peak).
const toyMarkerEvery = 20

// addToySeries adds the toy chart's curves to line: the clients dashed in grey under one legend
// entry, the mixture dotted in black, the reference in black, then each rule in its method's colour,
// dash and marker (IdentityLooks; a marker every toyMarkerEvery points where the density shows, each
// rule's at its own phase, so that two rules with the same curve both show). It returns the rules' look indices.
func addToySeries(line *charts.Line, d Toy, curve func(func(float64) float64) []opts.LineData) map[string]int {
	noSymbol := charts.WithLineChartOpts(opts.LineChart{Symbol: "none", ShowSymbol: opts.Bool(false)})
	clients := "client"
	if len(d.Clients) > 1 {
		clients = fmt.Sprintf("clients (%d)", len(d.Clients))
	}
	for k, c := range d.Clients {
		name := clients
		if len(d.ClientNames) == len(d.Clients) {
			name = d.ClientNames[k]
		}
		line.AddSeries(name, curve(func(x float64) float64 { return NormalPDF(x, c.Mean, c.Var) }),
			noSymbol,
			charts.WithLineStyleOpts(opts.LineStyle{Color: "#888888", Width: 1.5, Type: "dashed"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#888888"}))
	}
	if d.Mixture {
		line.AddSeries("mixture", curve(func(x float64) float64 { return MixtureDensity(d.Clients, d.Weights, x) }),
			noSymbol,
			charts.WithLineStyleOpts(opts.LineStyle{Color: "#000000", Width: 2, Type: "dotted"}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#000000"}))
	}
	if r := d.Reference; r != nil {
		line.AddSeries(r.Name, curve(func(x float64) float64 { return NormalPDF(x, r.Mean, r.Var) }),
			noSymbol,
			charts.WithLineStyleOpts(opts.LineStyle{Color: "#000000", Width: 3.5, Opacity: opts.Float(0.55)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#000000"}))
	}
	names := make([]string, len(d.Aggregates))
	for i, a := range d.Aggregates {
		names[i] = a.Name
	}
	looks := IdentityLooks(names)
	for i, a := range d.Aggregates {
		look := SeriesLook(looks[a.Name])
		pts := curve(func(x float64) float64 { return NormalPDF(x, a.Mean, a.Var) })
		peak := NormalPDF(a.Mean, a.Mean, a.Var)
		phase := (i * 7) % toyMarkerEvery
		for j := range pts {
			// Markers where the density shows (not along the axis in its tails).
			if (j-phase)%toyMarkerEvery != 0 || pts[j].Value.([]float64)[1] < 0.05*peak {
				pts[j].Symbol = "none"
			}
		}
		line.AddSeries(a.Name, pts,
			charts.WithLineChartOpts(opts.LineChart{Symbol: look.Marker, SymbolSize: look.MarkerSize, ShowSymbol: opts.Bool(true)}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: look.Color, Width: 2}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: look.Color}))
	}
	return looks
}

// round6 rounds to 6 significant decimals, keeping the option JSON small. It goes through the
// decimal text of x, so it is exact for every finite x, subnormal densities such as 1e-310
// included (scaling by a power of ten overflows there and gave NaN).
func round6(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	if err != nil { // cannot happen for a finite x; keep x rather than a non-finite value
		return x
	}
	return r
}
