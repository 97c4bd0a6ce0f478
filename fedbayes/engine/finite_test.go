package engine

import (
	"math"
	"strings"
	"testing"
)

// TestValidateRefusesNonFiniteFromGo checks that a spec set from Go with NaN or ±Inf is refused by
// Validate with the field's JSON path, instead of panicking in WithDefaults' deep copy.
func TestValidateRefusesNonFiniteFromGo(t *testing.T) {
	for _, tc := range []struct {
		path string
		set  func(*Spec)
	}{
		{"partition.held_out", func(s *Spec) { s.Partition.HeldOut = math.NaN() }},
		{"training.lr", func(s *Spec) { s.Training.LearningRate = math.Inf(1) }},
		{"model.prior_std", func(s *Spec) { s.Model.PriorStd = math.Inf(-1) }},
	} {
		s := digitsSpec()
		tc.set(s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "finite") {
			t.Errorf("%s: error %v, want one naming the field and finiteness", tc.path, err)
		}
	}
	if err := digitsSpec().Validate(); err != nil {
		t.Fatalf("the plain spec: %v", err)
	}
}
