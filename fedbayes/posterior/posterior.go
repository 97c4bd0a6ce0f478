// Package posterior holds the one data type that flows between models and aggregators: a model's
// posterior as a list of named parameter tensors.
//
// A variational parameter is a mean-field Gaussian, stored as its mean and its log-variance
// (log sigma^2), the parameterisation of Ozer et al. (2022), "How to Combine Variational Bayesian
// Networks in Federated Learning", Section 3 ("implementation trick"). Models that keep softplus(rho)
// internally convert at the boundary (see conversions in this package). A deterministic parameter
// (FedAvg nets, MC-dropout nets, the deterministic layers of a hybrid net) has LogVar == nil.
//
// A "stacked" posterior holds K clients at once: every tensor has a leading client axis of size K.
package posterior

import (
	"fmt"
	"math"
	"sort"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Param is one named parameter of a posterior.
type Param struct {
	// Name is the parameter's unique path in its model (for example "/dense_0/weights").
	Name string
	// Mean is the posterior mean (or the value of a deterministic parameter), float32.
	Mean *tensors.Tensor
	// LogVar is log sigma^2 with Mean's shape, float32; nil for a deterministic parameter.
	LogVar *tensors.Tensor
}

// IsGaussian reports whether p is a variational (Gaussian) parameter.
func (p *Param) IsGaussian() bool { return p.LogVar != nil }

// Posterior is a model's posterior: its parameters sorted by name.
type Posterior struct {
	Params []Param
}

// Sort orders the parameters by name, the canonical order.
func (p *Posterior) Sort() {
	sort.Slice(p.Params, func(i, j int) bool { return p.Params[i].Name < p.Params[j].Name })
}

// Find returns the parameter with the given name, or nil.
func (p *Posterior) Find(name string) *Param {
	for i := range p.Params {
		if p.Params[i].Name == name {
			return &p.Params[i]
		}
	}
	return nil
}

// NumValues returns the number of scalar values of the Gaussian parameters (means only) and of the
// deterministic parameters.
func (p *Posterior) NumValues() (gaussian, deterministic int) {
	for _, q := range p.Params {
		if q.IsGaussian() {
			gaussian += q.Mean.Size()
		} else {
			deterministic += q.Mean.Size()
		}
	}
	return
}

// Validate checks that names are unique and non-empty, tensors are float32, LogVar has Mean's shape,
// and every value is finite. The error names the parameter and the first offending index.
func (p *Posterior) Validate() error {
	seen := make(map[string]bool, len(p.Params))
	for _, q := range p.Params {
		if q.Name == "" {
			return fmt.Errorf("posterior: a parameter has an empty name")
		}
		if seen[q.Name] {
			return fmt.Errorf("posterior: parameter %q appears twice", q.Name)
		}
		seen[q.Name] = true
		if q.Mean == nil {
			return fmt.Errorf("posterior: parameter %q has no mean", q.Name)
		}
		if err := checkFinite(q.Name, "mean", q.Mean); err != nil {
			return err
		}
		if q.LogVar != nil {
			if !q.LogVar.Shape().Equal(q.Mean.Shape()) {
				return fmt.Errorf("posterior: parameter %q: log-variance shape %s differs from mean shape %s",
					q.Name, q.LogVar.Shape(), q.Mean.Shape())
			}
			if err := checkFinite(q.Name, "log-variance", q.LogVar); err != nil {
				return err
			}
		}
	}
	return nil
}

// NonFiniteError is a posterior holding a NaN or an infinity (Validate's refusal): a model that
// diverged. The engine records a run whose server step fails with one as diverged, not failed.
type NonFiniteError struct {
	// Param and What name the parameter and its part ("mean", "log-variance"); Index is the flat
	// index of the first non-finite value, Value that value.
	Param, What string
	Index       int
	Value       float32
}

func (e *NonFiniteError) Error() string {
	return fmt.Sprintf("posterior: parameter %q: %s[%d] (flat index) is %v", e.Param, e.What, e.Index, e.Value)
}

// checkFinite returns a *NonFiniteError for the first NaN or infinity of t (a float32 tensor).
func checkFinite(name, what string, t *tensors.Tensor) error {
	if t.DType() != dtypes.Float32 {
		return fmt.Errorf("posterior: parameter %q: %s has dtype %s, want float32", name, what, t.DType())
	}
	var err error
	accessErr := tensors.ConstFlatData(t, func(flat []float32) {
		for i, v := range flat {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				err = &NonFiniteError{Param: name, What: what, Index: i, Value: v}
				return
			}
		}
	})
	if accessErr != nil {
		return fmt.Errorf("posterior: parameter %q: reading %s: %w", name, what, accessErr)
	}
	return err
}
