package metrics

import (
	"fmt"
	"math"
)

// DefaultMovedThreshold is the change of log sigma^2 beyond which a variance parameter counts as
// moved: |Delta log sigma^2| > 0.1, i.e. its standard deviation changed by more than about 5 %
// (exp(0.05) = 1.051). It is far above float32 rounding of log-variances near -10 (about 1e-6) and
// below the change a trained variance makes in a round when it learns (docs/models.md, measured).
const DefaultMovedThreshold = 0.1

// ClampTolerance is how close, in log sigma^2, a log-variance must come to a clamp bound to count as
// sitting at it; values beyond a bound (the raw, unclamped log-variances BFL-P exchanges) count too.
const ClampTolerance = 0.01

// VarianceHealth describes how a posterior's variances relate to reference values (their initial
// values, or the global model a client started its round from): whether they moved, and whether
// they sit at the clamp of log sigma^2 where a clamped forward pass passes no gradient.
type VarianceHealth struct {
	// N is the number of variance parameters compared.
	N int
	// Moved is the share (in [0, 1]) of them with |log sigma^2 - reference| > the threshold.
	Moved float64
	// MeanShift is the mean of |log sigma^2 - reference| over them.
	MeanShift float64
	// AtClamp is the share of them at or beyond a clamp bound: log sigma^2 <= lo + ClampTolerance or
	// >= hi - ClampTolerance.
	AtClamp float64
}

// Health accumulates VarianceHealth over parameters given one chunk at a time, like Spread. Sums are
// kept in float64 and updated in input order, so the result does not depend on how the values are
// split into chunks.
type Health struct {
	threshold, lo, hi float64
	n, moved, clamped int
	shift             float64
}

// NewHealth returns an accumulator that counts a log-variance as moved when it differs from its
// reference by more than threshold (DefaultMovedThreshold is the one fedbayes records), and as
// clamped when it lies within ClampTolerance of [lo, hi]'s bounds or beyond them (the model's clamp
// range of log sigma^2, models.Config.LogVarRange).
func NewHealth(threshold, lo, hi float64) (*Health, error) {
	if !(threshold > 0) || math.IsInf(threshold, 0) {
		return nil, fmt.Errorf("metrics: health: threshold %v; must be positive and finite", threshold)
	}
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("metrics: health: clamp range [%v, %v]; want finite bounds lo < hi", lo, hi)
	}
	return &Health{threshold: threshold, lo: lo, hi: hi}, nil
}

// Add accumulates the log-variances logVar of one parameter (or a chunk of one) against their
// references ref, element by element; name identifies the parameter in errors. Different lengths or
// a non-finite value are errors and change nothing.
func (h *Health) Add(name string, logVar, ref []float32) error {
	if len(logVar) == 0 {
		return fmt.Errorf("metrics: health: parameter %q has no values", name)
	}
	if len(logVar) != len(ref) {
		return fmt.Errorf("metrics: health: parameter %q: %d log-variances but %d references", name, len(logVar), len(ref))
	}
	for i := range logVar {
		if f := float64(logVar[i]); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("metrics: health: parameter %q: log-variance %d is %v", name, i, logVar[i])
		}
		if f := float64(ref[i]); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("metrics: health: parameter %q: reference %d is %v", name, i, ref[i])
		}
	}
	for i, lv := range logVar {
		v := float64(lv)
		d := math.Abs(v - float64(ref[i]))
		h.shift += d
		if d > h.threshold {
			h.moved++
		}
		if v <= h.lo+ClampTolerance || v >= h.hi-ClampTolerance {
			h.clamped++
		}
	}
	h.n += len(logVar)
	return nil
}

// N returns the number of log-variances accumulated.
func (h *Health) N() int { return h.n }

// Result returns the shares and the mean shift; it is an error if nothing was added.
func (h *Health) Result() (VarianceHealth, error) {
	if h.n == 0 {
		return VarianceHealth{}, fmt.Errorf("metrics: health: no log-variances were added")
	}
	n := float64(h.n)
	return VarianceHealth{N: h.n, Moved: float64(h.moved) / n, MeanShift: h.shift / n, AtClamp: float64(h.clamped) / n}, nil
}

// Disagreement accumulates how much clients disagree on their log-variances: for every variance
// parameter, the standard deviation (population form, divisor K) across the K clients of log sigma^2,
// averaged over the parameters. Rules that combine variances differ only where the clients' variances
// differ: for two clients with log-variances a and b, EAA's log((e^a + e^b)/2) and AALV's (a + b)/2
// differ by about (a - b)^2/8 = std^2/2 (Ozer et al. (2022), Eqs. 4 and 6). Zero means every rule of
// that family gives the same variances.
type Disagreement struct {
	n   int
	sum float64
}

// Add accumulates one parameter (or a chunk of one): clients[k] holds client k's log-variances, all of
// the same length. At least two clients are needed; a non-finite value is an error and changes nothing.
func (d *Disagreement) Add(name string, clients [][]float32) error {
	if len(clients) < 2 {
		return fmt.Errorf("metrics: disagreement: parameter %q: %d clients; need at least 2", name, len(clients))
	}
	n := len(clients[0])
	if n == 0 {
		return fmt.Errorf("metrics: disagreement: parameter %q has no values", name)
	}
	for k, c := range clients {
		if len(c) != n {
			return fmt.Errorf("metrics: disagreement: parameter %q: client %d has %d values, client 0 has %d", name, k, len(c), n)
		}
		for i, v := range c {
			if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("metrics: disagreement: parameter %q: client %d: log-variance %d is %v", name, k, i, v)
			}
		}
	}
	kf := float64(len(clients))
	for i := 0; i < n; i++ {
		mean := 0.0
		for _, c := range clients {
			mean += float64(c[i])
		}
		mean /= kf
		ss := 0.0
		for _, c := range clients {
			e := float64(c[i]) - mean
			ss += e * e
		}
		d.sum += math.Sqrt(ss / kf)
	}
	d.n += n
	return nil
}

// N returns the number of variance parameters accumulated.
func (d *Disagreement) N() int { return d.n }

// Result returns the mean across-client standard deviation of log sigma^2; it is an error if
// nothing was added.
func (d *Disagreement) Result() (float64, error) {
	if d.n == 0 {
		return 0, fmt.Errorf("metrics: disagreement: no log-variances were added")
	}
	return d.sum / float64(d.n), nil
}
