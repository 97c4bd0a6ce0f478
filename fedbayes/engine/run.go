package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
	"fedbayes.dev/fedbayes/strategy"
)

// RunSummary is the outcome of one run (one setting, one seed).
type RunSummary struct {
	// Setting and Labels identify the setting; Seed the seed.
	Setting string
	Labels  map[string]string
	Seed    int64
	// Dir is the run directory.
	Dir string
	// State is completed or diverged (a failed run makes Run return an error).
	State results.State
	// Round is the last round run; Reason says why a run diverged.
	Round  int
	Reason string
	// Metrics are the last evaluation's metrics.
	Metrics map[string]float64
	// Resumed says the run continued from a checkpoint; AlreadyDone that it was finished before this
	// call (Options.Resume) and was not run again.
	Resumed, AlreadyDone bool
	// Busy, when not empty, says the run was skipped because another live process is writing it
	// (results.ClaimedError); TookOver that this run took over a stale claim.
	Busy, TookOver string
}

// runState is one run in progress.
type runState struct {
	spec *Spec
	st   Setting
	seed int64
	prob *problem
	w    *results.Writer
	rep  progress.Reporter
	// clients are the clients' participation, network and optimizer or sampler.
	clients *clientTraining
	eval    *evaluator
	cache   *datasetCache
	// outcomes keeps first-round local outcomes for the other runs of the Run call (nil: none kept).
	outcomes *localCache
	// strategy is the server step (aggregation.rule).
	strategy strategy.Strategy
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

// runOne runs (or resumes) one setting with one seed in dir.
func runOne(ctx context.Context, st Setting, seed int64, dir string, opts Options, cache *datasetCache, outcomes *localCache, info runinfo.Info) (RunSummary, error) {
	sum := RunSummary{Setting: st.Name, Labels: st.Labels, Seed: seed, Dir: dir}
	meta, err := results.NewMeta(st.Name, st.Labels, seed, st.Spec, info)
	if err != nil {
		return sum, err
	}
	// The claim first: nothing in dir is read for resuming or changed while another process writes
	// it. The writer is made from the claim (claim.Resume, claim.Create) and leaves it to us.
	claim, err := results.ClaimRun(dir)
	if err != nil {
		if ce := (*results.ClaimedError)(nil); errors.As(err, &ce) {
			sum.Busy = fmt.Sprintf("being written by %s", ce.Owner)
		}
		return sum, err
	}
	defer claim.Release()
	sum.TookOver = claim.TookOver
	var (
		w     *results.Writer
		start = 1
		ckpt  []byte
	)
	if opts.Resume && results.HasRun(dir) {
		run, err := results.ReadRun(dir)
		if err != nil {
			return sum, err
		}
		if run.Status.State == results.Completed || run.Status.State == results.Diverged {
			same := func(m results.Meta) error { // the run Run would write now
				if why := m.Differs(meta); why != "" {
					return errors.New(why)
				}
				return nil
			}
			if err := (results.CheckOptions{Expect: ExpectedRounds, Spec: same}).CheckRun(run); err != nil {
				return sum, fmt.Errorf("engine: %v; remove it to run it again, or choose another results directory", err)
			}
			sum.State, sum.Round, sum.Reason, sum.AlreadyDone = run.Status.State, run.Status.Round, run.Status.Reason, true
			if n := len(run.Rows); n > 0 {
				sum.Metrics = run.Rows[n-1].Metrics
			}
			return sum, nil
		}
		var rp results.ResumePoint
		if w, rp, err = claim.Resume(&meta); err != nil {
			return sum, err
		}
		noteRepairs(dir, rp)
		if rp.HasCheckpoint {
			start, ckpt, sum.Resumed = rp.Checkpoint.Round+1, rp.Checkpoint.Blob, true
			sum.Round = rp.Checkpoint.Round
			if rp.LastRow != nil {
				sum.Metrics = rp.LastRow.Metrics
			}
		}
	} else if w, err = claim.Create(meta); err != nil {
		return sum, err
	}
	defer w.Close()
	r := &runState{spec: st.Spec, st: st, seed: seed, w: w, rep: opts.Progress, cache: cache, outcomes: outcomes}
	round, err := r.loop(ctx, start, ckpt, &sum, opts.AfterRound)
	switch {
	case err == nil:
		return sum, nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		// Left incomplete: `fedbayes run --resume` continues it.
		r.rep.Done("interrupted at round " + fmt.Sprint(round))
		return sum, err
	default:
		r.rep.Done(fmt.Sprintf("failed at round %d: %v", round, err))
		if ferr := w.Fail(round, err); ferr != nil {
			return sum, errors.Join(err, ferr)
		}
		return sum, err
	}
}

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
}

// roundObserver is attached to the round loop (as GoMLX's train.Loop takes hooks): after each round,
// in the order attached, it records what it needs of the round's result; an error stops the run.
type roundObserver func(r *roundResult) error

