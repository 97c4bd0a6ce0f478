package data

import (
	"math"
	"slices"
	"testing"
)

func TestStandardizerTable(t *testing.T) {
	// Rows (1, 10), (3, 10), (5, 10): means 3 and 10, population std sqrt(8/3) and 0 (-> 1).
	d := &Dataset{Name: "t", Shape: []int{2}, X: []float32{1, 10, 3, 10, 5, 10}, Targets: []float32{2, 4, 6}}
	s, err := FitStandardizer(d)
	if err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(8.0 / 3)
	if !closeAll(s.Mean, []float64{3, 10}, 1e-12) || !closeAll(s.Std, []float64{sd, 1}, 1e-12) {
		t.Fatalf("mean %v std %v", s.Mean, s.Std)
	}
	if s.TargetMean != 4 || math.Abs(s.TargetStd-sd) > 1e-12 {
		t.Fatalf("target mean %g std %g", s.TargetMean, s.TargetStd)
	}
	out, err := s.Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-2 / sd, 0, 0, 0, 2 / sd, 0}
	for i, w := range want {
		if math.Abs(float64(out.X[i])-w) > 1e-6 {
			t.Fatalf("standardised X %v, want %v", out.X, want)
		}
	}
	if d.X[0] != 1 {
		t.Fatal("Apply modified its input")
	}
	yt, err := s.ApplyTargets(d)
	if err != nil {
		t.Fatal(err)
	}
	s.InvertTargets(yt.Targets)
	for i, v := range yt.Targets {
		if math.Abs(float64(v-d.Targets[i])) > 1e-5 {
			t.Fatalf("targets after round trip %v, want %v", yt.Targets, d.Targets)
		}
	}
}

func TestStandardizerImageChannels(t *testing.T) {
	// Two 1x2 images with 2 channels: channel 0 values 0, 0.5, 1, 0.5; channel 1 values 1, 1, 1, 1.
	d := &Dataset{Name: "img", Shape: []int{1, 2, 2}, X: []float32{0, 1, 0.5, 1, 1, 1, 0.5, 1}, Labels: []int32{0, 1}, NumClasses: 2}
	s, err := FitStandardizer(d)
	if err != nil {
		t.Fatal(err)
	}
	// float64 reference for channel 0.
	vals := []float64{0, 0.5, 1, 0.5}
	var m, v float64
	for _, x := range vals {
		m += x / 4
	}
	for _, x := range vals {
		v += (x - m) * (x - m) / 4
	}
	if !closeAll(s.Mean, []float64{m, 1}, 1e-7) || !closeAll(s.Std, []float64{math.Sqrt(v), 1}, 1e-7) {
		t.Fatalf("mean %v std %v, want [%g 1] [%g 1]", s.Mean, s.Std, m, math.Sqrt(v))
	}
	if _, err := s.ApplyTargets(d); err == nil {
		t.Fatal("ApplyTargets on a classification set: no error")
	}
	if _, err := s.Apply(&Dataset{Shape: []int{3}, X: make([]float32, 3), Targets: []float32{0}}); err == nil {
		t.Fatal("Apply with another number of channels: no error")
	}
	out, _ := s.Apply(d)
	if !slices.Equal(out.Labels, d.Labels) {
		t.Fatal("labels changed")
	}
}

func closeAll(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}
