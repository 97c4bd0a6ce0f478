package metrics

import (
	"fmt"
	"math"
)

// ReliabilityBin is one bar of a reliability diagram: the examples whose confidence (largest class
// probability) falls in (Lower, Upper] (the first bin also holds confidence 0).
type ReliabilityBin struct {
	// Lower and Upper are the bin edges on the confidence axis.
	Lower, Upper float64
	// Count is the number of examples in the bin; Confidence and Accuracy are 0 when it is 0.
	Count int
	// Confidence is the mean confidence of the bin's examples.
	Confidence float64
	// Accuracy is the fraction of the bin's examples whose predicted class is the label.
	Accuracy float64
}

// ClassificationResult holds the classification metrics of a set of predictions.
type ClassificationResult struct {
	// N is the number of examples.
	N int
	// Accuracy is the fraction of examples whose most probable class is the label (ties go to the
	// lowest class index).
	Accuracy float64
	// NLL is the mean negative log-likelihood -log p(y|x) in nats (Hasan (2023), Eq. 2.16, divided
	// by N); probabilities below ProbFloor are raised to it, or, after SetNLLEpsilon(eps), eps is added
	// to every probability.
	NLL float64
	// Brier is the mean multi-class Brier score sum_c (p_c - 1[y=c])^2, in [0, 2].
	Brier float64
	// ECE is the expected calibration error with equal-width confidence bins, as a fraction
	// (Hasan (2023), Eq. 2.15; the binned form Ozer et al. (2022) describe in their appendix).
	ECE float64
	// Reliability holds the per-bin data behind ECE, in increasing confidence.
	Reliability []ReliabilityBin
}

// ECEPercent returns ECE in percent, the scale of Ozer et al. (2022), Tables 1 and 3.
func (r ClassificationResult) ECEPercent() float64 { return Percent(r.ECE) }

// AccuracyPercent returns Accuracy in percent.
func (r ClassificationResult) AccuracyPercent() float64 { return Percent(r.Accuracy) }

// Classification accumulates accuracy, NLL, Brier score, ECE and reliability-diagram data over
// batches of class probabilities.
type Classification struct {
	numClasses int
	bins       int
	tol        float64
	nllEpsilon float64 // 0: log(max(p, ProbFloor)); > 0: log(p + nllEpsilon)
	batches    int

	n        int
	correct  int
	nllSum   float64
	brierSum float64
	binCount []int
	binConf  []float64
	binHits  []int
	row      []float64
}

// NewClassification returns an empty accumulator for numClasses >= 2 classes and the given number
// of ECE bins (0 means DefaultBins).
func NewClassification(numClasses, bins int) (*Classification, error) {
	if numClasses < 2 {
		return nil, fmt.Errorf("metrics: classification: need at least 2 classes, got %d", numClasses)
	}
	if bins == 0 {
		bins = DefaultBins
	}
	if bins < 1 {
		return nil, fmt.Errorf("metrics: classification: number of ECE bins must be positive, got %d", bins)
	}
	return &Classification{
		numClasses: numClasses, bins: bins, tol: DefaultTolerance,
		binCount: make([]int, bins), binConf: make([]float64, bins), binHits: make([]int, bins),
		row: make([]float64, numClasses),
	}, nil
}

// SetTolerance changes the accepted |sum_c p_c - 1| (DefaultTolerance by default).
func (a *Classification) SetTolerance(tol float64) error {
	if err := checkTolerance("classification", tol); err != nil {
		return err
	}
	a.tol = tol
	return nil
}

// SetNLLEpsilon changes how the NLL guards the logarithm: eps = 0 (the default) uses
// -log(max(p, ProbFloor)); eps > 0 uses -log(p + eps), the convention of BFL-P's scores.py (eps = 1e-8,
// Ozer et al. (2022), Tables 1 and 3). Call it before Add; eps must be finite and in [0, 1).
func (a *Classification) SetNLLEpsilon(eps float64) error {
	if !(eps >= 0 && eps < 1) {
		return fmt.Errorf("metrics: classification: NLL epsilon %v; must be in [0, 1)", eps)
	}
	if a.n > 0 {
		return fmt.Errorf("metrics: classification: NLL epsilon set after %d examples were added", a.n)
	}
	a.nllEpsilon = eps
	return nil
}