// divergedError ends a run as diverged (a client's or the server's non-finite model, an evaluation
// overflow), with its reason: a finding, not a failure.
type divergedError struct{ reason string }

func (e *divergedError) Error() string { return "diverged: " + e.reason }

// loop runs rounds start..T; it returns the round it stopped in and an error for a failure. Each
// round reads train → aggregate → evaluate → notify: trainRound and evaluateRound compute, and the
// observers (rows, strategy files, health, checkpoint, progress, Options.AfterRound) record.
func (r *runState) loop(ctx context.Context, start int, ckpt []byte, sum *RunSummary, after func(string, int64, int)) (int, error) {
	global, observers, err := r.setup(ctx, start, ckpt, sum, after)
	if err != nil {
		return start, err
	}
	T := r.spec.Training.Rounds
	r.rep.Start(T, fmt.Sprintf("%s seed %d", r.st.Name, r.seed))
	for round := start; round <= T; round++ {
		if err := ctx.Err(); err != nil {
			return round, err
		}
		res, err := r.trainRound(ctx, round, global)
		if err == nil {
			err = r.evaluateRound(res)
		}
		if de := (*divergedError)(nil); errors.As(err, &de) {
			return round, r.diverge(round, de.reason, sum)
		}
		if err != nil {
			return round, err
		}
		global = res.next.Posterior
		for _, observe := range observers {
			if err := observe(res); err != nil {
				return round, err
			}
		}
	}
	if err := r.w.Complete(T); err != nil {
		return T, err
	}
	sum.State = results.Completed
	r.rep.Done("completed")
	return T, nil
}

// setup builds the run's problem, clients, evaluator and strategy, and returns the global model
// round start begins from (from the checkpoint ckpt when resuming, else the initial or pre-trained
// model) with the observers of the round loop.
func (r *runState) setup(ctx context.Context, start int, ckpt []byte, sum *RunSummary, after func(string, int64, int)) (*posterior.Posterior, []roundObserver, error) {
	s, seed := r.spec, r.seed
	var err error
	if r.prob, err = newProblem(s, seed, r.cache); err != nil {
		return nil, nil, err
	}
	if r.clients, err = newClientTraining(s, r.prob, seed); err != nil {
		return nil, nil, err
	}
	evalModel, err := models.New(globalConfig(s, r.prob, seed))
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	r.eval = newEvaluator(evalModel, s, r.prob, seed)
	// The initial model, before any training: the reference of the posterior health (rebuilt from
	// the seed on resume, so a resumed run records the same numbers).
	initial, err := evalModel.ClientPosterior(0)
	if err != nil {
		return nil, nil, err
	}
	health, err := newHealthTracker(initial, globalConfig(s, r.prob, seed))
	if err != nil {
		return nil, nil, err
	}
	if r.strategy, err = newStrategy(s); err != nil {
		return nil, nil, err
	}
	global := initial
	var state []byte
	if ckpt != nil {
		var round int
		if round, global, state, err = decodeCheckpoint(ckpt); err != nil {
			return nil, nil, err
		}
		if round != start-1 {
			return nil, nil, fmt.Errorf("checkpoint holds round %d, results say %d", round, start-1)
		}
		if err := r.clients.restoreCheckpoint(ckpt); err != nil {
			return nil, nil, err
		}
	}
	if st, ok := r.strategy.(strategy.Stateful); ok {
		if ckpt != nil && state == nil {
			return nil, nil, fmt.Errorf("the checkpoint of round %d in %s holds no state of %s, which keeps one: it cannot resume; remove the run to start it again",
				start-1, filepath.Join(r.w.Dir(), results.CheckpointsDir), s.Aggregation.Rule)
		}
		if err := st.Restore(state); err != nil {
			return nil, nil, fmt.Errorf("the checkpoint of round %d in %s: the strategy's state: %w", start-1, filepath.Join(r.w.Dir(), results.CheckpointsDir), err)
		}
	} else if state != nil {
		return nil, nil, fmt.Errorf("the checkpoint of round %d in %s holds a strategy state, but %s keeps none", start-1, filepath.Join(r.w.Dir(), results.CheckpointsDir), s.Aggregation.Rule)
	}
	if ckpt == nil && s.Aggregation.Pretrain != nil {
		pt, err := evalModel.NewTrainer(optimizerConfig(s.Training))
		if err != nil {
			return nil, nil, fmt.Errorf("pre-training: %w", err)
		}
		if global, err = pretrain(ctx, evalModel, pt, s, r.prob, global, seed); err != nil {
			return nil, nil, err
		}
	}
	observers := []roundObserver{
		r.recordHealth(health),
		r.recordRow(bytesPerModel(global), sum),
		r.recordCheckpoint(sum),
		r.reportProgress,
	}
	if after != nil {
		observers = append(observers, func(res *roundResult) error { after(r.st.Name, seed, res.round); return nil })
	}
	return global, observers, nil
}

