package predictive

import (
	"strings"
	"testing"
)

// TestRoundsSpecValidate names the offending field of each bad spec.
func TestRoundsSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		field string
		edit  func(*RoundsSpec)
	}{
		{"dataset", func(s *RoundsSpec) { s.Dataset = "" }},
		{"dataset", func(s *RoundsSpec) { s.Dataset = "diabetes" }},
		{"server_fraction", func(s *RoundsSpec) { s.ServerFraction = 1.5 }},
		{"clients", func(s *RoundsSpec) { s.Clients = 1 }},
		{"alpha", func(s *RoundsSpec) { s.Alpha = -1 }},
		{"rounds", func(s *RoundsSpec) { s.Rounds = -2 }},
		{"local", func(s *RoundsSpec) { s.Local.LearningRate = -0.1 }},
		{"fedbe.samples", func(s *RoundsSpec) { s.FedBE.Samples = -1 }},
		{"hidden[0]", func(s *RoundsSpec) { s.Hidden = []int{0} }},
		{"methods", func(s *RoundsSpec) { s.Methods = []string{"fedprox"} }},
		{"methods", func(s *RoundsSpec) { s.Methods = []string{RoundsFedAvg, RoundsFedAvg} }},
	} {
		s := RoundsSpec{Setup: Setup{Dataset: "digits"}}
		tc.edit(&s)
		err := s.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), "field "+tc.field+" ") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	if _, err := ParseRoundsSpec([]byte(`{"dataset":"digits","round":3}`)); err == nil || !strings.Contains(err.Error(), "round") {
		t.Errorf("unknown field: %v", err)
	}
}
