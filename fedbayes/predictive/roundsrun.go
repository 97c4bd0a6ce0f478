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

// federation is one seed's data for a RoundsSpec: the clients, the server's unlabeled inputs, the
// test set and the model configuration.
type federation struct {
	cfg     models.Config
	clients []*data.Dataset
	weights []float64
	serverX []float32
	test    *data.Dataset
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
		var f *federation
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
				if f, err = newFederation(spec, dir, seed); err != nil {
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

// newFederation loads one seed's data, keeps the server's share unlabeled and splits the rest among
// the clients with a Dirichlet label skew.
func newFederation(spec RoundsSpec, dir string, seed int64) (*federation, error) {
	train, test, err := loadData(Spec{Dataset: spec.Dataset, Subsample: spec.Subsample, TestSubsample: spec.TestSubsample}, dir, seed)
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
	f := &federation{serverX: server.X, test: test, weights: p.SizeWeights(),
		cfg: models.Config{Arch: models.ArchMLP, InputShape: train.Shape, NumClasses: train.NumClasses,
			Hidden: spec.Hidden, Clients: spec.Clients, Seed: seed}}
	for k, idx := range p.Clients {
		d, err := rest.Select(idx)
		if err != nil {
			return nil, fmt.Errorf("client %d: %w", k, err)
		}
		f.clients = append(f.clients, d)
	}
	return f, nil
}

// runRoundsMethod runs one method for one seed and records it, one row per round.
func runRoundsMethod(ctx context.Context, spec RoundsSpec, method string, seed int64, f *federation, rd string, info runinfo.Info, log io.Writer) error {
	meta, err := roundsMeta(spec, method, seed, info)
	if err != nil {
		return err
	}
	w, err := results.Create(rd, meta)
	if err != nil {
		return err
	}
	ids := make([]int, len(f.clients))
	for k := range ids {
		ids[k] = k
	}
	began, last := time.Now(), 0
	hook := func(r int, global *posterior.Posterior, local, server time.Duration) error {
		last = r
		start := time.Now()
		res, err := evaluateGlobal(f.cfg, global, f.test)
		if err != nil {
			return err
		}
		row := results.Row{Round: r, Clients: ids, ClientWeights: f.weights,
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
			return FedBEServer(f.cfg, trained, sizes, f.serverX, fc, r)
		}
		_, err = federate("FedBE", f.cfg, f.clients, fc.Local, spec.Rounds, server, hook)
	} else {
		lc := spec.Local
		lc.Seed = seed
		_, err = federate("FedAvg", f.cfg, f.clients, lc, spec.Rounds, fedAvgServer, hook)
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
