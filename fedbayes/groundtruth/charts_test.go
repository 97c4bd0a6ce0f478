package groundtruth

import (
	"encoding/json"
	"strings"
	"testing"
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
	for _, sc := range st.Scenarios[len(st.Scenarios)-4:] {
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
		{"distances", func() (any, error) { return DistanceChart("d", r) }, []string{"KL(p ‖ q)", "DWC", "global marginals"}},
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
