package engine

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// dwcPolicy maps the spec's DWC policy name to aggregate's.
func dwcPolicy(name string) aggregate.DWCPolicy {
	switch name {
	case "conflation":
		return aggregate.DWCUseConflation
	case "error":
		return aggregate.DWCFail
	}
	return aggregate.DWCKeepPrevious
}

// aggregateRound weights the clients of a round and combines them into the new global posterior
// (000 Alg. 1; 001 Alg. 1). prev is the global posterior the clients started from: DWC's previous
// global (001 Eq. 17) and the fixed point of the distance weighting (001 Eq. 21).
func aggregateRound(s *Spec, out localOutcome, sizes []int, prev *posterior.Posterior, seed int64, round int) (*posterior.Posterior, aggregate.Report, error) {
	rule, err := aggregate.ParseRule(s.Aggregation.Rule)
	if err != nil {
		return nil, aggregate.Report{}, err
	}
	opt := aggregate.Options{
		PopulationSize: s.Aggregation.Population,
		Seed:           deriveInt63(seed, tagAggregate, round),
		DWCPolicy:      dwcPolicy(s.Aggregation.DWCPolicy),
		BFLP:           compatOf(s.Model) == models.CompatBFLP,
		BABFL:          compatOf(s.Model) == models.CompatBABFL,
	}
	if rule == aggregate.DWC {
		opt.PreviousGlobal = prev
	}
	clients := out.clients
	listed := func() ([]*posterior.Posterior, error) {
		if clients == nil {
			c, err := posterior.Unstack(out.stacked)
			if err != nil {
				return nil, err
			}
			clients = c
		}
		return clients, nil
	}
	var w []float64
	switch s.Aggregation.Weighting {
	case "equal":
		w = aggregate.EqualWeights(len(sizes))
	case "size":
		w, err = aggregate.SizeWeights(sizes)
	case "maxdisc":
		var c []*posterior.Posterior
		if c, err = listed(); err == nil {
			w, err = aggregate.MaxDiscrepancyWeights(c, opt)
		}
	case "fixedpoint":
		var c []*posterior.Posterior
		if c, err = listed(); err == nil {
			w, err = aggregate.FixedPointWeights(c, prev, opt)
		}
	default:
		err = fmt.Errorf("unknown weighting %q", s.Aggregation.Weighting)
	}
	if err != nil {
		return nil, aggregate.Report{}, fmt.Errorf("client weights (%s): %w", s.Aggregation.Weighting, err)
	}
	if out.stacked != nil {
		return aggregate.StackedWithReport(rule, out.stacked, w, opt)
	}
	return aggregate.PosteriorsWithReport(rule, clients, w, opt)
}

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
