package plots

import (
	"slices"
	"strings"
	"testing"
)

// curvesOf draws learning curves of the named series (two seeds, three rounds each).
func curvesOf(t *testing.T, name string, series ...string) *Chart {
	t.Helper()
	var d Curves
	for i, s := range series {
		v := 0.5 + 0.01*float64(i)
		d.Series = append(d.Series, SeedSeries{Name: s, X: []float64{1, 2, 3}, Runs: [][]float64{{v, v + 0.1, v + 0.2}, {v, v + 0.11, v + 0.19}}})
	}
	c, err := LearningCurves(name, d)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// handles returns a chart's legend handles by legend name.
func handles(c *Chart) map[string]LegendHandle {
	out := map[string]LegendHandle{}
	for _, h := range LegendHandles(c) {
		out[h.Name] = h
	}
	return out
}

// TestLooksFollowTheMethod checks that a method is drawn alike in every figure, whatever else the
// figure holds and in whatever order (a rule's series named by the rule or by its setting), and
// that no two series of one figure look alike: 12 methods, and 12 settings of 6 methods.
func TestLooksFollowTheMethod(t *testing.T) {
	a := curvesOf(t, "a", "EAA", "GAA", "CF")
	b := curvesOf(t, "b", "cf", "PPA", "fedavg", "AALV", "gaa", "eaa", "median")
	ha, hb := handles(a), handles(b)
	for _, m := range []string{"EAA", "GAA", "CF"} {
		x, y := ha[m], hb[m]
		if x.Color != y.Color || x.Marker != y.Marker || x.Dash != y.Dash {
			t.Errorf("%s looks %+v in one figure and %+v in another", m, x, y)
		}
	}
	// The settings of one method share its colour and marker in every figure and differ by dash.
	settings := curvesOf(t, "settings", "vi-EAA-iid", "vi-EAA-dirichlet", "vi-GAA-iid")
	hs := handles(settings)
	if hs["vi-EAA-iid"].Color != ha["EAA"].Color || hs["vi-EAA-dirichlet"].Color != ha["EAA"].Color ||
		hs["vi-EAA-iid"].Marker != ha["EAA"].Marker || hs["vi-GAA-iid"].Color != ha["GAA"].Color {
		t.Errorf("a rule's settings do not take its colour and marker: %+v, EAA %+v, GAA %+v", hs, ha["EAA"], ha["GAA"])
	}
	if hs["vi-EAA-iid"].Dash == hs["vi-EAA-dirichlet"].Dash {
		t.Errorf("two settings of EAA in one figure share dash %q", hs["vi-EAA-iid"].Dash)
	}
	var rules12, settings12 []string
	rules12 = append(rules12, "FedAvg", "EAA", "GAA", "AALV", "PPA", "LP", "Conflation", "CF", "RKLB", "WB", "DWC", "median")
	for _, r := range []string{"EAA", "GAA", "AALV", "PPA", "CF", "FedAvg"} {
		settings12 = append(settings12, "ozer-"+r+"-equal", "ozer-"+r+"-size")
	}
	for _, names := range [][]string{rules12, settings12, {"bcm", "mixture", "beta-predbayes", "fedavg", "d-bcm", "d-beta-predbayes", "ep-mcmc", "fedpa", "oneshot", "fedkt", "fedbe-gaussian", "fedbe-dirichlet"}} {
		c := curvesOf(t, "twelve", names...)
		seen := map[LegendHandle]string{}
		colours := map[string]bool{}
		for _, h := range LegendHandles(c) {
			key := LegendHandle{Color: h.Color, Marker: h.Marker, Dash: h.Dash}
			if other, dup := seen[key]; dup {
				t.Errorf("%s and %s look alike (%+v) in one figure", other, h.Name, key)
			}
			seen[key] = h.Name
			colours[h.Color] = true
		}
		if len(seen) != 12 {
			t.Errorf("%d legend entries of %v, want 12", len(seen), names)
		}
		if names[0] == "ozer-EAA-equal" && len(colours) != 6 {
			t.Errorf("12 settings of 6 methods take %d colours, want one per method", len(colours))
		}
	}
}

// TestMethodLook checks which method a series name is of.
func TestMethodLook(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string // a method id, "" for none
	}{
		{"EAA", "eaa"}, {"vi-eaa-iid", "eaa"}, {"quick-digits-FVBWA-GAA", "gaa"}, {"NWA", "eaa"},
		{"d-bcm", "d-bcm"}, {"D-β-PredBayes", "d-beta-predbayes"}, {"β-PredBayes", "beta-predbayes"},
		{"FedBE (Gaussian, no SWA)", "fedbe-gaussian-no-swa"}, {"fedbe-fmnist-fast", "fedbe-gaussian"}, {"oneshotfl", "oneshot"},
		{"median", ""}, {"vi-rule01-dirichlet", ""}, {"cfg", ""},
	} {
		got, ok := MethodLook(tc.name)
		want, wantOK := 0, tc.want != ""
		if wantOK {
			want, _ = MethodLook(tc.want)
		}
		if ok != wantOK || got != want {
			t.Errorf("MethodLook(%q) = %d, %v; want %d, %v (%s)", tc.name, got, ok, want, wantOK, tc.want)
		}
	}
	// Every method a display name is given for has its own look (an alias its rule's).
	for id := range DisplayNames {
		i, ok := MethodLook(id)
		if !ok {
			t.Errorf("%s has no look", id)
			continue
		}
		if ids := methodLooks[i]; !slices.Contains(ids, id) {
			t.Errorf("%s takes the look of %v", id, ids)
		}
	}
}

