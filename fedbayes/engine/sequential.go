package engine

import (
	"context"
	"slices"

	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/strategy"
)

// trainRoundSequential is trainRound for a strategy with the sequential schedule of partitioned VI
// (Ashman et al. (2022), Sec. 3: strategy.SequentialClients): the round's sampled clients train one
// after another, each against its cavity of the global as the clients before it in the round left
// it, and each returned client's site is absorbed at once; the strategy's Aggregate then returns the
// round's global. A client that drops out of the round (partition.sampling) trains but is not
// absorbed, as in the parallel schedule.
func (r *runState) trainRoundSequential(ctx context.Context, sc strategy.SequentialClients, round int, global *posterior.Posterior,
	in roundInput, ids, sizes []int) (*roundResult, error) {
	cfg := globalConfig(r.spec, r.prob, r.seed)
	all := localOutcome{loss: make([]float64, len(ids)), nll: make([]float64, len(ids)), clients: make([]*posterior.Posterior, len(ids))}
	current := global
	for j, id := range ids {
		one := in
		one.jobs, one.global, one.onStep = in.jobs[j:j+1], current, stepFunc(r.rep, round)
		var err error
		if one.priors, err = sc.Priors(round, []int{id}, current, cfg); err != nil {
			return nil, r.serverError(err, "the clients' priors")
		}
		out, err := r.localRound(ctx, one, []int{id})
		if err != nil {
			return nil, err
		}
		returned := slices.Contains(r.clients.draw.Returned, id)
		if d := clientDivergence(out, []int{id}); d != "" && returned {
			return nil, &divergedError{d}
		}
		all.loss[j], all.nll[j], all.clients[j], all.took = out.loss[0], out.nll[0], out.clients[0], all.took+out.took
		if !returned {
			continue
		}
		if current, err = sc.Absorb(&strategy.Round{Number: round, IDs: []int{id}, Sizes: []int{sizes[j]}, List: out.clients,
			Previous: current, Model: cfg, Seed: deriveInt63(r.seed, tagAggregate, round)}); err != nil {
			return nil, r.serverError(err, "aggregation")
		}
	}
	res := &roundResult{round: round, sampled: ids, received: global}
	out, ids, sizes, err := r.clients.returned(all, ids, sizes)
	if err != nil {
		return nil, err
	}
	res.ids, res.sizes, res.out, res.timings.Local = ids, sizes, out, out.took
	return r.finishRound(res, out, ids, sizes, global, round)
}
