package engine

import (
	"context"
	"errors"
	"fmt"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/strategy"
)

// Federation is one seed's data of a spec exactly as Run splits it (the same seed streams): the
// clients' training sets, the server's set, the test set and the partition, with the clients' model
// and the initial global model every setting of the spec starts from. A notebook uses it to take one
// round of a run apart (notebook 05: the pieces of a FedBE server step).
type Federation struct {
	// Config is the clients' model with one client and the run's initialisation seed.
	Config models.Config
	// Partition is the clients' split of the training set (indices into it).
	Partition *partition.Partition
	// Clients are the clients' training sets, in client order.
	Clients []*data.Dataset
	// Sizes are the clients' example counts, in client order.
	Sizes []float64
	// Server is the server's set (nil without dataset.server_fraction).
	Server *data.Dataset
	// Test is the test set.
	Test *data.Dataset

	spec    *Spec
	setting Setting
	prob    *problem
	seed    int64
}

// NewFederation loads and splits the data of spec's first setting (every setting of a spec whose
// variants change only the server strategy shares it) for seed, as Run does.
func NewFederation(spec *Spec, seed int64) (*Federation, error) {
	if spec == nil {
		return nil, fmt.Errorf("engine: nil spec")
	}
	settings, err := spec.Expand()
	if err != nil {
		return nil, err
	}
	s := settings[0].Spec
	p, err := newProblem(s, seed, &datasetCache{})
	if err != nil {
		return nil, err
	}
	f := &Federation{Config: globalConfig(s, p, seed), Partition: p.part, Server: p.server, Test: p.test,
		spec: s, setting: settings[0], prob: p, seed: seed}
	all := make([]int, len(p.part.Clients))
	for k := range all {
		all[k] = k
	}
	if f.Clients, err = p.clientSets(all); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	for _, d := range f.Clients {
		f.Sizes = append(f.Sizes, float64(d.Len()))
	}
	return f, nil
}

// Initial returns the initial global model of the runs (unstacked), before any round.
func (f *Federation) Initial() (*posterior.Posterior, error) {
	m, err := models.New(f.Config)
	if err != nil {
		return nil, err
	}
	return m.ClientPosterior(0)
}

// FirstRound trains round 1's active clients from the initial global model through the round
// loop's own client training (runState.trainClients: the same sampling, batches, noise streams,
// optimizer and, for a strategy that sets them (strategy.ClientPriors), the same priors) and returns
// those that returned (partition.sampling.drop_rate) stacked [K, ...] with their ids. A spec that
// pre-trains the global model, samples its clients, trains them one at a time or whose strategy
// trains them on its sequential schedule is refused.
func (f *Federation) FirstRound(ctx context.Context) (*posterior.Posterior, []int, error) {
	s := f.spec
	if s.Aggregation.Pretrain != nil || s.Training.Sampler != nil || s.Training.Mode == "sequential" {
		return nil, nil, fmt.Errorf("engine: FirstRound trains vectorised optimisation clients from the initial model; " +
			"unset aggregation.pretrain, training.sampler and training.mode sequential")
	}
	r := &runState{spec: s, st: f.setting, seed: f.seed, prob: f.prob, rep: progress.Discard}
	var err error
	if r.strategy, err = newStrategy(s); err != nil {
		return nil, nil, err
	}
	if sc, ok := r.strategy.(strategy.SequentialClients); ok && sc.Sequential() {
		return nil, nil, fmt.Errorf("engine: FirstRound trains the round's clients together; %s trains them on its sequential schedule", s.Aggregation.Rule)
	}
	if err := r.startState(); err != nil {
		return nil, nil, err
	}
	if r.clients, err = newClientTraining(s, f.prob, f.seed); err != nil {
		return nil, nil, err
	}
	global, err := f.Initial()
	if err != nil {
		return nil, nil, err
	}
	res, err := r.trainClients(ctx, 1, global)
	if de := (*divergedError)(nil); errors.As(err, &de) {
		return nil, nil, fmt.Errorf("engine: round 1 diverged: %s", de.reason)
	}
	if err != nil {
		return nil, nil, err
	}
	return res.out.stacked, res.ids, nil
}

// AggregateSeed is the seed the server strategy gets in round (strategy.Round.Seed): FedBE's samples
// and distillation order in that round of the runs.
func (f *Federation) AggregateSeed(round int) int64 { return deriveInt63(f.seed, tagAggregate, round) }
