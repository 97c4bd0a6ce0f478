package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
)

// globalConfig is the one-client models.Config of a run with the seed's initialisation: the model
// the run starts from and evaluates, which the strategies get as Round.Model and a Federation as
// Config.
func globalConfig(s *Spec, p *problem, seed int64) models.Config {
	return modelConfig(s, p, 1, deriveInt63(seed, tagInit))
}

// modelConfig is the models.Config of a spec for K clients with a given seed.
func modelConfig(s *Spec, p *problem, k int, seed int64) models.Config {
	cfg := models.Config{
		Options:        s.Model,
		InputShape:     p.train.Shape,
		NumClasses:     p.numClasses,
		PriorVariables: s.Training.Prior == "previous-global" || setsClientPriors(s),
		Clients:        k,
		Seed:           seed,
	}
	cfg.Compat = compatOf(s.Model) // "paper" and "none" name the default
	if p.regression {
		cfg.Task, cfg.NumClasses, cfg.LearnNoise = models.Regression, 0, true
	}
	return cfg
}

// compatOf is the model's compatibility mode (validated with the spec).
func compatOf(m ModelSpec) models.Compat {
	c, _ := models.ParseCompat(string(m.Compat))
	return c
}

// optimizerConfig is the models.OptimizerConfig of a spec.
func optimizerConfig(t TrainingSpec) models.OptimizerConfig {
	return models.OptimizerConfig{
		Kind:         models.OptimizerKind(t.Optimizer),
		LearningRate: t.LearningRate,
		Momentum:     t.Momentum,
		WeightDecay:  t.WeightDecay,
		ProxMu:       t.ProxMu,

		SpreadOptimizer:    models.OptimizerKind(t.VarianceOptimizer),
		SpreadLearningRate: t.VarianceLR,
	}
}

// learningRate is the rate of round r (1-based): constant, or Fischer et al. (2024), Sec. 3.3's
// exponential decay lr (1 - rate)^(r - silent) after silent rounds.
func learningRate(t TrainingSpec, round int) float64 {
	s := t.Schedule
	if s == nil || s.Kind != "exponential" || round <= s.SilentRounds {
		return t.LearningRate
	}
	return t.LearningRate * math.Pow(1-s.Rate, float64(round-s.SilentRounds))
}

// clientJob is one active client of a round: its id, its examples (indices into the pool) and, for a
// straggler (partition.sampling.straggler_rate), the steps it runs per epoch (0: all of them).
type clientJob struct {
	id      int
	indices []int
	steps   int
}

// epochSteps is the number of steps the job runs in each epoch with batch size b: ceil(n_k / b), or
// the straggler's fewer steps.
func (j clientJob) epochSteps(b int) int {
	full := (len(j.indices) + b - 1) / b
	if j.steps > 0 && j.steps < full {
		return j.steps
	}
	return full
}

// localOutcome is what the clients send back after local training.
type localOutcome struct {
	// stacked holds the clients' posteriors stacked along the client axis (vectorised path), or nil.
	stacked *posterior.Posterior
	// clients holds them one by one (sequential path), or nil.
	clients []*posterior.Posterior
	// loss is each client's mean training loss over its steps of the round (nil when the clients
	// sample, training.sampler).
	loss []float64
	// nll is each client's mean training negative log-likelihood over its steps (the data term of
	// loss, which power-of-choice ranks clients by), nil like loss.
	nll []float64
	// draws are the clients' posterior samples when they sample (each stacked like stacked), or nil.
	draws []*posterior.Posterior
	// diverged describes the first non-finite loss, or "".
	diverged string
	// took is how long the local training took; an outcome shared from the localCache keeps the
	// time of the run that trained it, so every run records what its round cost.
	took time.Duration
	// steps and examples are the round's local training steps and training examples (all clients
	// together) as its last onStep call counted them; from names the run that trained it. A run that
	// takes the outcome from the localCache reports them as its round's progress.
	steps, examples int
	from            string
}

// roundInput is what local training of a round needs.
type roundInput struct {
	spec   *Spec
	prob   *problem
	seed   int64
	round  int
	global *posterior.Posterior
	jobs   []clientJob
	// priors, when set, are the priors the clients train against, one per job (the strategy's
	// ClientPriors: partitioned VI's cavities); nil: the spec's training.prior.
	priors []*posterior.Posterior
	// onStep, when set, is told after each local training step: steps done, steps in the round,
	// training examples so far in the round (progress.StepReporter).
	onStep func(step, steps, examples int)
}

// stepFunc returns the onStep of a round for rep, or nil when rep shows no steps.
func stepFunc(rep progress.Reporter, round int) func(step, steps, examples int) {
	sr, ok := rep.(progress.StepReporter)
	if !ok {
		return nil
	}
	return func(step, steps, examples int) { sr.Step(round, step, steps, examples) }
}

// batchFiller fills one client's slot of a [K, B, ...] batch from its epoch order.
type batchFiller struct {
	prob      *problem
	batchSize int
}

