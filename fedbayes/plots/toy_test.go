package plots

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestNormalPDFAndMixture(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"standard at 0", NormalPDF(0, 0, 1), 1 / math.Sqrt(2*math.Pi)},
		{"N(2, 0.25) at 2.5", NormalPDF(2.5, 2, 0.25), math.Exp(-0.5) / math.Sqrt(2*math.Pi*0.25)},
		// Equal mixture of N(0,1) and N(2,0.25) at 1: (phi(1) + 2 phi(2)) / 2 with phi standard.
		{"equal mixture", MixtureDensity([]Gaussian1D{{0, 1}, {2, 0.25}}, nil, 1),
			(math.Exp(-0.5) + 2*math.Exp(-2)) / (2 * math.Sqrt(2*math.Pi))},
		// Weights 1 and 3 are normalised to 1/4 and 3/4.
		{"weighted mixture", MixtureDensity([]Gaussian1D{{0, 1}, {2, 0.25}}, []float64{1, 3}, 0),
			0.25/math.Sqrt(2*math.Pi) + 0.75*math.Exp(-8)/math.Sqrt(2*math.Pi*0.25)},
	} {
		if math.Abs(tc.got-tc.want) > 1e-14 {
			t.Errorf("%s = %.16g, want %.16g", tc.name, tc.got, tc.want)
		}
	}
}

// The drawn curves are densities: each integrates to about 1 over the default range.
func TestToyAggregationCurves(t *testing.T) {
	d := Toy{
		Title:      "two clients",
		Clients:    []Gaussian1D{{0, 1}, {2, 0.25}},
		Weights:    []float64{1, 1},
		Aggregates: []NamedGaussian{{"LP", 1, 1.625}, {"CF", 1.6, 0.2}},
		Mixture:    true,
	}
	c, err := ToyAggregation("toy", d)
	if err != nil {
		t.Fatal(err)
	}
	s := seriesOf(t, c)
	// The clients share one legend entry; each rule has its own.
	names := []string{"clients (2)", "clients (2)", "mixture", "LP", "CF"}
	if len(s) != len(names) {
		t.Fatalf("%d series, want %d", len(s), len(names))
	}
	for i, want := range names {
		if s[i]["name"] != want {
			t.Errorf("series %d = %v, want %s", i, s[i]["name"], want)
		}
		pts := datasetPoints(t, c, s[i])
		if len(pts) != 401 {
			t.Fatalf("series %s: %d points, want 401", want, len(pts))
		}
		area := 0.0
		for j := 1; j < len(pts); j++ {
			area += (pts[j][0] - pts[j-1][0]) * (pts[j][1] + pts[j-1][1]) / 2
		}
		if math.Abs(area-1) > 2e-3 {
			t.Errorf("series %s integrates to %g, want about 1", want, area)
		}
	}
	// The mixture at the grid point nearest x = 1 matches MixtureDensity.
	for _, p := range datasetPoints(t, c, s[2]) {
		if math.Abs(p[0]-1) < 1e-9 {
			if want := MixtureDensity(d.Clients, d.Weights, 1); math.Abs(p[1]-want) > 5e-5*want { // 5 significant digits
				t.Errorf("mixture at 1 = %g, want %g", p[1], want)
			}
		}
	}
}

