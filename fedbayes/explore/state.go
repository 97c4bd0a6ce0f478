package explore

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
)

// MinClients and MaxClients bound the number of clients of the explorer.
const (
	MinClients = 2
	MaxClients = 5
)

// DefaultPopulationSize is PPA's population size N in the explorer: large enough that the sampled
// moments are close to LP's, small enough to redraw at slider speed.
const DefaultPopulationSize = 2000

// State is what the explorer draws: K univariate Gaussian clients with relative weights, and the
// rule to show.
type State struct {
	// Clients are the K client Gaussians N(mean, variance), MinClients <= K <= MaxClients.
	Clients []aggregate.Gaussian
	// Weights are relative client weights (finite, >= 0, positive sum), normalised before
	// aggregating; nil means equal weights.
	Weights []float64
	// Rule is the rule drawn; "" draws every rule (see RuleChoices).
	Rule aggregate.Rule
	// Previous is the previous global Gaussian N(mu_o, s2_o) that DWC needs (Fischer et al. (2024),
	// Eq. 17); DWC is offered only when it is set.
	Previous *aggregate.Gaussian
	// Seed seeds PPA's sampling (same seed, same picture).
	Seed int64
}

// DefaultSeed is PPA's seed in the explorer's toy cases and in `fedbayes aggregate` (its -seed
// default), so that the same toy case gives the same PPA numbers in both.
const DefaultSeed int64 = 1

// PapersState is the toy case of Ozer et al. (2022), Fig. 1 and Jamoussi et al. (BA-BFL), Fig. 1:
// N(0, 1) and N(2, 0.25) with equal weights, every rule, PPA seeded with DefaultSeed.
func PapersState() State {
	return State{Clients: []aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 2, Var: 0.25}}, Seed: DefaultSeed}
}

