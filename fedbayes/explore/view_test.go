package explore

import (
	"context"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

// rowsByRule indexes a view's rows.
func rowsByRule(v View) map[aggregate.Rule]Row {
	m := map[aggregate.Rule]Row{}
	for _, r := range v.Rows {
		m[r.Rule] = r
	}
	return m
}

// seriesNames returns the legend entries of the view's chart.
func seriesNames(t *testing.T, v View) []string {
	t.Helper()
	var names []string
	for _, s := range v.Chart.Option["series"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	return names
}

// The papers' toy case, hand-computed (docs/aggregation.md): N(0,1), N(2,0.25), w = 1/2 each,
// mean client standard deviation 0.5*1 + 0.5*0.5 = 0.75.
func TestRenderPapersCase(t *testing.T) {
	v, err := Render(PapersState())
	if err != nil {
		t.Fatal(err)
	}
	want := map[aggregate.Rule][2]float64{
		aggregate.EAA: {1, 0.625}, aggregate.GAA: {1, 0.3125}, aggregate.AALV: {1, 0.5},
		aggregate.LP: {1, 1.625}, aggregate.Conflation: {1.6, 0.2}, aggregate.CF: {1.6, 0.2},
		aggregate.RKLB: {1.6, 0.4}, aggregate.WB: {1, 0.5625}, aggregate.FedAvg: {1, 0},
	}
	rows := rowsByRule(v)
	if len(v.Rows) != 10 {
		t.Errorf("%d rows, want 10 (9 drawable rules and FedAvg)", len(v.Rows))
	}
	for r, mv := range want {
		got, ok := rows[r]
		if !ok {
			t.Errorf("rule %s missing", r)
			continue
		}
		if math.Abs(got.Mean-mv[0]) > 1e-12 || math.Abs(got.Var-mv[1]) > 1e-12 {
			t.Errorf("%s: N(%v, %v), want N(%v, %v)", r, got.Mean, got.Var, mv[0], mv[1])
		}
		if wantSpread := math.Sqrt(mv[1]) / 0.75; math.Abs(got.Spread-wantSpread) > 1e-12 {
			t.Errorf("%s: spread %v, want %v", r, got.Spread, wantSpread)
		}
	}
	// PPA is sampled (N = 2000): close to LP's moments, and the same for the same seed.
	ppa := rows[aggregate.PPA]
	if math.Abs(ppa.Mean-1) > 0.1 || math.Abs(ppa.Var-1.625) > 0.15 {
		t.Errorf("PPA: N(%v, %v), want about N(1, 1.625)", ppa.Mean, ppa.Var)
	}
	again, _ := Render(PapersState())
	if rowsByRule(again)[aggregate.PPA] != ppa {
		t.Errorf("PPA differs between two renders with the same seed")
	}
	// WB keeps the clients' mean standard deviation exactly; LP inflates it, CF shrinks it.
	if rows[aggregate.WB].Spread != 1 || rows[aggregate.LP].Spread <= 1 || rows[aggregate.CF].Spread >= 1 {
		t.Errorf("spreads: WB %v, LP %v, CF %v", rows[aggregate.WB].Spread, rows[aggregate.LP].Spread, rows[aggregate.CF].Spread)
	}

	names := strings.Join(seriesNames(t, v), ",")
	if names != "client 1,client 2,mixture,EAA,GAA,AALV,PPA,LP,Conflation,CF,RKLB,WB" {
		t.Errorf("series %s", names)
	}
	if v.Chart.Name != ChartName {
		t.Errorf("chart name %q", v.Chart.Name)
	}
	for _, s := range []string{"0.625", "1.625", "0.3125", "0.5625", "0 (point mass)", "FedAvg", "1.054"} {
		if !strings.Contains(v.Table, s) {
			t.Errorf("table lacks %q", s)
		}
	}
}

func TestRenderOneRuleAndWeights(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      State
		series string
		rule   aggregate.Rule
		mean   float64
		vari   float64
	}{
		// Size weights 1:3: mean 0.25*0 + 0.75*2 = 1.5, variance 0.25*1 + 0.75*0.25 = 0.4375.
		{"EAA weighted", State{Clients: PapersState().Clients, Weights: []float64{1, 3}, Rule: aggregate.EAA},
			"client 1,client 2,EAA", aggregate.EAA, 1.5, 0.4375},
		// CF with w = (0.25, 0.75): sum w/s2 = 0.25/1 + 0.75/0.25 = 3.25, variance w_max/3.25,
		// mean (0.75*2/0.25)/3.25 = 6/3.25.
		{"CF weighted", State{Clients: PapersState().Clients, Weights: []float64{1, 3}, Rule: aggregate.CF},
			"client 1,client 2,CF", aggregate.CF, 6.0 / 3.25, 0.75 / 3.25},
		// Conflation ignores the weights.
		{"Conflation weighted", State{Clients: PapersState().Clients, Weights: []float64{1, 3}, Rule: aggregate.Conflation},
			"client 1,client 2,Conflation", aggregate.Conflation, 1.6, 0.2},
		// LP also draws the exact mixture; clients at -1, 0, 1 with variance 1: mean 0, variance
		// 1 + (1+0+1)/3.
		{"LP three clients", State{Clients: []aggregate.Gaussian{{Mean: -1, Var: 1}, {Mean: 0, Var: 1}, {Mean: 1, Var: 1}}, Rule: aggregate.LP},
			"client 1,client 2,client 3,mixture,LP", aggregate.LP, 0, 1 + 2.0/3},
		// DWC with the previous global N(1, 2): precision 1 + 4 - 1/2 = 4.5, mean (0 + 8 - 0.5)/4.5.
		{"DWC", State{Clients: PapersState().Clients, Rule: aggregate.DWC, Previous: &aggregate.Gaussian{Mean: 1, Var: 2}},
			"client 1,client 2,DWC", aggregate.DWC, 7.5 / 4.5, 1 / 4.5},
	} {
		v, err := Render(tc.s)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := strings.Join(seriesNames(t, v), ","); got != tc.series {
			t.Errorf("%s: series %s, want %s", tc.name, got, tc.series)
		}
		if len(v.Rows) != 1 || v.Rows[0].Rule != tc.rule {
			t.Errorf("%s: rows %+v", tc.name, v.Rows)
			continue
		}
		if r := v.Rows[0]; math.Abs(r.Mean-tc.mean) > 1e-12 || math.Abs(r.Var-tc.vari) > 1e-12 {
			t.Errorf("%s: N(%v, %v), want N(%v, %v)", tc.name, r.Mean, r.Var, tc.mean, tc.vari)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	if _, err := Render(State{Clients: PapersState().Clients, Weights: []float64{0, 0}}); err == nil {
		t.Error("zero weights rendered")
	}
	h := ErrorHTML(errFor("a <b> & c"))
	if !strings.Contains(h, "a &lt;b&gt; &amp; c") {
		t.Errorf("ErrorHTML does not escape: %s", h)
	}
}

type errFor string

func (e errFor) Error() string { return string(e) }

func TestResolveMode(t *testing.T) {
	for _, tc := range []struct {
		m    Mode
		nb   bool
		want Mode
	}{
		{Auto, true, Live}, // also in fast mode: a headless run says it is not live
		{Auto, false, Static},
		{Live, false, Live},
		{Static, true, Static},
	} {
		if got := ResolveMode(tc.m, tc.nb); got != tc.want {
			t.Errorf("ResolveMode(%v, %v) = %v, want %v", tc.m, tc.nb, got, tc.want)
		}
	}
}

// Outside a notebook Run renders and returns at once; bad input and a forced live mode are errors.
func TestRunOutsideNotebook(t *testing.T) {
	ctx := context.Background()
	s := PapersState()
	got, err := Run(ctx, s, Options{})
	if err != nil || len(got.Clients) != 2 {
		t.Errorf("Run(static) = %+v, %v", got, err)
	}
	if _, err := Run(ctx, State{Clients: s.Clients[:1]}, Options{}); err == nil {
		t.Error("Run with one client: no error")
	}
	if _, err := Run(ctx, s, Options{Mode: Live}); err == nil || !strings.Contains(err.Error(), "needs a GoNB notebook") {
		t.Errorf("Run(live) outside a notebook: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	got := describe(State{Clients: PapersState().Clients, Weights: []float64{1, 3}, Rule: aggregate.CF})
	if got != "N(0, 1) w=0.25, N(2, 0.25) w=0.75; rule: CF" {
		t.Errorf("describe = %q", got)
	}
}

func TestShowOutsideNotebook(t *testing.T) {
	v, err := Render(PapersState())
	if err != nil {
		t.Fatal(err)
	}
	if err := Show(v); err != nil {
		t.Errorf("Show: %v", err)
	}
	if err := Show(View{}); err == nil {
		t.Error("Show of an empty view: no error")
	}
}