// TestLongYNameFitsTheChart checks that a y axis title longer than a column figure is tall is
// shortened with "…" to what the chart can show, and a short one is left as it is.
func TestLongYNameFitsTheChart(t *testing.T) {
	for _, tc := range []struct {
		label string
		cut   bool
	}{
		{"share of variances moved from their initial value in log σ² by more than 0.1", true},
		{"test accuracy", false},
	} {
		c, err := LearningCurves("y", Curves{Title: "a title", YLabel: tc.label, Series: []SeedSeries{{Name: "EAA", X: []float64{1, 2}, Runs: [][]float64{{0.5, 0.6}}}}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Styled(Style{FontSize: ColumnFigure.FontSize}, ColumnFigure.Width, ColumnFigure.Height)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		eachComponent(s.Option, "yAxis", func(a map[string]any) { name, _ = a["name"].(string) })
		if w := TextWidth(name, float64(ColumnFigure.FontSize), false); w > float64(ColumnFigure.Height)-8 {
			t.Errorf("y title %q is %.0f px in a %d px tall figure", name, w, ColumnFigure.Height)
		}
		if cut := name != tc.label; cut != tc.cut || (cut && !strings.HasSuffix(name, "…")) {
			t.Errorf("y title %q became %q", tc.label, name)
		}
	}
}

// TestShortNames checks that legend names drop the leading words every name shares, and only those.
func TestShortNames(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"quick-digits-EAA-size", "quick-digits-GAA-size", "quick-digits-fedavg"}, []string{"EAA-size", "GAA-size", "fedavg"}},
		{[]string{"x-y", "x-y-z"}, []string{"x-y", "z"}},
		{[]string{"nb"}, []string{"nb"}},
		{[]string{"a-1", "b-1"}, []string{"a-1", "b-1"}},
	} {
		if got := ShortNames(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("ShortNames(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestLooksApart checks two pairs the figures showed alike: EP-MCMC's full-covariance row has a look
// of its own, and no rule is drawn in the clients' grey of the toy charts.
func TestLooksApart(t *testing.T) {
	full, ok1 := MethodLook("EP-MCMC, full covariance")
	diag, ok2 := MethodLook("EP-MCMC")
	if !ok1 || !ok2 || full == diag || SeriesLook(full).Color == SeriesLook(diag).Color {
		t.Errorf("EP-MCMC, full covariance: look %d (%v), EP-MCMC %d (%v): want their own colours", full, ok1, diag, ok2)
	}
	for i, c := range Palette {
		if c == "#888888" || c == "#7f7f7f" {
			t.Errorf("Palette[%d] is %s, the clients' grey", i, c)
		}
	}
}
