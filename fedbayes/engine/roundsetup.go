package engine

import (
	"context"
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// clientTraining is the clients' side of a run, set up once for all its rounds: who takes part in
// each round, the K-client network and its optimizer (or SG-MCMC sampler). Run's loop and
// Federation.FirstRound both train their rounds' clients through it (runState.trainClients), so
// that a round taken apart in a notebook is the run's round.
type clientTraining struct {
	spec *Spec
	prob *problem
	seed int64
	part partition.Participation
	// draws draws each round's clients, those that return and the stragglers (partition.sampling).
	draws *partition.Sampler
	// losses is, for power-of-choice, each client's mean training NLL of the last round it
	// returned (+Inf before), the state a checkpoint keeps; nil otherwise.
	losses []float64
	// draw is the draw of the round last set up (round).
	draw partition.Draw
	// model is the clients' network: K = the active clients of a round, or 1 for sequential training.
	model *models.Model
	// trn is the clients' optimizer; nil when training.sampler is set.
	trn *models.Trainer
	// sampler is the clients' SG-MCMC sampler when training.sampler is set (trn is then nil).
	sampler *predictive.Sampler
}

// newClientTraining sets up the clients of spec s on the data p for seed: the participation drawn
// from the seed's participation stream and the network initialised from its initialisation stream.
func newClientTraining(s *Spec, p *problem, seed int64) (*clientTraining, error) {
	c := &clientTraining{spec: s, prob: p, seed: seed}
	var err error
	if c.part, err = partition.NewParticipation(s.Partition.Clients, s.Partition.Participation, derive(seed, tagParticipation)); err != nil {
		return nil, fmt.Errorf("partition.participation: %w", err)
	}
	if c.draws, err = partition.NewSampler(c.part, p.part.Sizes(), samplingOptions(s.Partition.Sampling)); err != nil {
		return nil, fmt.Errorf("partition.sampling: %w", err)
	}
	if z := s.Partition.Sampling; z != nil && z.Method == string(partition.SamplePowerOfChoice) {
		c.losses = make([]float64, c.part.NumClients)
		for k := range c.losses {
			c.losses[k] = math.Inf(1)
		}
	}
	k := c.part.Active
	if s.Training.Mode == "sequential" {
		k = 1
	}
	if c.model, err = models.New(modelConfig(s, p, k, deriveInt63(seed, tagInit))); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if s.Training.Sampler != nil {
		// Sampling clients take the sampler's likelihood step only, built once for all rounds.
		if c.sampler, err = predictive.NewSampler(c.model); err != nil {
			return nil, fmt.Errorf("training.sampler: %w", err)
		}
	} else if c.trn, err = c.model.NewTrainer(optimizerConfig(s.Training)); err != nil {
		return nil, fmt.Errorf("training: %w", err)
	}
	return c, nil
}

// round sets up round number round from the global model: its sampled clients' ids and example
// counts, and the input of their local training (without onStep, which the caller sets); a
// straggler's job runs fewer steps per epoch. Which of them return is kept for returned.
func (c *clientTraining) round(round int, global *posterior.Posterior) (in roundInput, ids, sizes []int, err error) {
	if c.draw, err = c.draws.Round(round, c.losses); err != nil {
		return roundInput{}, nil, nil, err
	}
	ids = c.draw.Sampled
	jobs := make([]clientJob, len(ids))
	sizes = make([]int, len(ids))
	b := c.spec.Training.BatchSize
	for j, id := range ids {
		jobs[j] = clientJob{id: id, indices: c.prob.part.Clients[id]}
		sizes[j] = len(jobs[j].indices)
		if full := (sizes[j] + b - 1) / b; c.draws.Straggler(id) {
			jobs[j].steps = c.draws.StragglerSteps(round, id, full)
		}
	}
	return roundInput{spec: c.spec, prob: c.prob, seed: c.seed, round: round, global: global, jobs: jobs}, ids, sizes, nil
}

// train runs the local training of a round: SG-MCMC sampling, one client after another, or all the
// round's clients at once (vectorised), as the spec's training section says.
func (c *clientTraining) train(ctx context.Context, in roundInput) (localOutcome, error) {
	switch s := c.spec; {
	case s.Training.Sampler != nil:
		return sampleRound(ctx, c.model, c.sampler, in)
	case s.Training.Mode == "sequential":
		return trainSequential(ctx, c.model, c.trn, in)
	default:
		return trainVectorized(ctx, c.model, c.trn, in)
	}
}
