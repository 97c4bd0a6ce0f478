package explore

import (
	"math"
	"strings"
	"testing"
)

func TestScaleValue(t *testing.T) {
	for _, tc := range []struct {
		sc   Scale
		pos  int
		want float64
		err  string
	}{
		{MeanScale, 0, 0, ""},
		{MeanScale, 20, 1, ""},
		{MeanScale, 40, 2, ""},
		{MeanScale, -100, -5, ""},
		{MeanScale, 100, 5, ""},
		{MeanScale, 1, 0.05, ""},
		{MeanScale, 101, 0, "mean slider position 101 outside [-100, 100]"},
		{VarScale, 0, 1, ""},
		{VarScale, -40, 0.25, ""},
		{VarScale, 20, 2, ""},
		{VarScale, -140, 1.0 / 128, ""},
		{VarScale, 140, 128, ""},
		{VarScale, 10, math.Sqrt2, ""},
		{VarScale, -141, 0, "variance slider position -141"},
		{WeightScale, 50, 0.5, ""},
		{WeightScale, 0, 0, ""},
		{WeightScale, -1, 0, "weight slider position -1"},
	} {
		got, err := tc.sc.Value(tc.pos)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s.Value(%d): error %v, want %q", tc.sc.Name, tc.pos, err, tc.err)
			}
			continue
		}
		if err != nil || math.Abs(got-tc.want) > 1e-15*math.Max(1, math.Abs(tc.want)) {
			t.Errorf("%s.Value(%d) = %v, %v; want %v", tc.sc.Name, tc.pos, got, err, tc.want)
		}
	}
}

func TestScalePosition(t *testing.T) {
	for _, tc := range []struct {
		sc   Scale
		v    float64
		want int
		err  string
	}{
		{MeanScale, 2, 40, ""},
		{MeanScale, -1.26, -25, ""},
		{MeanScale, 5.02, 100, ""},
		{MeanScale, 5.03, 0, "mean 5.03 outside the slider's range [-5, 5]"},
		{MeanScale, math.NaN(), 0, "not finite"},
		{VarScale, 0.25, -40, ""},
		{VarScale, 0.3, -35, ""}, // 20*log2(0.3) = -34.74
		{VarScale, 100, 133, ""}, // 20*log2(100) = 132.88
		{VarScale, 0, 0, "variance 0 is not positive"},
		{VarScale, 200, 0, "outside the slider's range"},
		{VarScale, math.Inf(1), 0, "not finite"},
		{WeightScale, 0.3, 30, ""},
		{WeightScale, 1.5, 0, "weight 1.5 outside"},
	} {
		got, err := tc.sc.Position(tc.v)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s.Position(%v): error %v, want %q", tc.sc.Name, tc.v, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s.Position(%v) = %d, %v; want %d", tc.sc.Name, tc.v, got, err, tc.want)
		}
	}
}

// Every slider position maps to a value that maps back to the same position.
func TestScaleRoundTrip(t *testing.T) {
	for _, sc := range []Scale{MeanScale, VarScale, WeightScale} {
		for p := sc.Min; p <= sc.Max; p++ {
			v, err := sc.Value(p)
			if err != nil {
				t.Fatal(err)
			}
			if q, err := sc.Position(v); err != nil || q != p {
				t.Errorf("%s: Position(Value(%d) = %v) = %d, %v", sc.Name, p, v, q, err)
			}
		}
	}
}