// fill copies the examples order[start:start+B] of a client into slot j of x/labels (classification)
// or x/targets (regression; labels untouched) and mask; a partial batch is padded with zeros and
// masked out. It returns the number of real examples. targets may be nil for classification.
func (f batchFiller) fill(x []float32, labels []int32, targets, mask []float32, j int, indices, order []int, start int) int {
	ex, b := f.prob.exampleSize, f.batchSize
	xs := x[j*b*ex : (j+1)*b*ex]
	ls, ms := labels[j*b:(j+1)*b], mask[j*b:(j+1)*b]
	var ts []float32
	if f.prob.regression {
		ts = targets[j*b : (j+1)*b]
	}
	n := 0
	for i := 0; i < b; i++ {
		pos := start + i
		if pos >= len(order) {
			clear(xs[i*ex:])
			clear(ls[i:])
			if ts != nil {
				clear(ts[i:])
			}
			clear(ms[i:])
			break
		}
		src := indices[order[pos]]
		copy(xs[i*ex:(i+1)*ex], f.prob.train.X[src*ex:(src+1)*ex])
		if f.prob.regression {
			ts[i] = f.prob.train.Targets[src]
		} else {
			ls[i] = f.prob.train.Labels[src]
		}
		ms[i] = 1
		n++
	}
	return n
}

// prepareClients loads the global posterior into every client slot of m and resets what a round
// starts from: optimizer state, learning rate, the proximal centre, the prior (previous-global), and
// each slot's noise stream, seeded by (seed, round, client id) so that both paths draw the same noise.
func prepareClients(m *models.Model, t *models.Trainer, in roundInput, ids []int) error {
	if err := m.SetPosterior(in.global); err != nil {
		return fmt.Errorf("loading the global model into the clients: %w", err)
	}
	if in.priors != nil {
		if err := setClientPriors(m, in, ids); err != nil {
			return err
		}
	} else if in.spec.Training.Prior == "previous-global" {
		if err := m.SetPrior(in.global); err != nil {
			return fmt.Errorf("setting the clients' prior to the previous global model: %w", err)
		}
	}
	seeds := make([]int64, len(ids))
	for j, id := range ids {
		seeds[j] = deriveInt63(in.seed, tagClientNoise, in.round, id)
	}
	if err := m.SetNoiseSeeds(seeds); err != nil {
		return err
	}
	if err := t.ResetOptimizer(); err != nil {
		return err
	}
	if err := t.SetLearningRate(learningRate(in.spec.Training, in.round)); err != nil {
		return err
	}
	if in.spec.Training.ProxMu > 0 {
		if err := t.SetProxCenter(); err != nil {
			return err
		}
	}
	return nil
}

// setClientPriors sets the priors of the clients ids (in.priors, one per job) into m's client slots,
// stacked in the order of ids.
func setClientPriors(m *models.Model, in roundInput, ids []int) error {
	byID := make(map[int]*posterior.Posterior, len(in.jobs))
	for j, job := range in.jobs {
		byID[job.id] = in.priors[j]
	}
	parts := make([]*posterior.Posterior, len(ids))
	for j, id := range ids {
		if parts[j] = byID[id]; parts[j] == nil {
			return fmt.Errorf("the strategy gave no prior for client %d", id)
		}
	}
	prior := parts[0]
	if len(parts) > 1 {
		var err error
		if prior, err = posterior.Stack(parts); err != nil {
			return fmt.Errorf("stacking the clients' priors: %w", err)
		}
	}
	if err := m.SetPrior(prior); err != nil {
		return fmt.Errorf("setting the clients' priors (the strategy's cavities): %w", err)
	}
	return nil
}

// epochOrder is a client's order of its examples in one epoch of a round.
func epochOrder(seed int64, round, client, epoch, n int) []int {
	return permutation(derive(seed, tagBatchOrder, round, client, epoch), n)
}

