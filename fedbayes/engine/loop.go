package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// roundResult is what one round of the loop produced: the clients' training, the server step and,
// in an evaluated round, the metrics. The loop hands it to every observer.
type roundResult struct {
	round int
	// sampled are the clients sampled, ids those that returned, sizes their example counts.
	sampled, ids, sizes []int
	out                 localOutcome
	// received is the global the clients started from; next the server step's result.
	received *posterior.Posterior
	next     *strategy.Global
	// metrics (nil when the round was not evaluated) and each client's accuracy (Evaluation.Fairness).
	metrics map[string]float64
	acc     []float64
	timings progress.Timings
	// row is the row written for the round (rowObserver; nil until then, and in a round without
	// evaluation).
	row *results.Row
}

// divergedError ends a run as diverged (a client's or the server's non-finite model, an evaluation
// overflow), with its reason: a finding, not a failure.
type divergedError struct{ reason string }

func (e *divergedError) Error() string { return "diverged: " + e.reason }

// loop runs rounds start..T from global and tells the observers: start before the first round,
// round after each, in the order attached, and returns how it stopped (the caller hands that to
// the observers' end). Each round reads train → aggregate → evaluate → notify: trainRound and
// evaluateRound compute, the observers record.
func (r *runState) loop(ctx context.Context, start int, global *posterior.Posterior, observers []roundObserver) loopEnd {
	T := r.spec.Training.Rounds
	for _, o := range observers {
		if o.start == nil {
			continue
		}
		if err := o.start(start, T); err != nil {
			return loopEnd{round: start, err: fmt.Errorf("%s: %w", o.name, err)}
		}
	}
	for round := start; round <= T; round++ {
		if err := ctx.Err(); err != nil {
			return loopEnd{round: round, err: err}
		}
		res, err := r.trainRound(ctx, round, global)
		if err == nil {
			err = r.evaluateRound(res)
		}
		if de := (*divergedError)(nil); errors.As(err, &de) {
			return loopEnd{round: round, state: results.Diverged, reason: de.reason}
		}
		if err != nil {
			return loopEnd{round: round, err: err}
		}
		global = res.next.Posterior
		for _, o := range observers {
			if o.round == nil {
				continue
			}
			if err := o.round(res); err != nil {
				return loopEnd{round: round, err: err}
			}
		}
	}
	return loopEnd{round: T, state: results.Completed}
}

// trainRound trains round round's clients from global (trainClients) and runs the server step on
// those that returned; a non-finite client or global model is a divergedError.
func (r *runState) trainRound(ctx context.Context, round int, global *posterior.Posterior) (*roundResult, error) {
	if sc, ok := r.strategy.(strategy.SequentialClients); ok && sc.Sequential() {
		in, ids, sizes, err := r.clients.round(round, global)
		if err != nil {
			return nil, err
		}
		return r.trainRoundSequential(ctx, sc, round, global, in, ids, sizes)
	}
	res, err := r.trainClients(ctx, round, global)
	if err != nil {
		return nil, err
	}
	return r.finishRound(res, res.out, res.ids, res.sizes, global, round)
}

// trainClients runs the clients' side of round round of the parallel schedule: it samples the
// clients, sets their priors (strategy.ClientPriors), trains them from global and keeps those that
// returned, in a roundResult without the server step. A non-finite client model is a
// divergedError. Run's rounds and Federation.FirstRound both train through it.
func (r *runState) trainClients(ctx context.Context, round int, global *posterior.Posterior) (*roundResult, error) {
	in, ids, sizes, err := r.clients.round(round, global)
	if err != nil {
		return nil, err
	}
	if cp, ok := r.strategy.(strategy.ClientPriors); ok {
		if in.priors, err = cp.Priors(round, ids, global, globalConfig(r.spec, r.prob, r.seed)); err != nil {
			return nil, r.serverError(err, "the clients' priors")
		}
	}
	in.onStep = stepFunc(r.rep, round)
	out, err := r.localRound(ctx, in, ids)
	if err != nil {
		return nil, err
	}
	res := &roundResult{round: round, sampled: ids, received: global}
	if out, ids, sizes, err = r.clients.returned(out, ids, sizes); err != nil {
		return nil, err
	}
	res.ids, res.sizes, res.out, res.timings.Local = ids, sizes, out, out.took
	if d := clientDivergence(out, ids); d != "" {
		return nil, &divergedError{d}
	}
	return res, nil
}

