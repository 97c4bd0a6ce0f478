package engine

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// nonFinite describes the first NaN or Inf value of a posterior ("" if there is none); stacked
// posteriors name the client slot through ids.
func nonFinite(p *posterior.Posterior, ids []int) string {
	for _, q := range p.Params {
		for _, part := range []struct {
			what string
			t    *tensors.Tensor
		}{{"mean", q.Mean}, {"log-variance", q.LogVar}} {
			if part.t == nil {
				continue
			}
			flat, err := tensors.CopyFlatData[float32](part.t)
			if err != nil {
				return fmt.Sprintf("parameter %q: %s unreadable: %v", q.Name, part.what, err)
			}
			for i, v := range flat {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					where := ""
					if len(ids) > 0 && len(flat)%len(ids) == 0 {
						where = fmt.Sprintf("client %d: ", ids[i/(len(flat)/len(ids))])
					}
					return fmt.Sprintf("%sparameter %q: %s is %v", where, q.Name, part.what, v)
				}
			}
		}
	}
	return ""
}

// bytesPerModel is the size of one posterior sent as float32: means plus log-variances.
func bytesPerModel(p *posterior.Posterior) int64 {
	g, d := p.NumValues()
	return int64(4 * (2*g + d))
}
