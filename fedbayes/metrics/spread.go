package metrics

import (
	"fmt"
	"math"
)

// Spread accumulates the degree of spread of a Bayesian model: the Euclidean norm of the vector of
// all its posterior standard deviations, sqrt(sum_i sigma_i^2) (Ozer et al. (2022), Sec. 5 and
// Table 4). Parameters are given as log-variances log sigma^2, the fedbayes posterior
// parameterisation, one tensor (or any chunk of one) per Add.
type Spread struct {
	n      int
	sumVar float64
}

// Add accumulates a chunk of log-variances; a non-finite value is an error and changes nothing.
// name identifies the parameter in error messages.
func (s *Spread) Add(name string, logVar []float32) error {
	if len(logVar) == 0 {
		return fmt.Errorf("metrics: spread: parameter %q has no values", name)
	}
	for i, lv := range logVar {
		if v := float64(lv); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("metrics: spread: parameter %q: log-variance %d is %v", name, i, lv)
		}
	}
	for _, lv := range logVar {
		s.sumVar += math.Exp(float64(lv))
	}
	s.n += len(logVar)
	return nil
}

// N returns the number of standard deviations accumulated.
func (s *Spread) N() int { return s.n }

// Result returns sqrt(sum_i exp(logVar_i)); it is an error if nothing was added.
func (s *Spread) Result() (float64, error) {
	if s.n == 0 {
		return 0, fmt.Errorf("metrics: spread: no log-variances were added")
	}
	return math.Sqrt(s.sumVar), nil
}

// SpreadNorm is the one-shot form of Spread over several parameters' log-variances.
func SpreadNorm(logVars ...[]float32) (float64, error) {
	var s Spread
	for i, lv := range logVars {
		if err := s.Add(fmt.Sprintf("#%d", i), lv); err != nil {
			return 0, err
		}
	}
	return s.Result()
}
