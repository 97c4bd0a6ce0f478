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
	if r.outcomes != nil {
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
	round, err := r.loop(ctx, start, ckpt, &sum)
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

// loop runs rounds start..T; it returns the round it stopped in and an error for a failure.
func (r *runState) loop(ctx context.Context, start int, ckpt []byte, sum *RunSummary) (int, error) {
	s, seed := r.spec, r.seed
	var err error
	if r.prob, err = newProblem(s, seed, r.cache); err != nil {
		return start, err
	}
	if r.clients, err = newClientTraining(s, r.prob, seed); err != nil {
		return start, err
	}
	evalModel, err := models.New(globalConfig(s, r.prob, seed))
	if err != nil {
		return start, fmt.Errorf("model: %w", err)
	}
	r.eval = newEvaluator(evalModel, s, r.prob, seed)
	// The initial model, before any training: the reference of the posterior health (rebuilt from
	// the seed on resume, so a resumed run records the same numbers).
	initial, err := evalModel.ClientPosterior(0)
	if err != nil {
		return start, err
	}
	health, err := newHealthTracker(initial, globalConfig(s, r.prob, seed))
	if err != nil {
		return start, err
	}
	if r.strategy, err = newStrategy(s); err != nil {
		return start, err
	}

	var global *posterior.Posterior
	if ckpt != nil {
		var round int
		if round, global, err = decodeCheckpoint(ckpt); err != nil {
			return start, err
		}
		if round != start-1 {
			return start, fmt.Errorf("checkpoint holds round %d, results say %d", round, start-1)
		}
		if err := r.clients.restoreCheckpoint(ckpt); err != nil {
			return start, err
		}
	} else {
		global = initial
		if s.Aggregation.Pretrain != nil {
			pt, err := evalModel.NewTrainer(optimizerConfig(s.Training))
			if err != nil {
				return start, fmt.Errorf("pre-training: %w", err)
			}
			if global, err = pretrain(ctx, evalModel, pt, s, r.prob, global, seed); err != nil {
				return start, err
			}
		}
	}

	T := s.Training.Rounds
	r.rep.Start(T, fmt.Sprintf("%s seed %d", r.st.Name, seed))
	perModel := bytesPerModel(global)
	for round := start; round <= T; round++ {
		if err := ctx.Err(); err != nil {
			return round, err
		}
		in, ids, jobSizes, err := r.clients.round(round, global)
		if err != nil {
			return round, err
		}
		in.onStep = stepFunc(r.rep, round)

		out, err := r.localRound(ctx, in, ids)
		if err != nil {
			return round, err
		}
		sampled := ids // the clients sampled; ids becomes those that returned
		if out, ids, jobSizes, err = r.clients.returned(out, ids, jobSizes); err != nil {
			return round, err
		}
		tLocal := out.took
		if out.diverged == "" {
			if out.stacked != nil {
				out.diverged = nonFinite(out.stacked, ids)
			} else {
				for j, c := range out.clients {
					if d := nonFinite(c, nil); d != "" {
						out.diverged = fmt.Sprintf("client %d: %s", ids[j], d)
						break
					}
				}
			}
		}
		if out.diverged != "" {
			return round, r.diverge(round, out.diverged, sum)
		}

		t1 := time.Now()
		received := global
		next, err := r.aggregate(out, ids, jobSizes, global, round)
		if nf := (*posterior.NonFiniteError)(nil); errors.As(err, &nf) {
			// The server step's own model diverged (a distillation at a step size too large).
			return round, r.diverge(round, fmt.Sprintf("server step (%s): %v", s.Aggregation.Rule, err), sum)
		}
		if err != nil {
			return round, fmt.Errorf("aggregation (%s): %w", s.Aggregation.Rule, err)
		}
		if d := nonFinite(next.Posterior, nil); d != "" {
			return round, r.diverge(round, "global model: "+d, sum)
		}
		global = next.Posterior
		tAgg := time.Since(t1)

		var (
			m       map[string]float64
			acc     []float64
			tEval   time.Duration
			lossSum float64
		)
		evaluated := round%s.Evaluation.Every == 0 || round == T
		if evaluated {
			t2 := time.Now()
			if m, acc, err = r.eval.evaluate(next, seed, round); err != nil {
				if ov := (*evalOverflowError)(nil); errors.As(err, &ov) {
					return round, r.diverge(round, ov.Error(), sum)
				}
				return round, err
			}
			tEval = time.Since(t2)
			for _, l := range out.loss {
				lossSum += l
			}
			if len(out.loss) > 0 {
				m["loss"] = lossSum / float64(len(out.loss))
			}
			m[MetricLearningRate] = learningRate(s.Training, round)
			for name, v := range next.Metrics {
				m[name] = v
			}
			if _, ok := m[results.Spread]; ok && health != nil {
				if err := health.record(next.Posterior, received, out, m); err != nil {
					return round, err
				}
			}
			row := results.Row{
				Round:          round,
				Metrics:        m,
				Time:           results.Timing{LocalSeconds: tLocal.Seconds(), AggregateSeconds: tAgg.Seconds(), EvalSeconds: tEval.Seconds()},
				BytesSent:      int64(len(sampled)+len(ids)) * perModel, // the model to the sampled, back from those that returned
				Clients:        ids,
				Sampled:        sampledIfDropped(sampled, ids),
				ClientWeights:  next.Weights,
				ClientAccuracy: acc,
			}
			if err := writeStrategyFiles(r.w.Dir(), next.Files); err != nil {
				return round, err
			}
			if err := r.w.Append(row); err != nil {
				return round, err
			}
			sum.Metrics = m
		}
		blob, err := encodeCheckpoint(round, global, r.clients.losses)
		if err != nil {
			return round, err
		}
		if err := r.w.SaveCheckpoint(round, blob); err != nil {
			return round, err
		}
		sum.Round = round
		r.rep.Update(round, progressMetrics(m), progress.Timings{Local: tLocal, Aggregate: tAgg, Eval: tEval})
		if afterRoundHook != nil {
			afterRoundHook(r.st.Name, seed, round)
		}
	}
	if err := r.w.Complete(T); err != nil {
		return T, err
	}
	sum.State = results.Completed
	r.rep.Done("completed")
	return T, nil
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

// afterRoundHook, when set by a test, is called after each round's checkpoint.
var afterRoundHook func(setting string, seed int64, round int)

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
