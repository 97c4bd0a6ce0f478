package groundtruth

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/plots"
)

// TestGroundTruthCharts builds every chart of the notebook on a small problem and checks its
// option is JSON with the expected series, and that bad slices are errors.
func TestGroundTruthCharts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Dims, cfg.Test, cfg.Split, cfg.Heterogeneity = 4, 3, 50, CovariateShift, 0.5
	r, err := Run(cfg, RuleOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	st := DefaultStudy(cfg, 1)
	var sweep []Summary
	for _, sc := range st.Scenarios {
		if sc.Group != GroupSweepPrefix+string(ManySmall) {
			continue
		}
		res, err := Run(sc.Config, RuleOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Summarise(sc, []*Result{res})
		if err != nil {
			t.Fatal(err)
		}
		sweep = append(sweep, s)
	}
	for _, tc := range []struct {
		name  string
		build func() (any, error)
		want  []string
	}{
		{"distances", func() (any, error) { return DistanceChart("d", r) }, []string{"KL(p ‖ q)", "DWC", "marginals (floor)", "frontier"}},
		{"slice", func() (any, error) { return SliceChart("s", r, 1) }, []string{"exact", "RKLB/size"}},
		{"ellipses", func() (any, error) { return EllipseChart("e", r, 0, 2) }, []string{"exact", "FedAvg/size", "scatter"}},
		{"sweep", func() (any, error) { return SweepChart("w", "clients", sweep) }, []string{"many-small", "LP/size"}},
		{"rounds", func() (any, error) {
			p, err := Simulate(cfg)
			if err != nil {
				return nil, err
			}
			rr, err := RunRounds(p, RoundsOptions{Rounds: 5, Prior: UpdatedPrior, Seed: 1})
			if err != nil {
				return nil, err
			}
			return RoundsChart("r", rr)
		}, []string{"updated prior", "round", "Conflation", "global marginals"}},
	} {
		c, err := tc.build()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s: option lacks %q", tc.name, w)
			}
		}
	}
	if _, err := SliceChart("s", r, 3); err == nil {
		t.Error("slice of weight 3 of 3: no error")
	}
	if _, err := EllipseChart("e", r, 1, 1); err == nil {
		t.Error("2-D slice of one weight: no error")
	}
	if _, err := RoundsChart("r", &RoundsResult{}); err == nil {
		t.Error("rounds chart without trajectories: no error")
	}
	if _, err := SweepChart("w", "h", nil); err == nil {
		t.Error("empty sweep: no error")
	}
	if tab := RegimeTable(sweep[0]); !strings.Contains(tab, "| DWC |") {
		t.Errorf("regime table: %s", tab)
	}
}

// TestGroundTruthChartsTellRulesApart checks what notebook 08's charts need to tell the rules
// apart: no two rules of a chart share colour, marker and dash, a rule looks the same in every
// chart, the exact posterior is black, a rule with an infinite KL everywhere is not drawn (the
// caption names it), and the distance bars start below the smallest value on their log axis.
func TestGroundTruthChartsTellRulesApart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Dims, cfg.Test, cfg.Split, cfg.Heterogeneity = 4, 3, 50, CovariateShift, 0.5
	r, err := Run(cfg, RuleOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := RunRounds(p, RoundsOptions{Rounds: 4, Prior: UpdatedPrior, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sweep []Summary
	for _, h := range []float64{0, 0.5, 1} {
		c := cfg
		c.Heterogeneity = h
		res, err := Run(c, RuleOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		s, err := Summarise(Scenario{Group: GroupSweepPrefix + "covariate-shift", Name: "h", X: h, Config: c}, []*Result{res})
		if err != nil {
			t.Fatal(err)
		}
		sweep = append(sweep, s)
	}
	ellipses, err := EllipseChart("e", r, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := SweepChart("w", "h", sweep)
	if err != nil {
		t.Fatal(err)
	}
	rounds, err := RoundsChart("r", rr)
	if err != nil {
		t.Fatal(err)
	}
	type look struct{ color, marker, dash string }
	lookOf := map[string]look{}
	for _, c := range []*plots.Chart{ellipses, sw, rounds} {
		seen := map[look]string{}
		for _, s := range c.Option["series"].([]any) {
			m := s.(map[string]any)
			name := m["name"].(string)
			ls, _ := m["lineStyle"].(map[string]any)
			if m["type"] == "scatter" || name == RefMoment || name == RefMeanFieldVI {
				continue
			}
			if data, _ := m["data"].([]any); len(data) == 0 {
				t.Errorf("%s: %s has no data", c.Name, name)
			}
			l := look{fmt.Sprint(ls["color"]), fmt.Sprint(m["symbol"]), fmt.Sprint(ls["type"])}
			if name == "exact" {
				if l.color != "#000000" {
					t.Errorf("%s: the exact posterior is drawn in %s, want black", c.Name, l.color)
				}
				continue
			}
			if other, dup := seen[l]; dup {
				t.Errorf("%s: %s and %s look alike: %+v", c.Name, other, name, l)
			}
			seen[l] = name
			if prev, ok := lookOf[name]; ok && prev.color != l.color {
				t.Errorf("%s is %s in one chart and %s in %s", name, prev.color, l.color, c.Name)
			}
			lookOf[name] = l
			if strings.HasPrefix(name, "FedAvg") {
				t.Errorf("%s: FedAvg (infinite KL) is drawn", c.Name)
			}
		}
	}
	for _, c := range []*plots.Chart{sw, rounds} {
		if !strings.Contains(c.Caption, "FedAvg") {
			t.Errorf("%s: caption %q does not name FedAvg, left out", c.Name, c.Caption)
		}
	}
	d, err := DistanceChart("d", r)
	if err != nil {
		t.Fatal(err)
	}
	y := d.Option["yAxis"].(map[string]any)
	lowest := math.Inf(1)
	for _, s := range d.Option["series"].([]any) {
		for _, v := range s.(map[string]any)["data"].([]any) {
			if f, ok := v.(float64); ok {
				lowest = math.Min(lowest, f)
			}
		}
	}
	if min, _ := y["min"].(float64); !(min > 0 && min <= lowest && y["startValue"] == y["min"] && lowest < 10*min) {
		t.Errorf("distance bars start at %v (axis min %v) for a smallest value %g: want the power of ten below it", y["startValue"], y["min"], lowest)
	}
	if x := d.Option["xAxis"].(map[string]any); sub(x, "axisLabel")["rotate"] != nil {
		t.Errorf("distance labels are rotated: %v", x["axisLabel"])
	}
}

// sub returns m[key] as a map (empty when absent).
func sub(m map[string]any, key string) map[string]any {
	v, _ := m[key].(map[string]any)
	if v == nil {
		return map[string]any{}
	}
	return v
}