// trainRound trains round round's clients from global and runs the server step on those that
// returned; a non-finite client or global model is a divergedError.
func (r *runState) trainRound(ctx context.Context, round int, global *posterior.Posterior) (*roundResult, error) {
	in, ids, sizes, err := r.clients.round(round, global)
	if err != nil {
		return nil, err
	}
	if sc, ok := r.strategy.(strategy.SequentialClients); ok && sc.Sequential() {
		return r.trainRoundSequential(ctx, sc, round, global, in, ids, sizes)
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
	return r.finishRound(res, out, ids, sizes, global, round)
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

// recordHealth adds the posterior-health metrics of an evaluated round (nil health: a model
// without variances).
func (r *runState) recordHealth(health *healthTracker) roundObserver {
	return func(res *roundResult) error {
		if _, ok := res.metrics[results.Spread]; !ok || health == nil {
			return nil
		}
		return health.record(res.next.Posterior, res.received, res.out, res.metrics)
	}
}

// recordRow writes an evaluated round's strategy files and row; perModel is a model's size in bytes.
func (r *runState) recordRow(perModel int64, sum *RunSummary) roundObserver {
	return func(res *roundResult) error {
		if res.metrics == nil {
			return nil
		}
		row := results.Row{
			Round:          res.round,
			Metrics:        res.metrics,
			Time:           results.Timing{LocalSeconds: res.timings.Local.Seconds(), AggregateSeconds: res.timings.Aggregate.Seconds(), EvalSeconds: res.timings.Eval.Seconds()},
			BytesSent:      int64(len(res.sampled)+len(res.ids)) * perModel, // the model to the sampled, back from those that returned
			Clients:        res.ids,
			Sampled:        sampledIfDropped(res.sampled, res.ids),
			ClientWeights:  res.next.Weights,
			ClientAccuracy: res.acc,
		}
		if err := writeStrategyFiles(r.w.Dir(), res.next.Files); err != nil {
			return err
		}
		if err := r.w.Append(row); err != nil {
			return err
		}
		sum.Metrics = res.metrics
		return nil
	}
}

// recordCheckpoint saves the state after every round, so that --resume continues from it.
func (r *runState) recordCheckpoint(sum *RunSummary) roundObserver {
	return func(res *roundResult) error {
		var state []byte
		if st, ok := r.strategy.(strategy.Stateful); ok {
			var err error
			if state, err = st.State(); err != nil {
				return fmt.Errorf("the strategy's state: %w", err)
			}
		}
		blob, err := encodeCheckpoint(res.round, res.next.Posterior, r.clients.losses, state)
		if err != nil {
			return err
		}
		if err := r.w.SaveCheckpoint(res.round, blob); err != nil {
			return err
		}
		sum.Round = res.round
		return nil
	}
}

// reportProgress shows the round on the run's progress reporter.
func (r *runState) reportProgress(res *roundResult) error {
	r.rep.Update(res.round, progressMetrics(res.metrics), res.timings)
	return nil
}

// diverge records a diverged run.
func (r *runState) diverge(round int, reason string, sum *RunSummary) error {
	sum.State, sum.Round, sum.Reason = results.Diverged, round, reason
	r.rep.Done(fmt.Sprintf("diverged at round %d: %s", round, reason))
	return r.w.Diverge(round, reason)
}

// progressMetrics are the metrics a round's progress line shows: all but the posterior-health ones
// (results.HealthMetrics), of which only the share of variances moved (VarMoved) is kept; the rows keep
// them all, and `fedbayes status` gives the verdict.
func progressMetrics(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if k == results.VarMoved || !slices.Contains(results.HealthMetrics, k) {
			out[k] = v
		}
	}
	return out
}

// backendConfig is the backend configuration recorded in run.json.
func backendConfig() string {
	// The process-wide backend is created on first use; create it here, so that what a run records is
	// the backend its models will use (an error surfaces again when the run builds its model).
	if _, err := backend.Default(); err != nil {
		return "unavailable: " + err.Error()
	}
	return backend.Current().Config
}

// writeStrategyFiles writes a round's strategy.Global.Files into the run directory, atomically,
// refusing a name that is not a plain file name or that is one of the run's own files.
func writeStrategyFiles(dir string, files map[string][]byte) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" ||
			strings.HasPrefix(name, ".") || slices.Contains([]string{results.MetaFile, results.RowsFile, results.StatusFile, results.CheckpointsDir}, name) {
			return fmt.Errorf("the strategy's file %q: want a plain file name (letters, digits, '.', '_', '-') other than the run's own files", name)
		}
		if err := results.WriteFileAtomic(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
