package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

// checkView fails when the view's option is not valid JSON or a number in it or in the rows is
// not finite.
func checkView(t *testing.T, where string, v View) {
	t.Helper()
	raw, err := v.Chart.OptionJSON()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatalf("%s: option JSON does not parse: %v", where, err)
	}
	for _, r := range v.Rows {
		for _, x := range []float64{r.Mean, r.Var, r.Spread} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%s: rule %s: row %+v is not finite", where, r.Rule, r)
			}
		}
	}
	if strings.Contains(v.Table, "NaN") || strings.Contains(v.Table, "Inf") {
		t.Fatalf("%s: table shows a non-finite number", where)
	}
}

// Every slider of every client slot at both ends of its range, for every number of clients and
// every rule, gives a state the explorer draws: valid JSON and finite numbers (issue 20: a variance
// at <= 0.018 or >= 13 gave NaN through round6).
func TestExplorerSliderExtremes(t *testing.T) {
	prev := &aggregate.Gaussian{Mean: 1, Var: 2}
	base, err := ControlsOf(State{Clients: PapersState().Clients, Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	choices := RuleChoices(State{Previous: prev})
	sliders := []struct {
		w  Widget
		sc Scale
	}{{MeanSlider, MeanScale}, {VarSlider, VarScale}, {WeightSlider, WeightScale}}
	n := 0
	for K := MinClients; K <= MaxClients; K++ {
		// "every rule" draws every rule; each rule alone is drawn with two clients.
		rules := []int{0}
		if K == MinClients {
			rules = rules[:0]
			for ri := range choices {
				rules = append(rules, ri)
			}
		}
		for _, ri := range rules {
			c, err := base.Apply(Event{Widget: ClientsSelect, Value: K - MinClients}, choices)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = c.Apply(Event{Widget: RuleSelect, Value: ri}, choices); err != nil {
				t.Fatal(err)
			}
			for k := range K {
				for _, sl := range sliders {
					for _, pos := range []int{sl.sc.Min, sl.sc.Max} {
						e, err := c.Apply(Event{Widget: sl.w, Client: k, Value: pos}, choices)
						if err != nil {
							t.Fatal(err)
						}
						where := fmt.Sprintf("K=%d rule=%q client %d %v at %d", K, choices[ri], k+1, sl.w, pos)
						s, err := e.State(prev, 1)
						if err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						v, err := Render(s)
						if err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						checkView(t, where, v)
						n++
					}
				}
			}
		}
	}
	// Corners: every client at the same end at once, and the clients as far apart as they go.
	for _, ri := range []int{0} { // every rule
		for _, corner := range []struct {
			name     string
			mean, vr func(k int) int
		}{
			{"all narrowest", func(int) int { return 0 }, func(int) int { return VarScale.Min }},
			{"all widest", func(int) int { return 0 }, func(int) int { return VarScale.Max }},
			{"far apart, narrow", func(k int) int { return []int{MeanScale.Min, MeanScale.Max}[k%2] }, func(int) int { return VarScale.Min }},
			{"far apart, mixed", func(k int) int { return []int{MeanScale.Min, MeanScale.Max}[k%2] }, func(k int) int { return []int{VarScale.Min, VarScale.Max}[k%2] }},
		} {
			c := base
			c.Clients = MaxClients
			c.Rule = choices[ri]
			for k := range MaxClients {
				c.Mean[k], c.Var[k] = corner.mean(k), corner.vr(k)
			}
			s, err := c.State(prev, 1)
			if err != nil {
				t.Fatalf("%s: %v", corner.name, err)
			}
			v, err := Render(s)
			if err != nil {
				t.Fatalf("%s: %v", corner.name, err)
			}
			checkView(t, corner.name, v)
		}
	}
	if n == 0 {
		t.Fatal("no state checked")
	}
}