// localRound runs the clients' local training of a round (or takes its outcome from the run's
// localCache).
func (r *runState) localRound(ctx context.Context, in roundInput, ids []int) (localOutcome, error) {
	var key string
	if r.outcomes != nil && in.priors == nil { // clients with the strategy's own priors are not shared
		var err error
		if key, err = localKey(in, ids); err != nil {
			return localOutcome{}, err
		}
	}
	if out, ok := r.outcomes.get(key); ok {
		// All the round's steps at once, with the run that trained them.
		progress.ReportReused(r.rep, in.round, out.steps, out.examples, out.from)
		return out, nil
	}
	var steps, examples int
	report := in.onStep
	in.onStep = func(step, n, seen int) {
		steps, examples = n, seen
		if report != nil {
			report(step, n, seen)
		}
	}
	start := time.Now()
	out, err := r.clients.train(ctx, in)
	if err != nil {
		return localOutcome{}, err
	}
	out.took = time.Since(start)
	out.steps, out.examples, out.from = steps, examples, results.RunName(r.st.Name, r.seed)
	r.outcomes.put(key, out)
	return out, nil
}

// finishRound runs the server step on the round's returned clients and records the next global in
// res, with its time.
func (r *runState) finishRound(res *roundResult, out localOutcome, ids, sizes []int, global *posterior.Posterior, round int) (*roundResult, error) {
	t1 := time.Now()
	next, err := r.aggregate(out, ids, sizes, global, round)
	if err != nil {
		return nil, r.serverError(err, "aggregation")
	}
	if d := nonFinite(next.Posterior, nil); d != "" {
		return nil, &divergedError{"global model: " + d}
	}
	res.next, res.timings.Aggregate = next, time.Since(t1)
	return res, nil
}

// aggregate runs the server strategy on the clients a round trained (Ozer et al. (2022), Alg. 1;
// Chen & Chao, Alg. 1). prev is the global model the clients started from.
func (r *runState) aggregate(out localOutcome, ids, sizes []int, prev *posterior.Posterior, round int) (*strategy.Global, error) {
	in := &strategy.Round{
		Number:   round,
		IDs:      ids,
		Sizes:    sizes,
		Stacked:  out.stacked,
		List:     out.clients,
		Draws:    out.draws,
		Previous: prev,
		Seed:     deriveInt63(r.seed, tagAggregate, round),
		Model:    globalConfig(r.spec, r.prob, r.seed),
		Server:   r.prob.server,
		Samples:  r.spec.Evaluation.Samples,
		Data:     func() ([]*data.Dataset, error) { return r.prob.clientSets(ids) },
	}
	g, err := r.strategy.Aggregate(in)
	if err != nil {
		return nil, err
	}
	if g == nil || g.Posterior == nil {
		return nil, fmt.Errorf("the strategy returned no global model")
	}
	return g, nil
}

// serverError is an error of the strategy's server step (what names it): a divergence when the
// server step's own model diverged (a distillation at a step size too large) or its method broke
// down (a cavity without positive precision), the error itself otherwise.
func (r *runState) serverError(err error, what string) error {
	nf, de := (*posterior.NonFiniteError)(nil), (*strategy.DivergedError)(nil)
	if errors.As(err, &nf) || errors.As(err, &de) {
		return &divergedError{fmt.Sprintf("server step (%s): %v", r.spec.Aggregation.Rule, err)}
	}
	return fmt.Errorf("%s (%s): %w", what, r.spec.Aggregation.Rule, err)
}

// clientDivergence is why a round's client models are not finite ("" when they are).
func clientDivergence(out localOutcome, ids []int) string {
	switch {
	case out.diverged != "":
		return out.diverged
	case out.stacked != nil:
		return nonFinite(out.stacked, ids)
	}
	for j, c := range out.clients {
		if d := nonFinite(c, nil); d != "" {
			return fmt.Sprintf("client %d: %s", ids[j], d)
		}
	}
	return ""
}

// evaluateRound evaluates the round's global model when the round is due (Evaluation.Every, and
// the last round), filling res.metrics with the metrics, the clients' mean training loss, the
// learning rate and the strategy's own metrics.
func (r *runState) evaluateRound(res *roundResult) error {
	s := r.spec
	if res.round%s.Evaluation.Every != 0 && res.round != s.Training.Rounds {
		return nil
	}
	t2 := time.Now()
	m, acc, err := r.eval.evaluate(res.next, r.seed, res.round)
	if ov := (*evalOverflowError)(nil); errors.As(err, &ov) {
		return &divergedError{ov.Error()}
	}
	if err != nil {
		return err
	}
	res.timings.Eval = time.Since(t2)
	if n := len(res.out.loss); n > 0 {
		lossSum := 0.0
		for _, l := range res.out.loss {
			lossSum += l
		}
		m["loss"] = lossSum / float64(n)
	}
	m[MetricLearningRate] = learningRate(s.Training, res.round)
	maps.Copy(m, res.next.Metrics)
	res.metrics, res.acc = m, acc
	return nil
}
