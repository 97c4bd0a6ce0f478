package engine

import (
	"context"
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// pretrainSplit splits the server set into pre-training's validation and fitting parts; a split the
// server set cannot give is a *SpecError at aggregation.pretrain.validation_fraction.
func pretrainSplit(s *Spec, p *problem, seed int64) (val, fit *data.Dataset, err error) {
	f := s.Aggregation.Pretrain.ValidationFraction
	if val, fit, err = data.Split(p.server, f, derive(seed, tagPretrainVal)); err != nil {
		return nil, nil, specErr("aggregation.pretrain.validation_fraction", "%v of the server set (%d examples): %v", f, p.server.Len(), err)
	}
	return val, fit, nil
}

// pretrain trains the initial global model on the server's set before round 1 (Fischer et al. (2024),
// Sec. 3.6): at most Epochs epochs with the clients' optimizer and batch size, a held-out validation
// part of the server set, early stopping after Patience epochs without a better validation accuracy;
// it returns the posterior of the best epoch. m is a one-client model with its own trainer.
func pretrain(ctx context.Context, m *models.Model, t *models.Trainer, s *Spec, p *problem, init *posterior.Posterior, seed int64) (*posterior.Posterior, error) {
	ps := s.Aggregation.Pretrain
	val, fit, err := pretrainSplit(s, p, seed)
	if err != nil {
		return nil, err
	}
	if err := m.SetPosterior(init); err != nil {
		return nil, fmt.Errorf("pre-training: %w", err)
	}
	if err := m.SetNoiseSeeds([]int64{deriveInt63(seed, tagPretrain)}); err != nil {
		return nil, err
	}
	if err := t.ResetOptimizer(); err != nil {
		return nil, err
	}
	if err := t.SetLearningRate(s.Training.LearningRate); err != nil {
		return nil, err
	}
	fitProb := &problem{train: fit, numClasses: p.numClasses, exampleSize: p.exampleSize}
	fill := batchFiller{prob: fitProb, batchSize: s.Training.BatchSize}
	b, ex, n := s.Training.BatchSize, p.exampleSize, fit.Len()
	x, labels, mask := make([]float32, b*ex), make([]int32, b), make([]float32, b)
	var order []int
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	best, bestAcc, since := init, math.Inf(-1), 0
	if ps.Patience < 1 {
		return best, nil // no epoch to run
	}
	loop := models.Loop{Epochs: ps.Epochs, Steps: (n + b - 1) / b, Context: ctx,
		BeforeEpoch: func(e int) error {
			order = permutation(derive(seed, tagPretrain, e), n)
			return nil
		},
		Batch: func(at models.LoopStep) (models.Batch, error) {
			fill.fill(x, labels, nil, mask, 0, all, order, at.Step*b)
			return models.Batch{X: x, Labels: labels, DatasetSizes: []int{n}, Mask: mask}, nil
		},
		AfterStep: func(at models.LoopStep, stats models.StepStats) error {
			if l := stats.Loss[0]; math.IsNaN(l) || math.IsInf(l, 0) {
				return fmt.Errorf("pre-training diverged at epoch %d: loss %v", at.Epoch+1, l)
			}
			return nil
		},
		// Early stopping: the validation accuracy after each epoch; stop after Patience epochs
		// without a better one.
		AfterEpoch: func(e int) (bool, error) {
			pred, err := m.Predict(val.X, s.Evaluation.Samples)
			if err != nil {
				return false, fmt.Errorf("pre-training, validation of epoch %d: %w", e+1, err)
			}
			res, err := metrics.EvaluateClassification(pred.ClientMean(0), val.Labels, p.numClasses, s.Evaluation.Bins)
			if err != nil {
				return false, fmt.Errorf("pre-training, validation of epoch %d: %w", e+1, err)
			}
			if res.Accuracy > bestAcc {
				bestAcc, since = res.Accuracy, 0
				if best, err = m.ClientPosterior(0); err != nil {
					return false, err
				}
			} else {
				since++
			}
			return since >= ps.Patience, nil
		},
	}
	if err := loop.Run(t); err != nil {
		return nil, wrapLoopErr("pre-training", err)
	}
	return best, nil
}
