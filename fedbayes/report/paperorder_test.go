package report

import "testing"

func TestPaperRank(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool // a ranks strictly before b
	}{
		{"FedAvg", "EAA", true},
		{"EAA", "GAA", true},
		{"GAA", "CF", true},
		{"CF", "beta-predbayes", true},
		{"beta-predbayes", "bcm", false}, // both unknown: one rank
		{"WS", "GAA", false},             // an alias ranks as its rule
		{"DET-NWA", "EAA", true},         // a baseline's first word
	} {
		if got := PaperRank(tc.a) < PaperRank(tc.b); got != tc.less {
			t.Errorf("PaperRank(%q) < PaperRank(%q) = %v, want %v", tc.a, tc.b, got, tc.less)
		}
	}
}
