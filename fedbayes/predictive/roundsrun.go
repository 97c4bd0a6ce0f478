package predictive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"fedbayes.dev/fedbayes/backend"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/runinfo"
)

// roundsRunSpec is what a multi-round run's run.json stores: the spec and the method.
type roundsRunSpec struct {
	Spec   RoundsSpec `json:"spec"`
	Method string     `json:"method"`
}

// Federation is one seed's data for a RoundsSpec, as RunRounds splits it: the clients' labelled
// sets, the server's share of the training set (FedBE uses its inputs only), the test set, the
// partition and the clients' MLP.
type Federation struct {
	// Config is the spec's MLP with one client per set of Clients.
	Config    models.Config
	Partition *partition.Partition
	Clients   []*data.Dataset
	Server    *data.Dataset
	Test      *data.Dataset
	// Sizes are the clients' example counts (FedBE's and FedAvg's weights); Weights are the same
	// normalised (recorded with every round).
	Sizes, Weights []float64
}

// RunRounds executes a multi-round spec: for every seed it splits the data once, then runs every
// method for spec.Rounds rounds and writes one results run per method and seed under outDir
// (setting NAME-METHOD, labels method and dataset), one row per round with the global model's test
// accuracy, NLL and ECE and the round's timing. Completed runs of the same spec are kept, so an
// interrupted RunRounds can be repeated; an incomplete run starts again from round 1, and a run
// recorded with a different spec is an error (remove it or choose another outDir). Progress lines,
// one per round, go to log (may be nil). Cancelling ctx stops the run at the end of the current round
// (that run is recorded as failed and starts again on the next call).
func RunRounds(ctx context.Context, spec RoundsSpec, outDir string, log io.Writer) error {
	spec = spec.WithDefaults()
	if err := spec.Validate(); err != nil {
		return err
	}
	spec.Budget = spec.DescribeBudget() // what runs, not a preset's label
	if log == nil {
		log = io.Discard
	}
	if _, err := backend.Default(); err != nil {
		return err
	}
	dir := spec.DataDir
	if dir == "" {
		dir = data.Dir()
	}
	info := runinfo.Collect(backend.Current().Config) // once: it may ask git
	info.Kernels = backend.Kernels(info.Backend)
	for _, seed := range spec.Seeds {
		var f *Federation
		for _, method := range spec.Methods {
			if err := ctx.Err(); err != nil {
				return err
			}
			rd := filepath.Join(outDir, results.RunName(spec.Name+"-"+method, seed))
			done, err := roundsRunDone(spec, method, seed, rd)
			if err != nil {
				return err
			}
			if done {
				fmt.Fprintf(log, "%s %s seed %d: already complete, skipped\n", spec.Name, method, seed)
				continue
			}
			if f == nil {
				if f, err = NewFederation(spec, seed); err != nil {
					return fmt.Errorf("predictive: %s seed %d: %w", spec.Name, seed, err)
				}
			}
			if err := runRoundsMethod(ctx, spec, method, seed, f, rd, info, log); err != nil {
				return fmt.Errorf("predictive: %s %s seed %d: %w", spec.Name, method, seed, err)
			}
		}
	}
	return nil
}

// roundsRunDone reports whether rd holds a completed run of the spec and method. An incomplete run
// is removed (it restarts); a run of another spec is an error.
func roundsRunDone(spec RoundsSpec, method string, seed int64, rd string) (bool, error) {
	if _, err := os.Stat(rd); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	r, err := results.ReadRun(rd)
	if err != nil || r.Status.State != results.Completed {
		return false, os.RemoveAll(rd)
	}
	if err := r.Check(nil); err != nil {
		return false, fmt.Errorf("predictive: %s holds a completed run whose rows cannot be trusted (%v); remove it to rerun", rd, err)
	}
	want, err := roundsMeta(spec, method, seed, runinfo.Info{}) // Differs does not compare provenance
	if err != nil {
		return false, err
	}
	if why := r.Meta.Differs(want); why != "" {
		return false, fmt.Errorf("predictive: %s holds a completed run of a different spec (%s); remove it or choose another results directory", rd, why)
	}
	return true, nil
}

// roundsMeta is the run.json of a method's run for one seed, with provenance info.
func roundsMeta(spec RoundsSpec, method string, seed int64, info runinfo.Info) (results.Meta, error) {
	return results.NewMeta(spec.Name+"-"+method, map[string]string{"method": method, "dataset": spec.Dataset}, seed,
		roundsRunSpec{Spec: spec, Method: method}, info)
}

