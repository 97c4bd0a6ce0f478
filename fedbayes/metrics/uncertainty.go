package metrics

import (
	"fmt"
	"math"
)

// InputUncertainty is the uncertainty of one input, computed from M Monte Carlo predictive samples
// p_m = p(y | x, theta_m), m = 1..M.
type InputUncertainty struct {
	// Entropy is the normalised predictive entropy of the mean predictive p-bar (Fischer et al.
	// (2024), Eqs. 7-8): -sum_c p-bar_c log p-bar_c / log C, in [0, 1].
	Entropy float64
	// Aleatoric is the trace of the aleatoric term of Fischer et al. (2024), Eq. 9 (the Kwon et al.
	// estimator): (1/M) sum_m sum_c p_mc (1 - p_mc).
	Aleatoric float64
	// Epistemic is the trace of the epistemic term of Fischer et al. (2024), Eq. 9:
	// (1/M) sum_m sum_c (p_mc - p-bar_c)^2. Aleatoric + Epistemic = 1 - sum_c p-bar_c^2.
	Epistemic float64
	// MutualInformation is I(y; theta | x) = H(p-bar) - (1/M) sum_m H(p_m) in nats (the epistemic
	// part of the entropy decomposition of Depeweg et al., cited by Fischer et al. (2024), Sec. 2.3),
	// clamped at 0 against rounding.
	MutualInformation float64
	// Predicted is the class with the largest mean probability (Fischer et al. (2024), after Eq. 7).
	Predicted int32
	// Label is the true class.
	Label int32
}

// Correct reports whether the prediction is the label.
func (u InputUncertainty) Correct() bool { return u.Predicted == u.Label }

// Measure selects one per-input uncertainty score of InputUncertainty.
type Measure int

// The uncertainty measures, in the order Fischer et al. (2024), Sec. 3.3 plot them, plus mutual
// information.
const (
	// MeasureEntropy is InputUncertainty.Entropy.
	MeasureEntropy Measure = iota
	// MeasureAleatoric is InputUncertainty.Aleatoric.
	MeasureAleatoric
	// MeasureEpistemic is InputUncertainty.Epistemic.
	MeasureEpistemic
	// MeasureMutualInformation is InputUncertainty.MutualInformation.
	MeasureMutualInformation
)

// Measures lists every Measure, for loops over all retention curves.
var Measures = []Measure{MeasureEntropy, MeasureAleatoric, MeasureEpistemic, MeasureMutualInformation}

// String names the measure.
func (m Measure) String() string {
	switch m {
	case MeasureEntropy:
		return "normalised entropy"
	case MeasureAleatoric:
		return "aleatoric"
	case MeasureEpistemic:
		return "epistemic"
	case MeasureMutualInformation:
		return "mutual information"
	}
	return fmt.Sprintf("Measure(%d)", int(m))
}

// Of returns the measure's score for one input.
func (m Measure) Of(u InputUncertainty) (float64, error) {
	switch m {
	case MeasureEntropy:
		return u.Entropy, nil
	case MeasureAleatoric:
		return u.Aleatoric, nil
	case MeasureEpistemic:
		return u.Epistemic, nil
	case MeasureMutualInformation:
		return u.MutualInformation, nil
	}
	return 0, fmt.Errorf("metrics: unknown uncertainty measure %d", int(m))
}

// inputUncertainty computes the scores of one input from its M sample rows; rows(m) returns sample
// m's C probabilities. mean receives p-bar.
func inputUncertainty(numSamples, numClasses int, rows func(m int) []float32, mean []float64) InputUncertainty {
	for c := range mean {
		mean[c] = 0
	}
	for m := range numSamples {
		for c, p := range rows(m) {
			mean[c] += float64(p)
		}
	}
	invM := 1 / float64(numSamples)
	for c := range mean {
		mean[c] *= invM
	}
	var u InputUncertainty
	var hMean, sumSampleH, ale, epi float64
	for _, p := range mean {
		hMean -= xlogx(p)
	}
	for m := range numSamples {
		var h, a, e float64
		for c, p32 := range rows(m) {
			p := float64(p32)
			h -= xlogx(p)
			a += p * (1 - p)
			d := p - mean[c]
			e += d * d
		}
		sumSampleH += h
		ale += a
		epi += e
	}
	u.Entropy = hMean / math.Log(float64(numClasses))
	u.Aleatoric = ale * invM
	u.Epistemic = epi * invM
	u.MutualInformation = math.Max(0, hMean-sumSampleH*invM)
	u.Predicted = int32(argmax(mean))
	return u
}