// trainVectorized trains all active clients of a round together in one model with K = len(jobs): each
// client runs its own ceil(n_k / B) steps per epoch; in the steps after its last one it is inactive
// (its parameters, optimizer state and noise stream stay as they are).
func trainVectorized(ctx context.Context, m *models.Model, t *models.Trainer, in roundInput) (localOutcome, error) {
	k, b, ex := len(in.jobs), in.spec.Training.BatchSize, in.prob.exampleSize
	ids := make([]int, k)
	sizes := make([]int, k)
	for j, job := range in.jobs {
		ids[j], sizes[j] = job.id, len(job.indices)
	}
	if err := prepareClients(m, t, in, ids); err != nil {
		return localOutcome{}, err
	}
	x := make([]float32, k*b*ex)
	labels := make([]int32, k*b)
	targets := in.prob.targetBuffer(k * b)
	mask := make([]float32, k*b)
	active := make([]bool, k)
	fill := batchFiller{prob: in.prob, batchSize: b}
	out := localOutcome{loss: make([]float64, k), nll: make([]float64, k)}
	steps := make([]int, k)
	maxSteps := 0
	for j, job := range in.jobs {
		steps[j] = job.epochSteps(b)
		maxSteps = max(maxSteps, steps[j])
	}
	orders := make([][]int, k)
	seen := 0
	loop := models.Loop{Epochs: in.spec.Training.LocalEpochs, Steps: maxSteps, Context: ctx,
		BeforeEpoch: func(e int) error {
			for j, job := range in.jobs {
				orders[j] = epochOrder(in.seed, in.round, job.id, e, sizes[j])
			}
			return nil
		},
		Batch: func(at models.LoopStep) (models.Batch, error) {
			for j, job := range in.jobs {
				active[j] = at.Step < steps[j]
				start := at.Step * b
				if !active[j] {
					start = len(orders[j]) // past the order: fill clears the whole slot
				}
				seen += fill.fill(x, labels, targets, mask, j, job.indices, orders[j], start)
			}
			return models.Batch{X: x, Labels: labels, Targets: targets, DatasetSizes: sizes, Mask: mask, Active: active}, nil
		},
		AfterStep: func(at models.LoopStep, stats models.StepStats) error {
			if in.onStep != nil {
				in.onStep(at.Index+1, maxSteps*in.spec.Training.LocalEpochs, seen)
			}
			for j := range in.jobs {
				if !active[j] {
					continue
				}
				out.loss[j] += stats.Loss[j]
				out.nll[j] += stats.NLL[j]
				if out.diverged == "" && (math.IsNaN(stats.Loss[j]) || math.IsInf(stats.Loss[j], 0)) {
					out.diverged = fmt.Sprintf("client %d: training loss %v at epoch %d, step %d", in.jobs[j].id, stats.Loss[j], at.Epoch+1, at.Step+1)
				}
			}
			return nil
		},
	}
	if err := loop.Run(t); err != nil {
		return localOutcome{}, wrapLoopErr("local training", err)
	}
	for j := range out.loss {
		out.loss[j] /= float64(steps[j] * in.spec.Training.LocalEpochs)
		out.nll[j] /= float64(steps[j] * in.spec.Training.LocalEpochs)
	}
	var err error
	if out.stacked, err = m.Posterior(); err != nil {
		return localOutcome{}, err
	}
	return out, nil
}

// trainSequential is the reference path: each active client in turn, in a one-client model, with the
// same batches, masks and noise streams as trainVectorized.
func trainSequential(ctx context.Context, m *models.Model, t *models.Trainer, in roundInput) (localOutcome, error) {
	b, ex := in.spec.Training.BatchSize, in.prob.exampleSize
	x := make([]float32, b*ex)
	labels := make([]int32, b)
	targets := in.prob.targetBuffer(b)
	mask := make([]float32, b)
	fill := batchFiller{prob: in.prob, batchSize: b}
	out := localOutcome{loss: make([]float64, len(in.jobs)), nll: make([]float64, len(in.jobs)), clients: make([]*posterior.Posterior, len(in.jobs))}
	total, done, seen := 0, 0, 0
	for _, job := range in.jobs {
		total += job.epochSteps(b) * in.spec.Training.LocalEpochs
	}
	for j, job := range in.jobs {
		if err := prepareClients(m, t, in, []int{job.id}); err != nil {
			return localOutcome{}, err
		}
		n := len(job.indices)
		steps := job.epochSteps(b)
		var order []int
		loop := models.Loop{Epochs: in.spec.Training.LocalEpochs, Steps: steps, Context: ctx,
			BeforeEpoch: func(e int) error {
				order = epochOrder(in.seed, in.round, job.id, e, n)
				return nil
			},
			Batch: func(at models.LoopStep) (models.Batch, error) {
				seen += fill.fill(x, labels, targets, mask, 0, job.indices, order, at.Step*b)
				return models.Batch{X: x, Labels: labels, Targets: targets, DatasetSizes: []int{n}, Mask: mask}, nil
			},
			AfterStep: func(at models.LoopStep, stats models.StepStats) error {
				if done++; in.onStep != nil {
					in.onStep(done, total, seen)
				}
				out.loss[j] += stats.Loss[0]
				out.nll[j] += stats.NLL[0]
				if out.diverged == "" && (math.IsNaN(stats.Loss[0]) || math.IsInf(stats.Loss[0], 0)) {
					out.diverged = fmt.Sprintf("client %d: training loss %v at epoch %d, step %d", job.id, stats.Loss[0], at.Epoch+1, at.Step+1)
				}
				return nil
			},
		}
		if err := loop.Run(t); err != nil {
			return localOutcome{}, wrapLoopErr(fmt.Sprintf("local training of client %d", job.id), err)
		}
		out.loss[j] /= float64(steps * in.spec.Training.LocalEpochs)
		out.nll[j] /= float64(steps * in.spec.Training.LocalEpochs)
		p, err := m.ClientPosterior(0)
		if err != nil {
			return localOutcome{}, err
		}
		out.clients[j] = p
	}
	return out, nil
}

// wrapLoopErr prefixes a failed training step of a models.Loop with the trainer's name ("local
// training, epoch 1, step 3: ..."); the hooks' and the context's errors go back as they are.
func wrapLoopErr(what string, err error) error {
	var se *models.StepError
	if errors.As(err, &se) {
		return fmt.Errorf("%s, %w", what, err)
	}
	return err
}