// NewFederation loads the spec's data for seed (from spec.DataDir, or data.Dir()), keeps the spec's
// server fraction of the training set (seeded) for the server and splits the rest among the clients
// with the spec's Dirichlet label skew (partition.Dirichlet): the split RunRounds makes.
func NewFederation(spec RoundsSpec, seed int64) (*Federation, error) {
	dir := spec.DataDir
	if dir == "" {
		dir = data.Dir()
	}
	train, test, err := loadData(Spec{Setup: Setup{Dataset: spec.Dataset, Subsample: spec.Subsample, TestSubsample: spec.TestSubsample}}, dir, seed)
	if err != nil {
		return nil, err
	}
	server, rest, err := data.SplitServer(train, spec.ServerFraction, uint64(seed))
	if err != nil {
		return nil, err
	}
	p, err := partition.Dirichlet(rest.Labels, rest.NumClasses, spec.Clients,
		partition.DirichletOptions{Alpha: spec.Alpha, MinSize: partition.DefaultDirichletMinSize, Seed: uint64(seed)})
	if err != nil {
		return nil, err
	}
	f := &Federation{Partition: p, Server: server, Test: test, Weights: p.SizeWeights(),
		Config: models.Config{Arch: models.ArchMLP, InputShape: train.Shape, NumClasses: train.NumClasses,
			Hidden: spec.Hidden, Clients: spec.Clients, Seed: seed}}
	for k, idx := range p.Clients {
		d, err := rest.Select(idx)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
		f.Clients = append(f.Clients, d)
		f.Sizes = append(f.Sizes, float64(d.Len()))
	}
	return f, nil
}

// runRoundsMethod runs one method for one seed and records it, one row per round.
func runRoundsMethod(ctx context.Context, spec RoundsSpec, method string, seed int64, f *Federation, rd string, info runinfo.Info, log io.Writer) error {
	meta, err := roundsMeta(spec, method, seed, info)
	if err != nil {
		return err
	}
	w, err := results.Create(rd, meta)
	if err != nil {
		return err
	}
	ids := make([]int, len(f.Clients))
	for k := range ids {
		ids[k] = k
	}
	began, last := time.Now(), 0
	hook := func(r int, global *posterior.Posterior, local, server time.Duration) error {
		last = r
		start := time.Now()
		res, err := evaluateGlobal(f.Config, global, f.Test)
		if err != nil {
			return err
		}
		row := results.Row{Round: r, Clients: ids, ClientWeights: f.Weights,
			Metrics: map[string]float64{results.Accuracy: res.Accuracy, results.NLL: res.NLL, results.ECE: res.ECE},
			Time:    results.Timing{LocalSeconds: local.Seconds(), AggregateSeconds: server.Seconds(), EvalSeconds: time.Since(start).Seconds()}}
		if err := w.Append(row); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s %s seed %d round %d/%d: %.1fs/round, accuracy %.4f nll %.4f ece %.4f\n", spec.Name, method, seed,
			r, spec.Rounds, time.Since(began).Seconds()/float64(r), res.Accuracy, res.NLL, res.ECE)
		return ctx.Err()
	}
	if fc, ok := spec.fedbeConfig(method, seed); ok {
		server := func(r int, trained *posterior.Posterior, sizes []float64) (*posterior.Posterior, error) {
			return FedBEServer(f.Config, trained, sizes, f.Server.X, fc, r)
		}
		_, err = federate("FedBE", f.Config, f.Clients, fc.Local, spec.Rounds, server, hook)
	} else {
		lc := spec.Local
		lc.Seed = seed
		_, err = federate("FedAvg", f.Config, f.Clients, lc, spec.Rounds, fedAvgServer, hook)
	}
	if err != nil {
		return errors.Join(err, w.Fail(last, err))
	}
	return w.Complete(spec.Rounds)
}

// evaluateGlobal scores one global model (unstacked deterministic posterior) on the test set.
func evaluateGlobal(cfg models.Config, global *posterior.Posterior, test *data.Dataset) (metrics.ClassificationResult, error) {
	one, err := posterior.Stack([]*posterior.Posterior{global})
	if err != nil {
		return metrics.ClassificationResult{}, err
	}
	probs, _, _, err := EnsembleMean(cfg, one, test.X)
	if err != nil {
		return metrics.ClassificationResult{}, err
	}
	return metrics.EvaluateClassification(probs, test.Labels, test.NumClasses, 0)
}