// Decompose returns the full C x C matrices of Fischer et al. (2024), Eq. 9 for one input, from its
// M sample rows samples ([M, C] row-major): aleatoric = (1/M) sum_m diag(p_m) - p_m p_m^T and
// epistemic = (1/M) sum_m (p_m - p-bar)(p_m - p-bar)^T, both [C, C] row-major. Their traces are
// InputUncertainty.Aleatoric and .Epistemic.
func Decompose(samples []float32, numSamples, numClasses int) (aleatoric, epistemic []float64, err error) {
	if numSamples < 1 || numClasses < 2 {
		return nil, nil, fmt.Errorf("metrics: decompose: need M >= 1 samples and C >= 2 classes, got M=%d, C=%d",
			numSamples, numClasses)
	}
	c := numClasses
	if len(samples) != numSamples*c {
		return nil, nil, fmt.Errorf("metrics: decompose: got %d values, want M x C = %d", len(samples), numSamples*c)
	}
	for m := range numSamples {
		where := func() string { return fmt.Sprintf("decompose: sample %d", m) }
		if err := checkProbRow(samples[m*c:(m+1)*c], DefaultTolerance, where); err != nil {
			return nil, nil, err
		}
	}
	mean := make([]float64, c)
	for m := range numSamples {
		for k := range c {
			mean[k] += float64(samples[m*c+k])
		}
	}
	invM := 1 / float64(numSamples)
	for k := range mean {
		mean[k] *= invM
	}
	aleatoric = make([]float64, c*c)
	epistemic = make([]float64, c*c)
	for m := range numSamples {
		p := samples[m*c : (m+1)*c]
		for i := range c {
			pi := float64(p[i])
			aleatoric[i*c+i] += pi
			for j := range c {
				pj := float64(p[j])
				aleatoric[i*c+j] -= pi * pj
				epistemic[i*c+j] += (pi - mean[i]) * (pj - mean[j])
			}
		}
	}
	for k := range aleatoric {
		aleatoric[k] *= invM
		epistemic[k] *= invM
	}
	return aleatoric, epistemic, nil
}

// UncertaintyResult holds the metrics of a set of Monte Carlo predictions.
type UncertaintyResult struct {
	// Classification holds accuracy, NLL, Brier, ECE and reliability of the mean predictive p-bar
	// (Fischer et al. (2024), Eq. 7).
	Classification ClassificationResult
	// Inputs holds the per-input scores in input order.
	Inputs []InputUncertainty
	// MeanEntropy, MeanAleatoric, MeanEpistemic and MeanMutualInformation average the per-input
	// scores over all inputs.
	MeanEntropy, MeanAleatoric, MeanEpistemic, MeanMutualInformation float64
}

// Retention returns the accuracy-versus-data-retained curve for one measure (see RetentionCurve).
func (r UncertaintyResult) Retention(measure Measure, fractions []float64) ([]RetentionPoint, error) {
	scores := make([]float64, len(r.Inputs))
	correct := make([]bool, len(r.Inputs))
	for i, u := range r.Inputs {
		s, err := measure.Of(u)
		if err != nil {
			return nil, err
		}
		scores[i] = s
		correct[i] = u.Correct()
	}
	return RetentionCurve(scores, correct, fractions)
}

// Uncertainty accumulates, over batches of M Monte Carlo predictive samples, the per-input
// uncertainty scores (O(N) memory) and the classification metrics of the mean predictive.
type Uncertainty struct {
	numClasses, numSamples int
	tol                    float64
	batches                int
	cls                    *Classification
	inputs                 []InputUncertainty
	sums                   [4]float64
	mean                   []float64
}