// RuleChoices returns the rules the explorer can draw for s, "" (every rule) first: every rule of
// aggregate.Rules() with a density (FedAvg, a point mass, is only listed in the table), DWC only
// when s.Previous is set.
func RuleChoices(s State) []aggregate.Rule {
	out := []aggregate.Rule{""}
	for _, r := range aggregate.Rules() {
		if r == aggregate.FedAvg || (r == aggregate.DWC && s.Previous == nil) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// ChoiceLabel is the text of a rule in the selector: "every rule" for "".
func ChoiceLabel(r aggregate.Rule) string {
	if r == "" {
		return "every rule"
	}
	return string(r)
}

// Validate checks the number of clients, every client, the weights, the rule and the previous
// global, naming what is wrong and where.
func (s State) Validate() error {
	K := len(s.Clients)
	if K < MinClients || K > MaxClients {
		return fmt.Errorf("explore: %d clients; the explorer takes %d to %d", K, MinClients, MaxClients)
	}
	for k, c := range s.Clients {
		if math.IsNaN(c.Mean) || math.IsInf(c.Mean, 0) {
			return fmt.Errorf("explore: client %d: mean is %v", k+1, c.Mean)
		}
		if math.IsNaN(c.Var) || math.IsInf(c.Var, 0) || c.Var <= 0 {
			return fmt.Errorf("explore: client %d: variance %v is not a positive number", k+1, c.Var)
		}
	}
	if _, err := s.NormalizedWeights(); err != nil {
		return err
	}
	if s.Previous != nil {
		p := *s.Previous
		if math.IsNaN(p.Mean) || math.IsInf(p.Mean, 0) || math.IsNaN(p.Var) || math.IsInf(p.Var, 0) || p.Var <= 0 {
			return fmt.Errorf("explore: previous global N(%v, %v) is not a Gaussian with positive variance", p.Mean, p.Var)
		}
	}
	for _, r := range RuleChoices(s) {
		if r == s.Rule {
			return nil
		}
	}
	if s.Rule == aggregate.DWC {
		return fmt.Errorf("explore: rule DWC needs the previous global (State.Previous)")
	}
	return fmt.Errorf("explore: rule %q cannot be drawn (known rules with a density: %v)", s.Rule, RuleChoices(s)[1:])
}

// NormalizedWeights returns the client weights divided by their sum (equal weights when
// s.Weights is nil), or an error naming the first bad weight.
func (s State) NormalizedWeights() ([]float64, error) {
	K := len(s.Clients)
	w := make([]float64, K)
	if s.Weights == nil {
		for k := range w {
			w[k] = 1 / float64(K)
		}
		return w, nil
	}
	if len(s.Weights) != K {
		return nil, fmt.Errorf("explore: %d weights for %d clients", len(s.Weights), K)
	}
	sum := 0.0
	for k, v := range s.Weights {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("explore: client %d: weight %v is not a finite number >= 0", k+1, v)
		}
		sum += v
	}
	if sum <= 0 {
		return nil, fmt.Errorf("explore: the client weights sum to 0: give at least one client a positive weight")
	}
	for k, v := range s.Weights {
		w[k] = v / sum
	}
	return w, nil
}

// Controls holds the position of every widget of the explorer: the number of clients, three
// sliders per client slot (MaxClients slots; the first Clients are used) and the rule.
type Controls struct {
	// Clients is the number of active clients, MinClients to MaxClients.
	Clients int
	// Mean, Var and Weight are slider positions on MeanScale, VarScale and WeightScale.
	Mean, Var, Weight [MaxClients]int
	// Rule is the selected rule; "" is every rule.
	Rule aggregate.Rule
}

// defaultSlots are the clients that slots beyond the initial state's start with (the papers' two
// clients first).
var defaultSlots = [MaxClients]aggregate.Gaussian{{Mean: 0, Var: 1}, {Mean: 2, Var: 0.25}, {Mean: -2, Var: 0.5}, {Mean: 3.5, Var: 2}, {Mean: 1, Var: 4}}

// ControlsOf returns the widget positions nearest to s: means, variances and weights snapped to
// their sliders (weights as shares of 100: 0.3 and 0.7 become 30 and 70), slots beyond K set to
// default clients of equal weight. It fails when s is invalid or a value is outside a slider's
// range.
func ControlsOf(s State) (Controls, error) {
	if err := s.Validate(); err != nil {
		return Controls{}, err
	}
	w, _ := s.NormalizedWeights()
	c := Controls{Clients: len(s.Clients), Rule: s.Rule}
	equal := WeightScale.Max / 2
	for k := range MaxClients {
		g, wk := defaultSlots[k], -1.0
		if k < len(s.Clients) {
			g, wk = s.Clients[k], w[k]
		}
		var err error
		if c.Mean[k], err = MeanScale.Position(g.Mean); err != nil {
			return Controls{}, fmt.Errorf("client %d: %w", k+1, err)
		}
		if c.Var[k], err = VarScale.Position(g.Var); err != nil {
			return Controls{}, fmt.Errorf("client %d: %w", k+1, err)
		}
		switch {
		case wk < 0:
			c.Weight[k] = equal
		case s.Weights == nil:
			c.Weight[k] = equal
		default:
			c.Weight[k] = int(math.Round(wk * float64(WeightScale.Max)))
		}
	}
	return c, nil
}

// State returns the state the widgets show, with the given previous global (for DWC) and PPA seed.
func (c Controls) State(previous *aggregate.Gaussian, seed int64) (State, error) {
	if c.Clients < MinClients || c.Clients > MaxClients {
		return State{}, fmt.Errorf("explore: %d clients; the explorer takes %d to %d", c.Clients, MinClients, MaxClients)
	}
	s := State{Rule: c.Rule, Previous: previous, Seed: seed, Weights: make([]float64, c.Clients)}
	for k := range c.Clients {
		m, err := MeanScale.Value(c.Mean[k])
		if err != nil {
			return State{}, fmt.Errorf("client %d: %w", k+1, err)
		}
		v, err := VarScale.Value(c.Var[k])
		if err != nil {
			return State{}, fmt.Errorf("client %d: %w", k+1, err)
		}
		if s.Weights[k], err = WeightScale.Value(c.Weight[k]); err != nil {
			return State{}, fmt.Errorf("client %d: %w", k+1, err)
		}
		s.Clients = append(s.Clients, aggregate.Gaussian{Mean: m, Var: v})
	}
	return s, s.Validate()
}

// Widget names one kind of explorer widget.
type Widget int

// The explorer's widgets.
const (
	// MeanSlider is a client's mean slider (MeanScale).
	MeanSlider Widget = iota
	// VarSlider is a client's variance slider (VarScale).
	VarSlider
	// WeightSlider is a client's weight slider (WeightScale).
	WeightSlider
	// ClientsSelect selects the number of clients; its value is an index: K = MinClients + index.
	ClientsSelect
	// RuleSelect selects the rule; its value is an index into RuleChoices.
	RuleSelect
)

// Event is one change of a widget as GoNB reports it: the widget, its client slot (sliders only,
// 0-based) and its new integer value.
type Event struct {
	Widget Widget
	Client int
	Value  int
}

// Apply returns the controls after ev; choices are the rule selector's options (RuleChoices).
// Out-of-range values are errors (the controls are left unchanged).
func (c Controls) Apply(ev Event, choices []aggregate.Rule) (Controls, error) {
	slot := func() error {
		if ev.Client < 0 || ev.Client >= MaxClients {
			return fmt.Errorf("explore: client slot %d outside [0, %d)", ev.Client, MaxClients)
		}
		return nil
	}
	set := func(dst *[MaxClients]int, sc Scale) (Controls, error) {
		if err := slot(); err != nil {
			return c, err
		}
		if _, err := sc.Value(ev.Value); err != nil {
			return c, fmt.Errorf("client %d: %w", ev.Client+1, err)
		}
		dst[ev.Client] = ev.Value
		return c, nil
	}
	switch ev.Widget {
	case MeanSlider:
		return set(&c.Mean, MeanScale)
	case VarSlider:
		return set(&c.Var, VarScale)
	case WeightSlider:
		return set(&c.Weight, WeightScale)
	case ClientsSelect:
		if ev.Value < 0 || ev.Value > MaxClients-MinClients {
			return c, fmt.Errorf("explore: clients selector index %d outside [0, %d]", ev.Value, MaxClients-MinClients)
		}
		c.Clients = MinClients + ev.Value
		return c, nil
	case RuleSelect:
		if ev.Value < 0 || ev.Value >= len(choices) {
			return c, fmt.Errorf("explore: rule selector index %d outside [0, %d)", ev.Value, len(choices))
		}
		c.Rule = choices[ev.Value]
		return c, nil
	}
	return c, fmt.Errorf("explore: unknown widget %d", ev.Widget)
}
