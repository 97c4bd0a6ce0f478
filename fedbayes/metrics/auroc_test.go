package metrics

import (
	"math"
	"testing"
)

// TestAUROC checks AUROC against areas counted by hand over every (positive, negative) pair: a pair
// scores 1 when the positive is higher, 1/2 when tied, 0 when lower; the area is the mean score.
func TestAUROC(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		pos, neg []float64
		want     float64
	}{
		{"perfect", []float64{3, 4}, []float64{1, 2}, 1},
		{"reversed", []float64{1}, []float64{2, 3}, 0},
		{"all tied", []float64{0, 0}, []float64{0}, 0.5},
		// pairs: (2,2) 1/2, (2,1) 1, (5,2) 1, (5,1) 1 -> 3.5/4.
		{"one tie", []float64{2, 5}, []float64{2, 1}, 0.875},
		// only (3,2) of the 4 pairs.
		{"interleaved", []float64{1, 3}, []float64{2, 4}, 0.25},
		// (0.1,0.5) 0, (0.9,0.5) 1, (0.5,0.5) 1/2 -> 1.5/3.
		{"tie in the middle", []float64{0.1, 0.9, 0.5}, []float64{0.5}, 0.5},
		// pairs with neg {1, 1, 3}: 2 -> 1+1+0, 3 -> 1+1+1/2, 3 -> 1+1+1/2 -> 7/9.
		{"ties on both sides", []float64{2, 3, 3}, []float64{1, 1, 3}, 7.0 / 9},
		// order of the inputs does not matter: same sets as "one tie", shuffled.
		{"unsorted", []float64{5, 2}, []float64{1, 2}, 0.875},
		{"infinities", []float64{math.Inf(1)}, []float64{math.Inf(-1), 0}, 1},
		{"no negatives (all one class)", []float64{1, 2}, nil, nan},
		{"no positives (all one class)", nil, []float64{1}, nan},
		{"both empty", nil, nil, nan},
		{"NaN score", []float64{1, nan}, []float64{0}, nan},
		{"NaN negative score", []float64{1}, []float64{nan}, nan},
	} {
		got := AUROC(tc.pos, tc.neg)
		if !(math.Abs(got-tc.want) < 1e-12 || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: AUROC(%v, %v) = %g, want %g", tc.name, tc.pos, tc.neg, got, tc.want)
		}
	}
}

// TestAUROCLeavesInputs checks that AUROC does not sort or otherwise change its arguments.
func TestAUROCLeavesInputs(t *testing.T) {
	pos, neg := []float64{5, 2, 9}, []float64{7, 1}
	AUROC(pos, neg)
	if pos[0] != 5 || pos[1] != 2 || pos[2] != 9 || neg[0] != 7 || neg[1] != 1 {
		t.Errorf("AUROC changed its inputs: pos %v, neg %v", pos, neg)
	}
}
