package engine

import (
	"fmt"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/results"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// healthTracker measures the posterior health of a run (issue 33; docs/metrics.md): how far the
// global model's log-variances moved from the initial model's, how far each round's local training
// moved the clients' from the global model they received, and how many sit at the model's clamp of
// log sigma^2. The initial model is the global model's before any training or pre-training; it is
// rebuilt from the seed on resume, so a resumed run records the same numbers.
type healthTracker struct {
	initial     map[string][]float32 // initial log-variances by parameter name
	spreadStart float64
	lo, hi      float64
}

// newHealthTracker returns the tracker of a run whose initial global model is init, built with cfg;
// nil when the model has no Gaussian weights.
func newHealthTracker(init *posterior.Posterior, cfg models.Config) (*healthTracker, error) {
	h := &healthTracker{initial: map[string][]float32{}}
	h.lo, h.hi = cfg.LogVarRange()
	var all [][]float32
	for _, q := range init.Params {
		if q.LogVar == nil {
			continue
		}
		lv, err := tensors.CopyFlatData[float32](q.LogVar)
		if err != nil {
			return nil, fmt.Errorf("posterior health: initial %q: %w", q.Name, err)
		}
		h.initial[q.Name] = lv
		all = append(all, lv)
	}
	if len(all) == 0 {
		return nil, nil
	}
	var err error
	if h.spreadStart, err = metrics.SpreadNorm(all...); err != nil {
		return nil, fmt.Errorf("posterior health: initial spread: %w", err)
	}
	return h, nil
}

// record adds the health metrics of a round (results.HealthMetrics) to out: global is the round's
// global model, received the one the clients started from, out the clients' trained posteriors. It adds
// none when the clients' models carry no log-variances (clients that sample a deterministic net while
// the server builds a Gaussian): there is no local training of variances to measure.
func (h *healthTracker) record(global, received *posterior.Posterior, local localOutcome, m map[string]float64) error {
	if !hasLogVars(local) {
		return nil
	}
	g, err := h.newHealth()
	if err != nil {
		return err
	}
	for _, q := range global.Params {
		if q.LogVar == nil {
			continue
		}
		ref, ok := h.initial[q.Name]
		if !ok {
			return fmt.Errorf("posterior health: %q has no initial log-variance", q.Name)
		}
		lv, err := tensors.CopyFlatData[float32](q.LogVar)
		if err != nil {
			return fmt.Errorf("posterior health: %q: %w", q.Name, err)
		}
		if err := g.Add(q.Name, lv, ref); err != nil {
			return fmt.Errorf("posterior health: %w", err)
		}
	}
	gh, err := g.Result()
	if err != nil {
		return fmt.Errorf("posterior health: global model: %w", err)
	}
	lh, err := h.localHealth(received, local)
	if err != nil {
		return err
	}
	m[results.SpreadStart], m[results.VarMoved], m[results.VarShift], m[results.VarClamped] = h.spreadStart, gh.Moved, gh.MeanShift, gh.AtClamp
	m[results.VarLocalMoved], m[results.VarLocalShift] = lh.Moved, lh.MeanShift
	if m[results.VarDisagreement], err = disagreement(local); err != nil {
		return err
	}
	return nil
}

// disagreement is the mean across-client standard deviation of the clients' trained log-variances
// (metrics.Disagreement); 0 with fewer than two clients, where every rule returns the one client.
func disagreement(local localOutcome) (float64, error) {
	var d metrics.Disagreement
	if local.stacked != nil {
		for _, q := range local.stacked.Params {
			if q.LogVar == nil {
				continue
			}
			k := q.LogVar.Shape().Dimensions[0]
			if k < 2 {
				return 0, nil
			}
			lv, err := tensors.CopyFlatData[float32](q.LogVar)
			if err != nil {
				return 0, fmt.Errorf("posterior health: %q: %w", q.Name, err)
			}
			size := len(lv) / k
			clients := make([][]float32, k)
			for c := range clients {
				clients[c] = lv[c*size : (c+1)*size]
			}
			if err := d.Add(q.Name, clients); err != nil {
				return 0, fmt.Errorf("posterior health: %w", err)
			}
		}
	} else {
		if len(local.clients) < 2 {
			return 0, nil
		}
		for _, q := range local.clients[0].Params {
			if q.LogVar == nil {
				continue
			}
			clients := make([][]float32, len(local.clients))
			for c, p := range local.clients {
				r := p.Find(q.Name)
				if r == nil || r.LogVar == nil {
					return 0, fmt.Errorf("posterior health: client %d has no log-variance %q", c, q.Name)
				}
				lv, err := tensors.CopyFlatData[float32](r.LogVar)
				if err != nil {
					return 0, fmt.Errorf("posterior health: %q: %w", q.Name, err)
				}
				clients[c] = lv
			}
			if err := d.Add(q.Name, clients); err != nil {
				return 0, fmt.Errorf("posterior health: %w", err)
			}
		}
	}
	if d.N() == 0 {
		return 0, fmt.Errorf("posterior health: the clients' models have no log-variances")
	}
	return d.Result()
}

// localHealth compares every client's trained log-variances with the global model it received.
func (h *healthTracker) localHealth(received *posterior.Posterior, local localOutcome) (metrics.VarianceHealth, error) {
	acc, err := h.newHealth()
	if err != nil {
		return metrics.VarianceHealth{}, err
	}
	for _, c := range trainedModels(local) {
		for _, q := range c.Params {
			if q.LogVar == nil {
				continue
			}
			r := received.Find(q.Name)
			if r == nil || r.LogVar == nil {
				return metrics.VarianceHealth{}, fmt.Errorf("posterior health: the clients' %q has no log-variance in the global model they received", q.Name)
			}
			ref, err := tensors.CopyFlatData[float32](r.LogVar)
			if err != nil {
				return metrics.VarianceHealth{}, fmt.Errorf("posterior health: %q: %w", q.Name, err)
			}
			// The clients start from the received log-variances clamped to the models' range: a rule
			// that puts the global below LogVarMin (GAA's and CF's division by K, round after round) is
			// clamped back on loading, which is no local learning.
			for i, v := range ref {
				ref[i] = min(max(v, float32(models.LogVarMin)), float32(models.LogVarMax))
			}
			lv, err := tensors.CopyFlatData[float32](q.LogVar)
			if err != nil {
				return metrics.VarianceHealth{}, fmt.Errorf("posterior health: %q: %w", q.Name, err)
			}
			if len(ref) == 0 || len(lv)%len(ref) != 0 {
				return metrics.VarianceHealth{}, fmt.Errorf("posterior health: %q: %d trained log-variances for %d received", q.Name, len(lv), len(ref))
			}
			for off := 0; off < len(lv); off += len(ref) { // one client at a time (stacked: [K, ...])
				if err := acc.Add(q.Name, lv[off:off+len(ref)], ref); err != nil {
					return metrics.VarianceHealth{}, fmt.Errorf("posterior health: %w", err)
				}
			}
		}
	}
	res, err := acc.Result()
	if err != nil {
		return metrics.VarianceHealth{}, fmt.Errorf("posterior health: the clients' models: %w", err)
	}
	return res, nil
}

// newHealth is the accumulator with the recorded threshold and the model's clamp range.
func (h *healthTracker) newHealth() (*metrics.Health, error) {
	return metrics.NewHealth(metrics.DefaultMovedThreshold, h.lo, h.hi)
}

// trainedModels is the clients' trained posteriors: the stacked one alone (vectorised path), else
// one per client.
func trainedModels(local localOutcome) []*posterior.Posterior {
	if local.stacked != nil {
		return []*posterior.Posterior{local.stacked}
	}
	return local.clients
}

// hasLogVars reports whether the clients' trained models carry log-variances.
func hasLogVars(local localOutcome) bool {
	for _, c := range trainedModels(local) {
		for _, q := range c.Params {
			if q.LogVar != nil {
				return true
			}
		}
	}
	return false
}
