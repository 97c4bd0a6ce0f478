package predictive

import (
	"fmt"
	"slices"

	"fedbayes.dev/fedbayes/internal/catch"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// flatParams is a host copy of the values (means) of a posterior's parameters: one flat float32
// slice per parameter, in the posterior's (sorted) order. Log-variances are not kept: it holds
// point estimates and posterior samples of deterministic nets.
type flatParams struct {
	names  []string
	dims   [][]int
	values [][]float32
}

// flatten copies the means of p.
func flatten(p *posterior.Posterior) (*flatParams, error) {
	f := &flatParams{}
	for _, q := range p.Params {
		var vals []float32
		err := catch.Do(func() { vals = tensors.MustCopyFlatData[float32](q.Mean) })
		if err != nil {
			return nil, fmt.Errorf("predictive: reading parameter %q: %w", q.Name, err)
		}
		f.names = append(f.names, q.Name)
		f.dims = append(f.dims, q.Mean.Shape().Dimensions)
		f.values = append(f.values, vals)
	}
	return f, nil
}

// clone returns a deep copy.
func (f *flatParams) clone() *flatParams {
	g := &flatParams{names: slices.Clone(f.names), dims: make([][]int, len(f.dims)), values: make([][]float32, len(f.values))}
	for i := range f.values {
		g.dims[i] = slices.Clone(f.dims[i])
		g.values[i] = slices.Clone(f.values[i])
	}
	return g
}

// zerosLike returns a copy with every value zero.
func (f *flatParams) zerosLike() *flatParams {
	g := f.clone()
	for _, v := range g.values {
		clear(v)
	}
	return g
}

// posterior builds a deterministic posterior (LogVar nil) holding a copy of the values.
func (f *flatParams) posterior() (*posterior.Posterior, error) {
	p := &posterior.Posterior{}
	for i, name := range f.names {
		var t *tensors.Tensor
		if err := catch.Do(func() { t = tensors.FromFlatDataAndDimensions(slices.Clone(f.values[i]), f.dims[i]...) }); err != nil {
			return nil, fmt.Errorf("predictive: building parameter %q: %w", name, err)
		}
		p.Params = append(p.Params, posterior.Param{Name: name, Mean: t})
	}
	return p, nil
}

// client returns the values of client k of a stacked copy (leading axis K), unstacked.
func (f *flatParams) client(k int) *flatParams {
	g := &flatParams{names: slices.Clone(f.names)}
	for i, v := range f.values {
		K := f.dims[i][0]
		n := len(v) / K
		g.dims = append(g.dims, slices.Clone(f.dims[i][1:]))
		g.values = append(g.values, slices.Clone(v[k*n:(k+1)*n]))
	}
	return g
}

// stackFlat stacks unstacked copies of the same parameters along a new leading axis.
func stackFlat(list []*flatParams) (*flatParams, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("predictive: nothing to stack")
	}
	out := &flatParams{names: slices.Clone(list[0].names)}
	for i := range list[0].names {
		dims := append([]int{len(list)}, list[0].dims[i]...)
		var vals []float32
		for j, f := range list {
			if len(f.names) != len(out.names) || f.names[i] != out.names[i] || !slices.Equal(f.dims[i], list[0].dims[i]) {
				return nil, fmt.Errorf("predictive: model %d does not have the parameters of model 0 (%q %v)", j, out.names[i], list[0].dims[i])
			}
			vals = append(vals, f.values[i]...)
		}
		out.dims = append(out.dims, dims)
		out.values = append(out.values, vals)
	}
	return out, nil
}
