package models

import (
	"fmt"
	"math"
	"slices"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Posterior returns the posterior of all clients, stacked: every tensor is [K, dims...]. Gaussian
// parameters carry their mean and log sigma^2 (clamped to [LogVarMin, LogVarMax], converted from rho for
// SoftplusParam); deterministic parameters (including batch-norm running statistics and a learned
// regression noise log-variance) carry their value with LogVar == nil. Parameters are sorted by name.
func (m *Model) Posterior() (*posterior.Posterior, error) {
	return m.export(-1)
}

// ClientPosterior returns client k's posterior, unstacked (tensors have the parameters' own shapes).
func (m *Model) ClientPosterior(k int) (*posterior.Posterior, error) {
	if k < 0 || k >= m.k {
		return nil, fmt.Errorf("models: ClientPosterior: client %d out of range [0, %d)", k, m.k)
	}
	return m.export(k)
}

// export reads the posterior of client k, or of all clients stacked if k < 0.
func (m *Model) export(k int) (*posterior.Posterior, error) {
	p := &posterior.Posterior{Params: make([]posterior.Param, 0, len(m.specs))}
	for _, s := range m.specs {
		dims, lo, hi := m.sliceOf(s, k)
		mean, err := readVar(s.mean)
		if err != nil {
			return nil, fmt.Errorf("models: reading %q: %w", s.name, err)
		}
		q := posterior.Param{Name: s.name, Mean: float32Tensor(mean[lo:hi], dims)}
		if s.gaussian {
			spread, err := readVar(s.spread)
			if err != nil {
				return nil, fmt.Errorf("models: reading the spread of %q: %w", s.name, err)
			}
			lv := spread[lo:hi]
			for i, v := range lv {
				if m.cfg.VarParam == SoftplusParam {
					v = logVarFromRho(v)
				}
				lv[i] = math.Min(math.Max(v, LogVarMin), LogVarMax)
			}
			q.LogVar = float32Tensor(lv, dims)
		}
		p.Params = append(p.Params, q)
	}
	p.Sort()
	return p, nil
}

// sliceOf returns the output dims and the flat range of client k (all clients if k < 0) of a parameter.
func (m *Model) sliceOf(s *paramSpec, k int) (dims []int, lo, hi int) {
	size := 1
	for _, d := range s.dims {
		size *= d
	}
	if k < 0 {
		return append([]int{m.k}, s.dims...), 0, m.k * size
	}
	return slices.Clone(s.dims), k * size, (k + 1) * size
}

// SetPosterior loads a posterior into the model. Each parameter's tensors are either stacked
// [K, dims...] (one slice per client) or unstacked [dims...] (broadcast to every client, for example a
// global model sent to all clients). Every model parameter must be present, Gaussian where the model's
// is Gaussian and deterministic where it is deterministic; extra parameters are an error. Log-variances
// are stored as given (SoftplusParam: converted to rho in float64); a value outside
// [LogVarMin, LogVarMax] is clamped when used. Nothing is changed if an error is returned.
func (m *Model) SetPosterior(p *posterior.Posterior) error {
	return m.load(p, -1, "SetPosterior")
}

// SetClientPosterior loads an unstacked posterior into client k only.
func (m *Model) SetClientPosterior(k int, p *posterior.Posterior) error {
	if k < 0 || k >= m.k {
		return fmt.Errorf("models: SetClientPosterior: client %d out of range [0, %d)", k, m.k)
	}
	return m.load(p, k, "SetClientPosterior")
}

// pendingSet is one variable update prepared by load.
type pendingSet struct {
	v      *context.Variable
	values []float64 // the full [K, dims...] content
}

func (m *Model) load(p *posterior.Posterior, client int, op string) error {
	if p == nil {
		return fmt.Errorf("models: %s: nil posterior", op)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("models: %s: %w", op, err)
	}
	for _, q := range p.Params {
		if m.byName[q.Name] == nil {
			return fmt.Errorf("models: %s: parameter %q is not in the model (it has %d parameters, first %q)",
				op, q.Name, len(m.specs), m.specs[0].name)
		}
	}
	var pending []pendingSet
	for _, s := range m.specs {
		q := p.Find(s.name)
		if q == nil {
			return fmt.Errorf("models: %s: parameter %q is missing from the posterior", op, s.name)
		}
		if q.IsGaussian() != s.gaussian {
			return fmt.Errorf("models: %s: parameter %q: the posterior's is %s but the model's is %s",
				op, s.name, gaussianWord(q.IsGaussian()), gaussianWord(s.gaussian))
		}
		mean, err := m.merged(s, s.mean, q.Mean, client, op, nil)
		if err != nil {
			return err
		}
		pending = append(pending, pendingSet{s.mean, mean})
		if s.gaussian {
			convert := func(v float64) float64 { return v }
			if m.cfg.VarParam == SoftplusParam {
				convert = rhoFromLogVar
			}
			spread, err := m.merged(s, s.spread, q.LogVar, client, op, convert)
			if err != nil {
				return err
			}
			pending = append(pending, pendingSet{s.spread, spread})
		}
	}
	return m.apply(pending, op)
}

func gaussianWord(g bool) string {
	if g {
		return "Gaussian"
	}
	return "deterministic"
}

// merged returns the new full content of variable v of parameter s after writing t into it: t stacked
// [K, dims...] or broadcast [dims...] when client < 0, or [dims...] into client's slice. convert, if not
// nil, maps each value.
func (m *Model) merged(s *paramSpec, v *context.Variable, t *tensors.Tensor, client int, op string, convert func(float64) float64) ([]float64, error) {
	got := t.Shape().Dimensions
	stacked := append([]int{m.k}, s.dims...)
	isStacked := slices.Equal(got, stacked)
	isSingle := slices.Equal(got, s.dims)
	if client >= 0 && !isSingle || client < 0 && !isStacked && !isSingle {
		want := fmt.Sprintf("%v or %v", stacked, s.dims)
		if client >= 0 {
			want = fmt.Sprint(s.dims)
		}
		return nil, fmt.Errorf("models: %s: parameter %q has shape %v, want %s", op, s.name, got, want)
	}
	src, err := tensors.CopyFlatData[float32](t)
	if err != nil {
		return nil, fmt.Errorf("models: %s: reading parameter %q: %w", op, s.name, err)
	}
	cur, err := readVar(v)
	if err != nil {
		return nil, fmt.Errorf("models: %s: reading the model's %q: %w", op, s.name, err)
	}
	size := len(cur) / m.k
	for i := range cur {
		var x float32
		switch {
		case isStacked:
			x = src[i]
		case client >= 0:
			if i/size != client {
				continue
			}
			x = src[i%size]
		default:
			x = src[i%size]
		}
		cur[i] = float64(x)
		if convert != nil {
			cur[i] = convert(cur[i])
		}
	}
	return cur, nil
}

// apply writes the prepared variable contents.
func (m *Model) apply(pending []pendingSet, op string) error {
	for _, ps := range pending {
		if err := ps.v.SetValue(m.tensorOf(ps.values, ps.v.Shape().Dimensions)); err != nil {
			return fmt.Errorf("models: %s: writing variable %s: %w", op, ps.v.ScopeAndName(), err)
		}
	}
	return nil
}

// SetPrior replaces the prior of every Gaussian weight by the Gaussian given in p (stacked per client or
// broadcast, as for SetPosterior), for example the previous round's global posterior (Fischer et al.
// (2024), Section 3.7). It needs Config.PriorVariables. Deterministic parameters of p are ignored; every
// Gaussian parameter of the model must be in p with a log-variance.
func (m *Model) SetPrior(p *posterior.Posterior) error {
	const op = "SetPrior"
	if !m.cfg.PriorVariables {
		return fmt.Errorf("models: %s: the model was built without Config.PriorVariables", op)
	}
	if p == nil {
		return fmt.Errorf("models: %s: nil posterior", op)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("models: %s: %w", op, err)
	}
	var pending []pendingSet
	for _, s := range m.specs {
		if !s.gaussian {
			continue
		}
		q := p.Find(s.name)
		if q == nil || !q.IsGaussian() {
			return fmt.Errorf("models: %s: Gaussian parameter %q is missing from the prior (or has no log-variance)", op, s.name)
		}
		mean, err := m.merged(s, s.priorMean, q.Mean, -1, op, nil)
		if err != nil {
			return err
		}
		lv, err := m.merged(s, s.priorLogVar, q.LogVar, -1, op, nil)
		if err != nil {
			return err
		}
		pending = append(pending, pendingSet{s.priorMean, mean}, pendingSet{s.priorLogVar, lv})
	}
	return m.apply(pending, op)
}

// readVar returns a variable's value as float64.
func readVar(v *context.Variable) ([]float64, error) {
	t, err := v.Value()
	if err != nil {
		return nil, err
	}
	switch t.DType() {
	case dtypes.Float32:
		f, err := tensors.CopyFlatData[float32](t)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(f))
		for i, x := range f {
			out[i] = float64(x)
		}
		return out, nil
	case dtypes.Float64:
		return tensors.CopyFlatData[float64](t)
	}
	return nil, fmt.Errorf("variable %s has dtype %s", v.ScopeAndName(), t.DType())
}

// tensorOf makes a tensor of the model's dtype.
func (m *Model) tensorOf(values []float64, dims []int) *tensors.Tensor {
	if m.cfg.DType == dtypes.Float64 {
		return tensors.FromFlatDataAndDimensions(slices.Clone(values), dims...)
	}
	return float32Tensor(values, dims)
}

func float32Tensor(values []float64, dims []int) *tensors.Tensor {
	f := make([]float32, len(values))
	for i, v := range values {
		f[i] = float32(v)
	}
	return tensors.FromFlatDataAndDimensions(f, dims...)
}
