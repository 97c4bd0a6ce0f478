package explore

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/aggregate"
)

func TestValidate(t *testing.T) {
	two := PapersState().Clients
	prev := &aggregate.Gaussian{Mean: 1, Var: 2}
	for _, tc := range []struct {
		name string
		s    State
		err  string
	}{
		{"papers", PapersState(), ""},
		{"one rule", State{Clients: two, Rule: aggregate.GAA}, ""},
		{"DWC with previous", State{Clients: two, Rule: aggregate.DWC, Previous: prev}, ""},
		{"five clients", State{Clients: append(append([]aggregate.Gaussian{}, two...), two[0], two[1], two[0])}, ""},
		{"one client", State{Clients: two[:1]}, "1 clients; the explorer takes 2 to 5"},
		{"six clients", State{Clients: make([]aggregate.Gaussian, 6)}, "6 clients"},
		{"zero variance", State{Clients: []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 1, Var: 0}}}, "client 2: variance 0 is not a positive number"},
		{"NaN mean", State{Clients: []aggregate.Gaussian{{Mean: math.NaN(), Var: 1}, {Mean: 1, Var: 1}}}, "client 1: mean is NaN"},
		{"weights length", State{Clients: two, Weights: []float64{1}}, "1 weights for 2 clients"},
		{"negative weight", State{Clients: two, Weights: []float64{1, -1}}, "client 2: weight -1"},
		{"zero weights", State{Clients: two, Weights: []float64{0, 0}}, "weights sum to 0"},
		{"FedAvg", State{Clients: two, Rule: aggregate.FedAvg}, `rule "FedAvg" cannot be drawn`},
		{"DWC without previous", State{Clients: two, Rule: aggregate.DWC}, "DWC needs the previous global"},
		{"unknown rule", State{Clients: two, Rule: "XYZ"}, `rule "XYZ" cannot be drawn`},
		{"bad previous", State{Clients: two, Previous: &aggregate.Gaussian{Var: -1}}, "previous global"},
	} {
		err := tc.s.Validate()
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestRuleChoices(t *testing.T) {
	got := RuleChoices(PapersState())
	want := []aggregate.Rule{"", aggregate.EAA, aggregate.GAA, aggregate.AALV, aggregate.PPA, aggregate.LP,
		aggregate.Conflation, aggregate.CF, aggregate.RKLB, aggregate.WB}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RuleChoices = %v, want %v", got, want)
	}
	s := PapersState()
	s.Previous = &aggregate.Gaussian{Mean: 1, Var: 2}
	if got := RuleChoices(s); len(got) != len(want)+1 || got[len(got)-1] != aggregate.DWC {
		t.Errorf("with a previous global: %v, want DWC last", got)
	}
	if ChoiceLabel("") != "every rule" || ChoiceLabel(aggregate.CF) != "CF" {
		t.Errorf("ChoiceLabel: %q, %q", ChoiceLabel(""), ChoiceLabel(aggregate.CF))
	}
}

func TestControlsRoundTrip(t *testing.T) {
	c, err := ControlsOf(PapersState())
	if err != nil {
		t.Fatal(err)
	}
	if c.Clients != 2 || c.Mean[0] != 0 || c.Mean[1] != 40 || c.Var[0] != 0 || c.Var[1] != -40 ||
		c.Weight[0] != 50 || c.Weight[1] != 50 || c.Rule != "" {
		t.Errorf("ControlsOf(papers) = %+v", c)
	}
	// Unused slots hold the default clients, on the sliders' grid.
	if c.Mean[2] != -40 || c.Var[2] != -20 || c.Weight[4] != 50 {
		t.Errorf("default slots: %+v", c)
	}
	s, err := c.State(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Clients, PapersState().Clients) || !reflect.DeepEqual(s.Weights, []float64{0.5, 0.5}) {
		t.Errorf("State() = %+v", s)
	}

	sized := State{Clients: PapersState().Clients, Weights: []float64{3, 7}, Rule: aggregate.CF}
	c, err = ControlsOf(sized)
	if err != nil {
		t.Fatal(err)
	}
	if c.Weight[0] != 30 || c.Weight[1] != 70 || c.Rule != aggregate.CF {
		t.Errorf("ControlsOf(sized) = %+v", c)
	}
	s, _ = c.State(nil, 0)
	w, _ := s.NormalizedWeights()
	if math.Abs(w[0]-0.3) > 1e-15 || math.Abs(w[1]-0.7) > 1e-15 {
		t.Errorf("normalised weights %v, want [0.3 0.7]", w)
	}

	if _, err := ControlsOf(State{Clients: []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 7, Var: 1}}}); err == nil ||
		!strings.Contains(err.Error(), "client 2: explore: mean 7 outside") {
		t.Errorf("mean out of range: %v", err)
	}
	if _, err := ControlsOf(State{Clients: PapersState().Clients[:1]}); err == nil {
		t.Errorf("one client accepted")
	}
}

func TestControlsApply(t *testing.T) {
	base, err := ControlsOf(PapersState())
	if err != nil {
		t.Fatal(err)
	}
	choices := RuleChoices(PapersState())
	for _, tc := range []struct {
		name  string
		ev    Event
		check func(Controls) bool
		err   string
	}{
		{"mean", Event{MeanSlider, 1, -30}, func(c Controls) bool { return c.Mean[1] == -30 }, ""},
		{"variance", Event{VarSlider, 0, 20}, func(c Controls) bool { return c.Var[0] == 20 }, ""},
		{"weight of slot 5", Event{WeightSlider, 4, 0}, func(c Controls) bool { return c.Weight[4] == 0 }, ""},
		{"clients", Event{ClientsSelect, 0, 3}, func(c Controls) bool { return c.Clients == 5 }, ""},
		{"rule", Event{RuleSelect, 0, 7}, func(c Controls) bool { return c.Rule == aggregate.CF }, ""},
		{"every rule", Event{RuleSelect, 0, 0}, func(c Controls) bool { return c.Rule == "" }, ""},
		{"mean out of range", Event{MeanSlider, 0, 200}, nil, "client 1: explore: mean slider position 200"},
		{"bad slot", Event{VarSlider, 5, 0}, nil, "client slot 5 outside [0, 5)"},
		{"bad clients", Event{ClientsSelect, 0, 4}, nil, "clients selector index 4"},
		{"bad rule", Event{RuleSelect, 0, len(choices)}, nil, "rule selector index 10"},
		{"bad widget", Event{Widget(99), 0, 0}, nil, "unknown widget 99"},
	} {
		got, err := base.Apply(tc.ev, choices)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			if got != base {
				t.Errorf("%s: controls changed on error", tc.name)
			}
			continue
		}
		if err != nil || !tc.check(got) {
			t.Errorf("%s: %+v, %v", tc.name, got, err)
		}
	}
	// Five clients: the default slots come in.
	c, _ := base.Apply(Event{ClientsSelect, 0, 3}, choices)
	s, err := c.State(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Clients) != 5 || s.Clients[4] != (aggregate.Gaussian{Mean: 1, Var: 4}) {
		t.Errorf("five clients: %+v", s.Clients)
	}
	// All weights at 0 is a state error, reported, not a panic.
	c = base
	c.Weight[0], c.Weight[1] = 0, 0
	if _, err := c.State(nil, 0); err == nil || !strings.Contains(err.Error(), "sum to 0") {
		t.Errorf("zero weights: %v", err)
	}
}
