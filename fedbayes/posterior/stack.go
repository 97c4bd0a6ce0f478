package posterior

import (
	"fmt"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// CheckCompatible reports whether the K client posteriors describe the same model: the same
// parameter names in the same (sorted) order, the same shapes, float32 tensors, and each parameter
// either Gaussian in every client or deterministic in every client. The error names the client and
// the parameter. Values are not inspected (see Validate for finiteness).
func CheckCompatible(clients []*Posterior) error {
	if len(clients) == 0 {
		return fmt.Errorf("posterior: no clients")
	}
	for k, c := range clients {
		if c == nil {
			return fmt.Errorf("posterior: client %d is nil", k)
		}
	}
	ref := clients[0]
	for i, p := range ref.Params {
		if p.Mean == nil {
			return fmt.Errorf("posterior: client 0: parameter %q has no mean", p.Name)
		}
		if p.Mean.DType() != dtypes.Float32 {
			return fmt.Errorf("posterior: client 0: parameter %q: mean has dtype %s, want float32", p.Name, p.Mean.DType())
		}
		if i > 0 && ref.Params[i-1].Name >= p.Name {
			return fmt.Errorf("posterior: client 0: parameters are not sorted by unique name (%q then %q); call Sort",
				ref.Params[i-1].Name, p.Name)
		}
	}
	for k, c := range clients {
		if len(c.Params) != len(ref.Params) {
			return fmt.Errorf("posterior: client %d has %d parameters, client 0 has %d", k, len(c.Params), len(ref.Params))
		}
		for i := range c.Params {
			p, r := &c.Params[i], &ref.Params[i]
			if p.Name != r.Name {
				return fmt.Errorf("posterior: client %d: parameter #%d is %q, client 0 has %q", k, i, p.Name, r.Name)
			}
			if p.Mean == nil {
				return fmt.Errorf("posterior: client %d: parameter %q has no mean", k, p.Name)
			}
			if !p.Mean.Shape().Equal(r.Mean.Shape()) {
				return fmt.Errorf("posterior: client %d: parameter %q: mean shape %s differs from client 0's %s",
					k, p.Name, p.Mean.Shape(), r.Mean.Shape())
			}
			if p.IsGaussian() != r.IsGaussian() {
				return fmt.Errorf("posterior: client %d: parameter %q: Gaussian in one client and deterministic in another "+
					"(client 0 Gaussian: %v)", k, p.Name, r.IsGaussian())
			}
			if p.LogVar != nil && !p.LogVar.Shape().Equal(r.Mean.Shape()) {
				return fmt.Errorf("posterior: client %d: parameter %q: log-variance shape %s differs from mean shape %s",
					k, p.Name, p.LogVar.Shape(), r.Mean.Shape())
			}
		}
	}
	return nil
}

// Stack returns one stacked posterior holding the K clients: every tensor gains a leading client
// axis of size K (client k at index k). The clients must be compatible (see CheckCompatible).
func Stack(clients []*Posterior) (*Posterior, error) {
	if err := CheckCompatible(clients); err != nil {
		return nil, err
	}
	K := len(clients)
	out := &Posterior{Params: make([]Param, len(clients[0].Params))}
	for i, r := range clients[0].Params {
		parts := make([]*tensors.Tensor, K)
		for k := range clients {
			parts[k] = clients[k].Params[i].Mean
		}
		mean, err := stackTensors(parts)
		if err != nil {
			return nil, fmt.Errorf("posterior: stacking mean of %q: %w", r.Name, err)
		}
		out.Params[i] = Param{Name: r.Name, Mean: mean}
		if r.IsGaussian() {
			for k := range clients {
				parts[k] = clients[k].Params[i].LogVar
			}
			lv, err := stackTensors(parts)
			if err != nil {
				return nil, fmt.Errorf("posterior: stacking log-variance of %q: %w", r.Name, err)
			}
			out.Params[i].LogVar = lv
		}
	}
	return out, nil
}

// Unstack splits a stacked posterior (leading client axis K on every tensor) into K posteriors.
func Unstack(stacked *Posterior) ([]*Posterior, error) {
	if stacked == nil || len(stacked.Params) == 0 {
		return nil, fmt.Errorf("posterior: Unstack of an empty posterior")
	}
	K := -1
	for _, p := range stacked.Params {
		if p.Mean == nil || p.Mean.Rank() == 0 {
			return nil, fmt.Errorf("posterior: Unstack: parameter %q has no leading client axis", p.Name)
		}
		if K == -1 {
			K = p.Mean.Shape().Dimensions[0]
		}
		if d := p.Mean.Shape().Dimensions[0]; d != K {
			return nil, fmt.Errorf("posterior: Unstack: parameter %q has %d clients, %q has %d",
				p.Name, d, stacked.Params[0].Name, K)
		}
		if p.LogVar != nil && !p.LogVar.Shape().Equal(p.Mean.Shape()) {
			return nil, fmt.Errorf("posterior: Unstack: parameter %q: log-variance shape %s differs from mean shape %s",
				p.Name, p.LogVar.Shape(), p.Mean.Shape())
		}
	}
	out := make([]*Posterior, K)
	for k := range out {
		out[k] = &Posterior{Params: make([]Param, len(stacked.Params))}
	}
	for i, p := range stacked.Params {
		means, err := unstackTensor(p.Mean)
		if err != nil {
			return nil, fmt.Errorf("posterior: Unstack mean of %q: %w", p.Name, err)
		}
		var lvs []*tensors.Tensor
		if p.LogVar != nil {
			if lvs, err = unstackTensor(p.LogVar); err != nil {
				return nil, fmt.Errorf("posterior: Unstack log-variance of %q: %w", p.Name, err)
			}
		}
		for k := range out {
			out[k].Params[i] = Param{Name: p.Name, Mean: means[k]}
			if lvs != nil {
				out[k].Params[i].LogVar = lvs[k]
			}
		}
	}
	return out, nil
}

func stackTensors(parts []*tensors.Tensor) (*tensors.Tensor, error) {
	if parts[0].DType() != dtypes.Float32 {
		return nil, fmt.Errorf("dtype %s, want float32", parts[0].DType())
	}
	inner := parts[0].Shape()
	n := inner.Size()
	dims := append([]int{len(parts)}, inner.Dimensions...)
	out := tensors.FromShape(shapes.Make(dtypes.Float32, dims...))
	var readErr error
	err := tensors.MutableFlatData(out, func(dst []float32) {
		for k, t := range parts {
			if e := tensors.ConstFlatData(t, func(src []float32) { copy(dst[k*n:(k+1)*n], src) }); e != nil && readErr == nil {
				readErr = fmt.Errorf("client %d: %w", k, e)
			}
		}
	})
	if err == nil {
		err = readErr
	}
	return out, err
}

func unstackTensor(t *tensors.Tensor) ([]*tensors.Tensor, error) {
	if t.DType() != dtypes.Float32 {
		return nil, fmt.Errorf("dtype %s, want float32", t.DType())
	}
	dims := t.Shape().Dimensions
	K, inner := dims[0], shapes.Make(dtypes.Float32, dims[1:]...)
	n := inner.Size()
	out := make([]*tensors.Tensor, K)
	err := tensors.ConstFlatData(t, func(src []float32) {
		for k := range out {
			out[k] = tensors.FromShape(inner)
			_ = tensors.MutableFlatData(out[k], func(dst []float32) { copy(dst, src[k*n:(k+1)*n]) })
		}
	})
	return out, err
}
