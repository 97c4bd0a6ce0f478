package strategy

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/internal/catch"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// PerElement builds a global posterior element by element: for every parameter element, f receives
// the K clients' means and log-variances (log-variances nil for a deterministic parameter) in float64
// and returns the global mean and log-variance (ignored for a deterministic parameter). f may reorder
// or overwrite its slices. It is the quickest way to try a coordinate-wise rule of one's own (a
// median, a trimmed mean, ...) as a Strategy; the built-in rules use package aggregate's compiled
// kernels instead.
func PerElement(r *Round, f func(means, logVars []float64) (mean, logVar float64)) (*posterior.Posterior, error) {
	clients, err := r.Clients()
	if err != nil {
		return nil, err
	}
	if err := posterior.CheckCompatible(clients); err != nil {
		return nil, err
	}
	K := len(clients)
	out := &posterior.Posterior{}
	for i, q := range clients[0].Params {
		means := make([][]float32, K)
		var logVars [][]float32
		if q.LogVar != nil {
			logVars = make([][]float32, K)
		}
		err := catch.Do(func() {
			for k, c := range clients {
				means[k] = tensors.MustCopyFlatData[float32](c.Params[i].Mean)
				if logVars != nil {
					logVars[k] = tensors.MustCopyFlatData[float32](c.Params[i].LogVar)
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("strategy: reading parameter %q: %w", q.Name, err)
		}
		n := len(means[0])
		gm := make([]float32, n)
		var glv []float32
		if logVars != nil {
			glv = make([]float32, n)
		}
		mu := make([]float64, K)
		var lv []float64
		if logVars != nil {
			lv = make([]float64, K)
		}
		for j := range n {
			for k := range K {
				mu[k] = float64(means[k][j])
				if lv != nil {
					lv[k] = float64(logVars[k][j])
				}
			}
			m, v := f(mu, lv)
			if math.IsNaN(m) || (glv != nil && math.IsNaN(v)) {
				nf := &posterior.NonFiniteError{Param: q.Name, What: "mean", Index: j, Value: float32(m)}
				if !math.IsNaN(m) {
					nf.What, nf.Value = "log-variance", float32(v)
				}
				return nil, fmt.Errorf("strategy: the rule gave NaN: %w", nf)
			}
			gm[j] = float32(m)
			if glv != nil {
				glv[j] = float32(v)
			}
		}
		dims := q.Mean.Shape().Dimensions
		p := posterior.Param{Name: q.Name}
		if err := catch.Do(func() {
			p.Mean = tensors.FromFlatDataAndDimensions(gm, dims...)
			if glv != nil {
				p.LogVar = tensors.FromFlatDataAndDimensions(glv, dims...)
			}
		}); err != nil {
			return nil, fmt.Errorf("strategy: building parameter %q: %w", q.Name, err)
		}
		out.Params = append(out.Params, p)
	}
	return out, nil
}
