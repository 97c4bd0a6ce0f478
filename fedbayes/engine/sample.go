package engine

import (
	"context"
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/internal/catch"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// sampleRound is local training by SG-MCMC (training.sampler: cSGHMC or SGLD, Hasan (2023), Sec.
// 3.3.4): the active clients, starting from the global model, each draw posterior samples of their
// deterministic network on their own data (predictive.Sample, all clients in one computation). The
// outcome holds the samples (for the strategies that use them: EP-MCMC, the predictive-space
// combinations) and, as each client's model, the average of its samples. The sampler's randomness is
// seeded by (seed, round). An interrupt takes effect when the round's sampling ends.
func sampleRound(ctx context.Context, m *models.Model, sm *predictive.Sampler, in roundInput) (localOutcome, error) {
	ids := make([]int, len(in.jobs))
	for j, job := range in.jobs {
		ids[j] = job.id
	}
	sets, err := in.prob.clientSets(ids)
	if err != nil {
		return localOutcome{}, fmt.Errorf("local sampling: %w", err)
	}
	// The sampler's step has no optimizer state, learning rate or noise stream of the spec's to reset
	// (prepareClients): only the global model is loaded.
	if err := m.SetPosterior(in.global); err != nil {
		return localOutcome{}, fmt.Errorf("loading the global model into the clients: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return localOutcome{}, err
	}
	cfg := samplerConfig(in.spec)
	cfg.Seed = deriveInt63(in.seed, tagSampler, in.round)
	s, err := sm.Sample(sets, cfg)
	if err != nil {
		return localOutcome{}, fmt.Errorf("local sampling: %w", err)
	}
	mean, err := averagePosteriors(s.Models)
	if err != nil {
		return localOutcome{}, fmt.Errorf("local sampling: the clients' sample means: %w", err)
	}
	if in.onStep != nil {
		in.onStep(s.TotalSteps, s.TotalSteps, s.Examples)
	}
	return localOutcome{stacked: mean, draws: s.Models}, nil
}

// samplerConfig is the spec's sampler with the engine's defaults: local_epochs passes and the
// training batch size where the sampler leaves them unset.
func samplerConfig(s *Spec) predictive.SamplerConfig {
	cfg := *s.Training.Sampler
	if cfg.Epochs == 0 {
		cfg.Epochs = s.Training.LocalEpochs
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = s.Training.BatchSize
	}
	return cfg.WithDefaults()
}

// averagePosteriors is the element-wise mean (in float64) of posteriors with the same parameters.
func averagePosteriors(list []*posterior.Posterior) (*posterior.Posterior, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("no posteriors to average")
	}
	out := &posterior.Posterior{}
	for i, q := range list[0].Params {
		var sum []float64
		err := catch.Do(func() {
			for _, p := range list {
				v := tensors.MustCopyFlatData[float32](p.Params[i].Mean)
				if sum == nil {
					sum = make([]float64, len(v))
				}
				for j, x := range v {
					sum[j] += float64(x)
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", q.Name, err)
		}
		mean := make([]float32, len(sum))
		for j, x := range sum {
			mean[j] = float32(x / float64(len(list)))
			if math.IsNaN(x) {
				return nil, fmt.Errorf("parameter %q: NaN in a sample", q.Name)
			}
		}
		var t *tensors.Tensor
		if err := catch.Do(func() { t = tensors.FromFlatDataAndDimensions(mean, q.Mean.Shape().Dimensions...) }); err != nil {
			return nil, fmt.Errorf("parameter %q: %w", q.Name, err)
		}
		out.Params = append(out.Params, posterior.Param{Name: q.Name, Mean: t})
	}
	return out, nil
}
