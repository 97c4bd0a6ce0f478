package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"fedbayes.dev/fedbayes/backend"
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

// runCall is what the runs of one Run call share.
type runCall struct {
	opts  Options
	cache *datasetCache
	info  runinfo.Info
	// outcomes keeps first-round local outcomes for the runs that share them.
	outcomes *localCache
	// kept are the runs of the call that ran from round 1 to their end, and those found finished
	// (Options.Resume), by directory: the figures take them as they are (writeFigures).
	kept map[string]results.Run
}

// runOne runs (or resumes) one setting with one seed in dir; outcomes, when not nil, shares local
// outcomes with the call's other runs.
func (c *runCall) runOne(ctx context.Context, st Setting, seed int64, dir string, outcomes *localCache) (RunSummary, error) {
	sum := RunSummary{Setting: st.Name, Labels: st.Labels, Seed: seed, Dir: dir}
	meta, err := results.NewMeta(st.Name, st.Labels, seed, st.Spec, c.info)
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
	w, start, ckpt, err := c.openRun(claim, dir, meta, &sum)
	if err != nil || w == nil {
		return sum, err
	}
	defer w.Close()
	r := &runState{spec: st.Spec, st: st, seed: seed, w: w, rep: c.opts.Progress, cache: c.cache, outcomes: outcomes}
	global, observers, err := r.setup(ctx, start, ckpt)
	// What records the run's end is attached whether or not the setup succeeded.
	observers = append(observers, statusObserver(w), summaryObserver(&sum), progressObserver(r.rep, fmt.Sprintf("%s seed %d", st.Name, seed)))
	if !c.opts.NoFigures {
		observers = append(observers, figuresObserver(c.kept, dir, w.Meta()))
	}
	if c.opts.AfterRound != nil {
		observers = append(observers, afterRoundObserver(c.opts.AfterRound, st.Name, seed))
	}
	end := loopEnd{round: start, err: err}
	if err == nil {
		end = r.loop(ctx, start, global, observers)
	}
	return sum, notifyEnd(observers, end)
}

// openRun opens the run in dir under claim: a new run, or with Options.Resume the run already there.
// It returns the writer, the round to start from and the checkpoint to continue (nil: from the
// start), and fills sum with what the run holds; a finished run that matches meta is not opened
// (nil writer, sum.AlreadyDone; the run read is kept for the figures), one that does not is an
// error.
func (c *runCall) openRun(claim *results.Claim, dir string, meta results.Meta, sum *RunSummary) (*results.Writer, int, []byte, error) {
	if !c.opts.Resume || !results.HasRun(dir) {
		w, err := claim.Create(meta)
		return w, 1, nil, err
	}
	run, err := results.ReadRun(dir)
	if err != nil {
		return nil, 0, nil, err
	}
	if run.Status.State == results.Completed || run.Status.State == results.Diverged {
		same := func(m results.Meta) error { // the run Run would write now
			if why := m.Differs(meta); why != "" {
				return errors.New(why)
			}
			return nil
		}
		if err := (results.CheckOptions{Expect: ExpectedRounds, Spec: same}).CheckRun(run); err != nil {
			return nil, 0, nil, fmt.Errorf("engine: %v; remove it to run it again, or choose another results directory", err)
		}
		sum.State, sum.Round, sum.Reason, sum.AlreadyDone = run.Status.State, run.Status.Round, run.Status.Reason, true
		if n := len(run.Rows); n > 0 {
			sum.Metrics = run.Rows[n-1].Metrics
		}
		c.kept[dir] = run
		return nil, 0, nil, nil
	}
	w, rp, err := claim.Resume(&meta)
	if err != nil {
		return nil, 0, nil, err
	}
	noteRepairs(dir, rp)
	if !rp.HasCheckpoint {
		return w, 1, nil, nil
	}
	sum.Resumed, sum.Round = true, rp.Checkpoint.Round
	if rp.LastRow != nil {
		sum.Metrics = rp.LastRow.Metrics
	}
	return w, rp.Checkpoint.Round + 1, rp.Checkpoint.Blob, nil
}

// setup builds the run's problem, clients, evaluator and strategy, and returns the global model
// round start begins from (from the checkpoint ckpt when resuming, else the initial or pre-trained
// model) with the observers that record the rounds: health, rows and strategy files, checkpoints.
func (r *runState) setup(ctx context.Context, start int, ckpt []byte) (*posterior.Posterior, []roundObserver, error) {
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
	if ckpt != nil {
		if global, err = r.restore(start, ckpt); err != nil {
			return nil, nil, err
		}
	} else if err := r.startState(); err != nil {
		return nil, nil, err
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
	return global, []roundObserver{
		healthObserver(health),
		rowObserver(r.w, bytesPerModel(global)),
		checkpointObserver(r.w, r.strategy, r.clients),
	}, nil
}

// restore reads the checkpoint ckpt of round start-1 and restores the clients' and the strategy's
// state from it; it returns the global model round start begins from.
func (r *runState) restore(start int, ckpt []byte) (*posterior.Posterior, error) {
	round, global, state, err := decodeCheckpoint(ckpt)
	if err != nil {
		return nil, err
	}
	if round != start-1 {
		return nil, fmt.Errorf("checkpoint holds round %d, results say %d", round, start-1)
	}
	if err := r.clients.restoreCheckpoint(ckpt); err != nil {
		return nil, err
	}
	where := filepath.Join(r.w.Dir(), results.CheckpointsDir)
	st, ok := r.strategy.(strategy.Stateful)
	switch {
	case ok && state == nil:
		return nil, fmt.Errorf("the checkpoint of round %d in %s holds no state of %s, which keeps one: it cannot resume; remove the run to start it again",
			start-1, where, r.spec.Aggregation.Rule)
	case ok:
		if err := st.Restore(state); err != nil {
			return nil, fmt.Errorf("the checkpoint of round %d in %s: the strategy's state: %w", start-1, where, err)
		}
	case state != nil:
		return nil, fmt.Errorf("the checkpoint of round %d in %s holds a strategy state, but %s keeps none", start-1, where, r.spec.Aggregation.Rule)
	}
	return global, nil
}

// startState sets a stateful strategy of a run that begins at round 1 to its state before round 1.
func (r *runState) startState() error {
	if st, ok := r.strategy.(strategy.Stateful); ok {
		if err := st.Restore(nil); err != nil {
			return fmt.Errorf("the strategy's state: %w", err)
		}
	}
	return nil
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