func TestToyAggregationErrors(t *testing.T) {
	g := []Gaussian1D{{0, 1}}
	for _, tc := range []struct {
		name    string
		d       Toy
		wantErr string
	}{
		{"no clients", Toy{}, "no clients"},
		{"zero variance", Toy{Clients: []Gaussian1D{{0, 0}}}, "client 0 variance 0 must be positive"},
		{"nan mean", Toy{Clients: []Gaussian1D{{math.NaN(), 1}}}, "client 0 mean is NaN"},
		{"weights length", Toy{Clients: g, Weights: []float64{1, 2}}, "2 weights for 1 clients"},
		{"negative weight", Toy{Clients: g, Weights: []float64{-1}}, "weight 0 is negative"},
		{"zero weights", Toy{Clients: g, Weights: []float64{0}}, "weights sum to 0"},
		{"unnamed aggregate", Toy{Clients: g, Aggregates: []NamedGaussian{{"", 0, 1}}}, "aggregate 0 has no name"},
		{"bad aggregate", Toy{Clients: g, Aggregates: []NamedGaussian{{"EAA", 0, -1}}}, `aggregate "EAA" variance -1`},
		{"empty range", Toy{Clients: g, XMin: 2, XMax: 1}, "is empty"},
		{"one point", Toy{Clients: g, Points: 1}, "points 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ToyAggregation("toy", tc.d)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestRound6(t *testing.T) {
	for _, tc := range []struct {
		x, want float64
	}{
		{0, 0},
		{1, 1},
		{1.23456789, 1.23457},
		{-987654321, -987654000},
		{1e-310, 1e-310}, // subnormal: scaling by 10^316 overflowed to NaN
		{1.234567e-320, 1.2346e-320},
		{5e-324, 5e-324},
		{math.MaxFloat64, 1.79769e308},
	} {
		got := round6(tc.x)
		if math.IsNaN(got) || math.IsInf(got, 0) || got != tc.want {
			t.Errorf("round6(%g) = %g, want %g", tc.x, got, tc.want)
		}
	}
}

// A client so narrow or wide that most of the grid has subnormal or zero densities still gives a
// chart whose option is valid JSON.
func TestToyAggregationExtremeVariances(t *testing.T) {
	for _, v := range []float64{1.0 / 128, 0.018, 13, 128} {
		c, err := ToyAggregation("toy", Toy{Clients: []Gaussian1D{{-5, v}, {5, 1.0 / 128}}, Mixture: true,
			Aggregates: []NamedGaussian{{"A", 0, v}}})
		if err != nil {
			t.Fatalf("variance %g: %v", v, err)
		}
		if _, err := c.OptionJSON(); err != nil {
			t.Errorf("variance %g: %v", v, err)
		}
	}
}

// TestToyReferenceAndRuleLooks checks the toy chart of a problem with a known posterior: the
// reference in black, ten clients under one legend entry, every rule in its method's colour, no two
// rules alike in colour and dash, and markers on a few points only, at a phase of each rule's own.
func TestToyReferenceAndRuleLooks(t *testing.T) {
	d := Toy{Reference: &NamedGaussian{"exact", 1, 0.1}}
	for k := 0; k < 10; k++ {
		d.Clients = append(d.Clients, Gaussian1D{float64(k) / 5, 1})
	}
	rules := []string{"EAA", "GAA", "AALV", "PPA", "LP", "Conflation", "CF", "RKLB", "WB", "DWC"}
	for i, r := range rules {
		d.Aggregates = append(d.Aggregates, NamedGaussian{r, 1, 0.1 + 0.01*float64(i%3)})
	}
	c, err := ToyAggregation("gt", d)
	if err != nil {
		t.Fatal(err)
	}
	legend := map[string]bool{}
	seen := map[[2]string]string{}
	phases := map[int]string{}
	for _, s := range seriesOf(t, c) {
		name := s["name"].(string)
		legend[name] = true
		col := sub(s, "lineStyle")["color"].(string)
		switch {
		case name == "exact":
			if col != "#000000" {
				t.Errorf("the reference is drawn in %s, want black", col)
			}
		case strings.HasPrefix(name, "client"):
		default:
			look := SeriesLook(IdentityLooks(rules)[name])
			if col != look.Color {
				t.Errorf("%s drawn in %s, want its method's %s", name, col, look.Color)
			}
			key := [2]string{col, fmt.Sprint(sub(s, "lineStyle")["type"])}
			if other, dup := seen[key]; dup {
				t.Errorf("%s and %s share colour and dash %v", other, name, key)
			}
			seen[key] = name
			marks := sub(s, "markPoint")["data"].([]any)
			n := len(datasetPoints(t, c, s))
			if len(marks) == 0 || len(marks) > n/toyMarkerEvery+1 {
				t.Errorf("%s: %d of %d points marked, want a few", name, len(marks), n)
			}
			if sub(s, "markPoint")["symbol"] != look.Marker || s["symbol"] != look.Marker {
				t.Errorf("%s: marker %v (series %v), want %s", name, sub(s, "markPoint")["symbol"], s["symbol"], look.Marker)
			}
			first := -1
			for j, p := range datasetPoints(t, c, s) {
				if xy := marks[0].(map[string]any)["coord"].([]any); p[0] == xy[0].(float64) {
					first = j
				}
			}
			if other, dup := phases[first]; dup {
				t.Errorf("%s and %s put their markers on the same points", other, name)
			}
			phases[first] = name
		}
	}
	if !legend["clients (10)"] || len(legend) != 12 {
		t.Errorf("legend %v, want the clients once, the reference and the ten rules", legend)
	}
	if _, err := ToyAggregation("bad", Toy{Clients: d.Clients, Reference: &NamedGaussian{"exact", 0, -1}}); err == nil {
		t.Error("a reference with a negative variance: no error")
	}
}

// TestToyClientNames checks that ClientNames names each client's curve (the explorer's), and that a
// list that does not name every client is ignored.
func TestToyClientNames(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  []string
	}{
		{[]string{"client 1", "client 2"}, []string{"client 1", "client 2"}},
		{[]string{"only one"}, []string{"clients (2)", "clients (2)"}},
		{nil, []string{"clients (2)", "clients (2)"}},
	} {
		c, err := ToyAggregation("toy", Toy{Clients: []Gaussian1D{{0, 1}, {2, 0.25}}, ClientNames: tc.names,
			Aggregates: []NamedGaussian{{"EAA", 1, 0.625}}})
		if err != nil {
			t.Fatal(err)
		}
		s := seriesOf(t, c)
		for i, want := range tc.want {
			if s[i]["name"] != want {
				t.Errorf("names %v: series %d = %v, want %s", tc.names, i, s[i]["name"], want)
			}
		}
	}
}

// TestToyCoincidentCurves checks that curves drawn on top of each other are found from the
// densities themselves and told apart: the papers' two clients, where Conflation and CF (equal
// weights) are the same Gaussian and PPA, a sampled mixture, lands near LP. The caption names each
// group, the first of a group is drawn wide and pale, the others thinner and above it; curves that
// only nearly meet are left alone.
func TestToyCoincidentCurves(t *testing.T) {
	d := Toy{Clients: []Gaussian1D{{0, 1}, {2, 0.25}}, Mixture: true, Aggregates: []NamedGaussian{
		{"EAA", 1, 0.625}, {"PPA", 1.01, 1.61}, {"LP", 1, 1.625}, {"Conflation", 1.6, 0.2}, {"CF", 1.6, 0.2}, {"RKLB", 1.6, 0.4},
	}}
	c, err := ToyAggregation("toy", d)
	if err != nil {
		t.Fatal(err)
	}
	want := "PPA and LP; Conflation and CF."
	if !strings.Contains(c.Caption, want) || strings.Contains(c.Caption, "EAA") || strings.Contains(c.Caption, "RKLB") {
		t.Errorf("caption %q, want the groups %q and no other rule", c.Caption, want)
	}
	byName := map[string]map[string]any{}
	for _, s := range seriesOf(t, c) {
		byName[s["name"].(string)] = s
	}
	for _, pair := range [][2]string{{"PPA", "LP"}, {"Conflation", "CF"}} {
		first, later := byName[pair[0]], byName[pair[1]]
		fw, lw := sub(first, "lineStyle")["width"].(float64), sub(later, "lineStyle")["width"].(float64)
		if fw <= 2*lw || sub(first, "lineStyle")["opacity"] == nil {
			t.Errorf("%s (first) is %v px wide, %s %v px: want the first wide and pale", pair[0], fw, pair[1], lw)
		}
		if first["z"].(float64) >= later["z"].(float64) {
			t.Errorf("%s (z %v) is drawn above %s (z %v)", pair[0], first["z"], pair[1], later["z"])
		}
	}
	if w := sub(byName["EAA"], "lineStyle")["width"]; w != 2.0 {
		t.Errorf("EAA, alone, is %v px wide, want 2", w)
	}
	// Two curves a little more than ToyCoincide apart are drawn as they are.
	apart := Toy{Clients: d.Clients, Aggregates: []NamedGaussian{{"EAA", 1, 0.625}, {"GAA", 1.2, 0.625}}}
	if c, err := ToyAggregation("toy", apart); err != nil || c.Caption != "" {
		t.Errorf("EAA and GAA 0.2 apart: caption %q, %v; want none", c.Caption, err)
	}
}

// TestToyChartIsSmall checks the size of the toy chart with every rule, as notebook 01 draws it four
// times and its explorer once: its option stores the grid once and each density to 5 digits
// (series of [x, y] points of 6 digits, with a marker field on each, took 197 KB, and a saved
// notebook 01 770 KB).
func TestToyChartIsSmall(t *testing.T) {
	d := Toy{Clients: []Gaussian1D{{0, 1}, {2, 0.25}}, Mixture: true}
	for i, r := range []string{"EAA", "GAA", "AALV", "PPA", "LP", "Conflation", "CF", "RKLB", "WB", "DWC", "NWA"} {
		d.Aggregates = append(d.Aggregates, NamedGaussian{r, 0.1 * float64(i), 0.2 + 0.1*float64(i)})
	}
	c, err := ToyAggregation("toy", d)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.OptionJSON()
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 60_000 {
		t.Errorf("the option of a 14-curve toy chart is %d bytes, want at most 60,000", len(raw))
	}
}