// NewUncertainty returns an empty accumulator for numClasses >= 2 classes, numSamples >= 1 Monte
// Carlo samples per batch, and bins ECE bins (0: DefaultBins) for the mean predictive.
func NewUncertainty(numClasses, numSamples, bins int) (*Uncertainty, error) {
	if numSamples < 1 {
		return nil, fmt.Errorf("metrics: uncertainty: need at least 1 Monte Carlo sample, got %d", numSamples)
	}
	cls, err := NewClassification(numClasses, bins)
	if err != nil {
		return nil, fmt.Errorf("metrics: uncertainty: %w", err)
	}
	return &Uncertainty{numClasses: numClasses, numSamples: numSamples, tol: DefaultTolerance, cls: cls,
		mean: make([]float64, numClasses)}, nil
}

// SetTolerance changes the accepted |sum_c p_c - 1| of every sample row (DefaultTolerance by default).
func (a *Uncertainty) SetTolerance(tol float64) error {
	if err := checkTolerance("uncertainty", tol); err != nil {
		return err
	}
	a.tol = tol
	return a.cls.SetTolerance(tol)
}

// Add accumulates a batch of N = len(labels) inputs: samples holds M x N x C probabilities
// ([M, N, C] row-major: sample m of input n at (m*N+n)*C). A rejected batch changes nothing.
func (a *Uncertainty) Add(samples []float32, labels []int32) error {
	n, c, mm := len(labels), a.numClasses, a.numSamples
	if n == 0 {
		return fmt.Errorf("metrics: uncertainty: batch %d is empty", a.batches)
	}
	if len(samples) != mm*n*c {
		return fmt.Errorf("metrics: uncertainty: batch %d has %d values for M=%d samples x N=%d labels x C=%d classes (want %d)",
			a.batches, len(samples), mm, n, c, mm*n*c)
	}
	offset := len(a.inputs)
	for i, y := range labels {
		where := exampleWhere("uncertainty", a.batches, offset, i)
		if err := checkLabel(y, c, where); err != nil {
			return err
		}
		for m := range mm {
			row := samples[(m*n+i)*c : (m*n+i+1)*c]
			err := checkProbRow(row, a.tol, func() string { return fmt.Sprintf("%s, MC sample %d", where(), m) })
			if err != nil {
				return err
			}
		}
	}
	for i, y := range labels {
		u := inputUncertainty(mm, c, func(m int) []float32 { return samples[(m*n+i)*c : (m*n+i+1)*c] }, a.mean)
		u.Label = y
		a.inputs = append(a.inputs, u)
		a.sums[0] += u.Entropy
		a.sums[1] += u.Aleatoric
		a.sums[2] += u.Epistemic
		a.sums[3] += u.MutualInformation
		a.cls.addRow(a.mean, int(y))
	}
	a.cls.batches++
	a.batches++
	return nil
}

// Result returns the metrics of everything added so far; it is an error if nothing was added.
// The returned Inputs slice is a copy.
func (a *Uncertainty) Result() (UncertaintyResult, error) {
	if len(a.inputs) == 0 {
		return UncertaintyResult{}, fmt.Errorf("metrics: uncertainty: no inputs were added")
	}
	cls, err := a.cls.Result()
	if err != nil {
		return UncertaintyResult{}, err
	}
	n := float64(len(a.inputs))
	return UncertaintyResult{
		Classification:        cls,
		Inputs:                append([]InputUncertainty(nil), a.inputs...),
		MeanEntropy:           a.sums[0] / n,
		MeanAleatoric:         a.sums[1] / n,
		MeanEpistemic:         a.sums[2] / n,
		MeanMutualInformation: a.sums[3] / n,
	}, nil
}

// EvaluateUncertainty is the one-shot form of Uncertainty for N = len(labels) inputs and M =
// numSamples samples ([M, N, C] row-major).
func EvaluateUncertainty(samples []float32, labels []int32, numClasses, numSamples, bins int) (UncertaintyResult, error) {
	a, err := NewUncertainty(numClasses, numSamples, bins)
	if err != nil {
		return UncertaintyResult{}, err
	}
	if err := a.Add(samples, labels); err != nil {
		return UncertaintyResult{}, err
	}
	return a.Result()
}
