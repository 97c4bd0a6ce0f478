package engine

import (
	"strings"
	"testing"
)

// TestValidateRefusesPopulationOneAndNoSeeds checks issue 36's two specs that passed validation:
// aggregation.population 1 (PPA's variance of one sample; it failed at round 1) and "seeds": []
// (it ran seed 0), each refused by ParseSpec + RunList with the field's path, while the neighbouring
// valid values pass.
func TestValidateRefusesPopulationOneAndNoSeeds(t *testing.T) {
	const base = `{"name": "v", "dataset": {"name": "digits"}, "partition": {"clients": 2},
		"training": {"rounds": 1}, "aggregation": {"rule": "PPA"%s}%s}`
	tests := []struct {
		name, agg, seeds, want string
	}{
		{"population 1", `, "population": 1`, "", "aggregation.population: 1: PPA takes the variance of a population of N samples"},
		{"population 2", `, "population": 2`, "", ""},
		{"population default", "", "", ""},
		{"no seeds", "", `, "seeds": []`, `seeds: an empty list runs nothing: give at least one seed, or leave "seeds" out to run seed 0`},
		{"one seed", "", `, "seeds": [4]`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(strings.Replace(strings.Replace(base, "%s", tc.agg, 1), "%s", tc.seeds, 1)))
			if err == nil {
				_, err = RunList(s)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
