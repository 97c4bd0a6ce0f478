package metrics

import (
	"math"
	"strings"
	"testing"
)

// TestHealthHandComputed checks the shares and the mean shift against hand-computed cases.
func TestHealthHandComputed(t *testing.T) {
	tests := []struct {
		name   string
		lv     [][]float32 // chunks
		ref    [][]float32
		lo, hi float64
		want   VarianceHealth
	}{
		{
			name: "frozen at the initial value",
			lv:   [][]float32{{-10, -10, -10, -10}}, ref: [][]float32{{-10, -10, -10, -10}},
			lo: -20, hi: 8,
			want: VarianceHealth{N: 4},
		},
		{
			// |d| = 0.05, 0.1 (not beyond), 0.5, 2: 2 of 4 moved; mean shift 2.65/4.
			name: "threshold is strict",
			lv:   [][]float32{{-9.95, -6.1}, {-5.5, -8}}, ref: [][]float32{{-10, -6}, {-6, -6}},
			lo: -20, hi: 8,
			want: VarianceHealth{N: 4, Moved: 0.5, MeanShift: 2.65 / 4},
		},
		{
			// BFL-P: -9 and -8.995 lie beyond / within 0.01 of the floor -8; -7.98 does not; 8 is at the top.
			name: "clamp bounds and beyond",
			lv:   [][]float32{{-9, -7.995, -7.98, 8}}, ref: [][]float32{{-9, -9, -9, 0}},
			lo: -8, hi: 8,
			want: VarianceHealth{N: 4, Moved: 0.75, MeanShift: (0 + 1.005 + 1.02 + 8) / 4, AtClamp: 0.75},
		},
	}
	for _, tc := range tests {
		h, err := NewHealth(DefaultMovedThreshold, tc.lo, tc.hi)
		mustNoErr(t, err)
		for i := range tc.lv {
			mustNoErr(t, h.Add("w", tc.lv[i], tc.ref[i]))
		}
		got, err := h.Result()
		mustNoErr(t, err)
		if got.N != tc.want.N || got.Moved != tc.want.Moved || got.AtClamp != tc.want.AtClamp || !near(got.MeanShift, tc.want.MeanShift, 1e-5) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestHealthChunking: splitting the values into chunks gives the same result bit for bit.
func TestHealthChunking(t *testing.T) {
	lv := []float32{-10, -9.5, -3, -20, 7.999, -6.25, -6}
	ref := []float32{-10, -10, -6, -6, -6, -6, -6}
	one, _ := NewHealth(DefaultMovedThreshold, -20, 8)
	mustNoErr(t, one.Add("w", lv, ref))
	split, _ := NewHealth(DefaultMovedThreshold, -20, 8)
	for i := range lv {
		mustNoErr(t, split.Add("w", lv[i:i+1], ref[i:i+1]))
	}
	a, _ := one.Result()
	b, _ := split.Result()
	if a != b {
		t.Errorf("one chunk %+v, one value a chunk %+v", a, b)
	}
	if a.AtClamp != 2.0/7 || a.Moved != 5.0/7 {
		t.Errorf("got %+v, want AtClamp 2/7 and Moved 5/7", a)
	}
}

// TestHealthErrors: invalid arguments and values are errors naming what is wrong, and change nothing.
func TestHealthErrors(t *testing.T) {
	for _, tc := range []struct {
		thr, lo, hi float64
		want        string
	}{
		{0, -20, 8, "threshold 0"},
		{math.Inf(1), -20, 8, "threshold +Inf"},
		{0.1, 8, -20, "clamp range"},
		{0.1, math.Inf(-1), 8, "clamp range"},
	} {
		if _, err := NewHealth(tc.thr, tc.lo, tc.hi); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewHealth(%v, %v, %v): %v, want %q", tc.thr, tc.lo, tc.hi, err, tc.want)
		}
	}
	h, _ := NewHealth(DefaultMovedThreshold, -20, 8)
	if _, err := h.Result(); err == nil {
		t.Errorf("empty Result gave no error")
	}
	for _, tc := range []struct {
		lv, ref []float32
		want    string
	}{
		{nil, nil, `"l/w" has no values`},
		{[]float32{1, 2}, []float32{1}, "2 log-variances but 1 references"},
		{[]float32{1, float32(math.NaN())}, []float32{1, 1}, "log-variance 1 is NaN"},
		{[]float32{1}, []float32{float32(math.Inf(-1))}, "reference 0 is -Inf"},
	} {
		if err := h.Add("l/w", tc.lv, tc.ref); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%v, %v): %v, want %q", tc.lv, tc.ref, err, tc.want)
		}
	}
	if h.N() != 0 {
		t.Errorf("failed Adds accumulated %d values", h.N())
	}
}

// TestDisagreementHandComputed: two clients at a and b have standard deviation |a - b|/2; three at
// -6, -6, -3 have sqrt(2) (mean -5, squared deviations 1, 1, 4).
func TestDisagreementHandComputed(t *testing.T) {
	var d Disagreement
	mustNoErr(t, d.Add("w", [][]float32{{-10, -6}, {-10, -5}}))
	got, err := d.Result()
	mustNoErr(t, err)
	if got != 0.25 {
		t.Errorf("two clients: %v, want (0 + 0.5)/2 = 0.25", got)
	}
	var e Disagreement
	mustNoErr(t, e.Add("w", [][]float32{{-6}, {-6}, {-3}}))
	if got, _ := e.Result(); !near(got, math.Sqrt(2), 1e-12) {
		t.Errorf("three clients: %v, want sqrt(2)", got)
	}
	for _, tc := range []struct {
		clients [][]float32
		want    string
	}{
		{[][]float32{{1}}, "1 clients; need at least 2"},
		{[][]float32{{}, {}}, "has no values"},
		{[][]float32{{1, 2}, {1}}, "client 1 has 1 values, client 0 has 2"},
		{[][]float32{{1}, {float32(math.NaN())}}, "client 1: log-variance 0 is NaN"},
	} {
		if err := e.Add("l/w", tc.clients); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%v): %v, want %q", tc.clients, err, tc.want)
		}
	}
	if e.N() != 1 {
		t.Errorf("failed Adds changed N to %d", e.N())
	}
	var empty Disagreement
	if _, err := empty.Result(); err == nil {
		t.Errorf("empty Result gave no error")
	}
}
