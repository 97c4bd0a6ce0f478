package predictive

import (
	"strings"
	"testing"
)

func TestParseSpecStrict(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`{"dataset": "digits", "clients": 3, "clients": 4}`, `clients (line 1, column 37): the key "clients" appears twice`},
		{`{"dataset": "digits", "noise_var": NaN}`, "noise_var (line 1, column 36): NaN is not a JSON number"},
		{`{"dataset": "digits", "noise_var": 1e999}`, "outside the range"},
		{`{"dataset": "digits", "clients": 9223372036854775808}`, "clients (line 1, column 34): number 9223372036854775808 does not fit"},
	}
	for _, tc := range tests {
		if _, err := ParseSpec([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSpec(%s) = %v, want %q", tc.doc, err, tc.want)
		}
	}
	s, err := ParseSpec([]byte("\xEF\xBB\xBF" + `{"dataset": "digits", "seeds": [9007199254740993]}`))
	if err != nil || s.Seeds[0] != 9007199254740993 {
		t.Errorf("BOM and exact seed: %v, %v", s.Seeds, err)
	}
}

func TestSpecSizeBounds(t *testing.T) {
	tests := []struct {
		set  func(*Spec)
		want string
	}{
		{func(s *Spec) { s.Clients = 1 << 62 }, "clients = 4611686018427387904: too large"},
		{func(s *Spec) { s.Hidden = []int{1 << 40} }, "hidden[0] = 1099511627776"},
		{func(s *Spec) { s.Hidden = []int{0} }, "hidden[0] = 0"},
		{func(s *Spec) { s.Sampler.BatchSize = 1 << 31 }, "sampler.batch_size"},
		{func(s *Spec) { s.EPDraws = 1 << 62 }, "ep_draws"},
		{func(s *Spec) { s.FedBE.Distill.Epochs = 1 << 62 }, "fedbe.distill.epochs"},
	}
	for _, tc := range tests {
		s := Spec{Setup: Setup{Dataset: "digits"}}.WithDefaults()
		tc.set(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	if err := (Spec{Setup: Setup{Dataset: "digits"}}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
