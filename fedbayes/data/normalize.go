package data

import (
	"fmt"
	"math"
	"slices"
)

// Standardizer holds the statistics of a z-score transform x' = (x - Mean[c]) / Std[c], where c is
// the last axis of an example: the channel of an image [H, W, C], the feature of a table [F].
// Fit it on the training split only and apply it to every split, so that no test statistic leaks
// into training.
type Standardizer struct {
	// Mean and Std are per channel (images) or per feature (tables). A constant column has Std 1.
	Mean, Std []float64
	// TargetMean and TargetStd standardise regression targets (0 and 1 for classification).
	TargetMean, TargetStd float64
}

// FitStandardizer computes per-channel (or per-feature) means and population standard deviations
// over all examples of d, in float64, and those of the targets for regression.
func FitStandardizer(d *Dataset) (*Standardizer, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	n := d.Len()
	if n == 0 {
		return nil, fmt.Errorf("standardizer: dataset %s is empty", d.Name)
	}
	c := d.Shape[len(d.Shape)-1]
	sum := make([]float64, c)
	sq := make([]float64, c)
	for i, v := range d.X {
		sum[i%c] += float64(v)
	}
	count := float64(len(d.X) / c)
	s := &Standardizer{Mean: make([]float64, c), Std: make([]float64, c), TargetStd: 1}
	for j := range sum {
		s.Mean[j] = sum[j] / count
	}
	for i, v := range d.X { // two passes: numerically safer than E[x^2] - E[x]^2
		dv := float64(v) - s.Mean[i%c]
		sq[i%c] += dv * dv
	}
	for j := range sq {
		s.Std[j] = nonZeroStd(math.Sqrt(sq[j] / count))
	}
	if d.Targets != nil {
		var m, v float64
		for _, t := range d.Targets {
			m += float64(t)
		}
		m /= float64(n)
		for _, t := range d.Targets {
			v += (float64(t) - m) * (float64(t) - m)
		}
		s.TargetMean, s.TargetStd = m, nonZeroStd(math.Sqrt(v/float64(n)))
	}
	return s, nil
}

// nonZeroStd replaces a (near) zero deviation by 1, so that a constant column maps to 0.
func nonZeroStd(s float64) float64 {
	if s < 1e-12 {
		return 1
	}
	return s
}

// Apply returns a copy of d with standardised inputs; labels and targets are copied unchanged.
func (s *Standardizer) Apply(d *Dataset) (*Dataset, error) {
	c := d.Shape[len(d.Shape)-1]
	if c != len(s.Mean) {
		return nil, fmt.Errorf("standardizer fitted on %d channels/features, dataset %s has %d", len(s.Mean), d.Name, c)
	}
	out := *d
	out.X = make([]float32, len(d.X))
	for i, v := range d.X {
		out.X[i] = float32((float64(v) - s.Mean[i%c]) / s.Std[i%c])
	}
	out.Shape = slices.Clone(d.Shape)
	out.Labels, out.Targets = slices.Clone(d.Labels), slices.Clone(d.Targets)
	return &out, nil
}

// ApplyTargets returns a copy of a regression dataset with targets (t - TargetMean) / TargetStd.
func (s *Standardizer) ApplyTargets(d *Dataset) (*Dataset, error) {
	if d.Targets == nil {
		return nil, fmt.Errorf("standardizer: dataset %s has no regression targets", d.Name)
	}
	out := *d
	out.X, out.Shape = slices.Clone(d.X), slices.Clone(d.Shape)
	out.Targets = make([]float32, len(d.Targets))
	for i, t := range d.Targets {
		out.Targets[i] = float32((float64(t) - s.TargetMean) / s.TargetStd)
	}
	return &out, nil
}

// InvertTargets maps standardised predictions back to the original target scale, in place.
func (s *Standardizer) InvertTargets(y []float32) {
	for i, v := range y {
		y[i] = float32(float64(v)*s.TargetStd + s.TargetMean)
	}
}