// Add accumulates a batch: probs holds len(labels) rows of numClasses probabilities ([N, C]
// row-major). The batch is validated completely before anything is accumulated, so a rejected
// batch leaves the accumulator unchanged.
func (a *Classification) Add(probs []float32, labels []int32) error {
	c := a.numClasses
	if len(labels) == 0 {
		return fmt.Errorf("metrics: classification: batch %d is empty", a.batches)
	}
	if len(probs) != len(labels)*c {
		return fmt.Errorf("metrics: classification: batch %d has %d probabilities for %d labels x %d classes (want %d)",
			a.batches, len(probs), len(labels), c, len(labels)*c)
	}
	for i, y := range labels {
		where := exampleWhere("classification", a.batches, a.n, i)
		if err := checkLabel(y, c, where); err != nil {
			return err
		}
		if err := checkProbRow(probs[i*c:(i+1)*c], a.tol, where); err != nil {
			return err
		}
	}
	for i, y := range labels {
		for k, p := range probs[i*c : (i+1)*c] {
			a.row[k] = float64(p)
		}
		a.addRow(a.row, int(y))
	}
	a.batches++
	return nil
}

// addRow accumulates one validated example.
func (a *Classification) addRow(p []float64, y int) {
	pred := argmax(p)
	conf := p[pred]
	hit := pred == y
	if hit {
		a.correct++
	}
	if a.nllEpsilon > 0 {
		a.nllSum -= math.Log(p[y] + a.nllEpsilon)
	} else {
		a.nllSum -= logFloor(p[y])
	}
	var brier float64
	for k, v := range p {
		d := v
		if k == y {
			d = v - 1
		}
		brier += d * d
	}
	a.brierSum += brier
	b := binOf(conf, a.bins)
	a.binCount[b]++
	a.binConf[b] += conf
	if hit {
		a.binHits[b]++
	}
	a.n++
}

// binOf returns the equal-width bin of a confidence in [0, 1]: bin b holds (b/B, (b+1)/B], bin 0
// also holds 0.
func binOf(conf float64, bins int) int {
	b := int(math.Ceil(conf*float64(bins))) - 1
	if b < 0 {
		b = 0
	}
	if b >= bins {
		b = bins - 1
	}
	return b
}

// N returns the number of examples accumulated so far.
func (a *Classification) N() int { return a.n }

// Result returns the metrics of everything added so far; it is an error if nothing was added.
func (a *Classification) Result() (ClassificationResult, error) {
	if a.n == 0 {
		return ClassificationResult{}, fmt.Errorf("metrics: classification: no examples were added")
	}
	n := float64(a.n)
	r := ClassificationResult{
		N:           a.n,
		Accuracy:    float64(a.correct) / n,
		NLL:         a.nllSum / n,
		Brier:       a.brierSum / n,
		Reliability: make([]ReliabilityBin, a.bins),
	}
	var ece float64
	for b := range a.bins {
		bin := ReliabilityBin{
			Lower: float64(b) / float64(a.bins), Upper: float64(b+1) / float64(a.bins),
			Count: a.binCount[b],
		}
		if bin.Count > 0 {
			cnt := float64(bin.Count)
			bin.Confidence = a.binConf[b] / cnt
			bin.Accuracy = float64(a.binHits[b]) / cnt
			ece += math.Abs(float64(a.binHits[b]) - a.binConf[b])
		}
		r.Reliability[b] = bin
	}
	r.ECE = ece / n
	return r, nil
}

// EvaluateClassification is the one-shot form of Classification: the metrics of N = len(labels)
// examples with probabilities probs ([N, C] row-major), using bins ECE bins (0: DefaultBins).
func EvaluateClassification(probs []float32, labels []int32, numClasses, bins int) (ClassificationResult, error) {
	a, err := NewClassification(numClasses, bins)
	if err != nil {
		return ClassificationResult{}, err
	}
	if err := a.Add(probs, labels); err != nil {
		return ClassificationResult{}, err
	}
	return a.Result()
}
