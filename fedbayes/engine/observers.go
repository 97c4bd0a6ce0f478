package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/progress"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// roundObserver is attached to the round loop, as hooks are to GoMLX's train.Loop (OnStart, OnStep,
// OnEnd): start before the first round (the first and last round the loop runs), round after each
// round with its result, end once with how the run ended. Any of the three may be nil. The loop
// calls each in the order the observers are attached; an error of start or round stops the run
// (a failure), end's errors are joined to the run's.
type roundObserver struct {
	name  string
	start func(first, last int) error
	round func(res *roundResult) error
	end   func(end loopEnd) error
}

// loopEnd is how a run's round loop ended: completed or diverged in round, or stopped there by err
// (a failure, or a cancellation that leaves the run resumable).
type loopEnd struct {
	round int
	// state is results.Completed or results.Diverged; empty when err stopped the run.
	state results.State
	// reason says why the run diverged.
	reason string
	err    error
}

// cancelled reports whether the run was stopped by its context (it stays resumable).
func (e loopEnd) cancelled() bool {
	return errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)
}

// notifyEnd gives end to every observer's end, in order, and returns the run's error. An observer
// that fails turns the end into a failure for the observers after it (a completed run whose status
// could not be written is a failed run), with its error joined to the run's.
func notifyEnd(observers []roundObserver, end loopEnd) error {
	for _, o := range observers {
		if o.end == nil {
			continue
		}
		if err := o.end(end); err != nil {
			end = loopEnd{round: end.round, err: errors.Join(end.err, fmt.Errorf("%s: %w", o.name, err))}
		}
	}
	return end.err
}

// statusObserver writes the run's final status through w: completed, diverged with its reason, or
// failed with the error; a cancelled run is left as it is, to be resumed.
func statusObserver(w *results.Writer) roundObserver {
	return roundObserver{name: "status", end: func(e loopEnd) error {
		switch {
		case e.state == results.Completed:
			return w.Complete(e.round)
		case e.state == results.Diverged:
			return w.Diverge(e.round, e.reason)
		case e.cancelled():
			return nil
		default:
			return w.Fail(e.round, e.err)
		}
	}}
}

// summaryObserver keeps sum up to date: the last round written (after its checkpoint), the last
// evaluation's metrics and the run's final state.
func summaryObserver(sum *RunSummary) roundObserver {
	return roundObserver{name: "summary",
		round: func(res *roundResult) error {
			if res.metrics != nil {
				sum.Metrics = res.metrics
			}
			sum.Round = res.round
			return nil
		},
		end: func(e loopEnd) error {
			switch e.state {
			case results.Completed:
				sum.State = results.Completed
			case results.Diverged:
				sum.State, sum.Round, sum.Reason = results.Diverged, e.round, e.reason
			}
			return nil
		}}
}

// progressObserver shows the run on rep: its rounds (label names the run), each round's metrics
// and timings, and how it ended.
func progressObserver(rep progress.Reporter, label string) roundObserver {
	return roundObserver{name: "progress",
		start: func(_, last int) error { rep.Start(last, label); return nil },
		round: func(res *roundResult) error {
			rep.Update(res.round, progressMetrics(res.metrics), res.timings)
			return nil
		},
		end: func(e loopEnd) error {
			switch {
			case e.state == results.Completed:
				rep.Done("completed")
			case e.state == results.Diverged:
				rep.Done(fmt.Sprintf("diverged at round %d: %s", e.round, e.reason))
			case e.cancelled():
				rep.Done("interrupted at round " + fmt.Sprint(e.round))
			default:
				rep.Done(fmt.Sprintf("failed at round %d: %v", e.round, e.err))
			}
			return nil
		}}
}

// healthObserver adds the posterior-health metrics of an evaluated round (nil health: a model
// without variances); it goes before rowObserver, which writes them.
func healthObserver(health *healthTracker) roundObserver {
	return roundObserver{name: "health", round: func(res *roundResult) error {
		if _, ok := res.metrics[results.Spread]; !ok || health == nil {
			return nil
		}
		return health.record(res.next.Posterior, res.received, res.out, res.metrics)
	}}
}

// rowObserver writes an evaluated round's strategy files and row through w, and leaves the row
// written in res.row for the observers after it (a round without evaluation has no row); perModel is
// a model's size in bytes.
func rowObserver(w *results.Writer, perModel int64) roundObserver {
	return roundObserver{name: "rows", round: func(res *roundResult) error {
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
		if err := writeStrategyFiles(w.Dir(), res.next.Files); err != nil {
			return err
		}
		if err := w.Append(row); err != nil {
			return err
		}
		res.row = &row
		return nil
	}}
}

// checkpointObserver saves the state after every round through w (the global model, the clients'
// losses and a stateful strategy's state), so that --resume continues from it.
func checkpointObserver(w *results.Writer, s strategy.Strategy, clients *clientTraining) roundObserver {
	return roundObserver{name: "checkpoint", round: func(res *roundResult) error {
		var state []byte
		if st, ok := s.(strategy.Stateful); ok {
			var err error
			if state, err = st.State(); err != nil {
				return fmt.Errorf("the strategy's state: %w", err)
			}
		}
		blob, err := encodeCheckpoint(res.round, res.next.Posterior, clients.losses, state)
		if err != nil {
			return err
		}
		return w.SaveCheckpoint(res.round, blob)
	}}
}

// figuresObserver keeps the run in dir as the loop writes it (meta, every row, the final status) in
// kept, for the figures Run draws once its runs are done (writeFigures takes kept runs as they are
// rather than reading their folders again). Only a run that the loop took from round 1 (first) to
// its end, completed or diverged, is kept: a resumed run's earlier rows were written before.
func figuresObserver(kept map[string]results.Run, dir string, meta results.Meta) roundObserver {
	var (
		rows  []results.Row
		whole bool
	)
	return roundObserver{name: "figures",
		start: func(first, _ int) error { whole = first == 1; return nil },
		round: func(res *roundResult) error {
			if res.row != nil {
				rows = append(rows, *res.row)
			}
			return nil
		},
		end: func(e loopEnd) error {
			if whole && (e.state == results.Completed || e.state == results.Diverged) {
				kept[dir] = results.Run{Dir: dir, Meta: meta, Status: results.Status{State: e.state, Round: e.round, Reason: e.reason}, Rows: rows}
			}
			return nil
		}}
}

// afterRoundObserver calls Options.AfterRound after each round, once its row and checkpoint are
// written.
func afterRoundObserver(after func(string, int64, int), setting string, seed int64) roundObserver {
	return roundObserver{name: "after round", round: func(res *roundResult) error {
		after(setting, seed, res.round)
		return nil
	}}
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
