package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestSpreadHandComputed(t *testing.T) {
	// Standard deviations 1, 2, 3: norm sqrt(14).
	got, err := SpreadNorm([]float32{0, float32(math.Log(4))}, []float32{float32(math.Log(9))})
	mustNoErr(t, err)
	if !near(got, math.Sqrt(14), 1e-6) {
		t.Errorf("SpreadNorm = %v, want sqrt(14)", got)
	}
	var s Spread
	for _, lv := range []float32{0, float32(math.Log(4)), float32(math.Log(9))} {
		mustNoErr(t, s.Add("w", []float32{lv}))
	}
	r, err := s.Result()
	mustNoErr(t, err)
	if r != got || s.N() != 3 {
		t.Errorf("streamed %v (N %d), one-shot %v", r, s.N(), got)
	}
}

func TestSpreadErrors(t *testing.T) {
	var s Spread
	if _, err := s.Result(); err == nil {
		t.Errorf("empty Result gave no error")
	}
	for _, tc := range []struct {
		lv   []float32
		want string
	}{
		{nil, `"dense/w" has no values`},
		{[]float32{0, float32(math.NaN())}, `"dense/w": log-variance 1 is NaN`},
		{[]float32{float32(math.Inf(1))}, "+Inf"},
	} {
		if err := s.Add("dense/w", tc.lv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%v): error %v, want one containing %q", tc.lv, err, tc.want)
		}
	}
	if s.N() != 0 {
		t.Errorf("rejected chunks were accumulated")
	}
}
