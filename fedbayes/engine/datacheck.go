package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// runRef is one run of a Run call: a setting and a seed.
type runRef struct {
	st   Setting
	seed int64
}

// name is the run's directory name (results.RunName).
func (r runRef) name() string { return results.RunName(r.st.Name, r.seed) }

// dir is the run's directory in the results directory root.
func (r runRef) dir(root string) string { return filepath.Join(root, r.name()) }

// runsOf lists the runs of settings in the order Run runs them: each setting with each of its seeds.
func runsOf(settings []Setting) []runRef {
	var runs []runRef
	for _, st := range settings {
		for _, seed := range st.Spec.Seeds {
			runs = append(runs, runRef{st, seed})
		}
	}
	return runs
}

// CheckData refuses what Run refuses before it writes anything (checkData for the runs of spec that
// dir does not hold yet): for a caller that writes to dir before Run does, such as `fedbayes run
// -jobs N`, which starts its workers' logs there.
func CheckData(spec *Spec, dir string) error {
	if spec == nil {
		return fmt.Errorf("engine: nil spec")
	}
	settings, err := spec.Expand()
	if err != nil {
		return err
	}
	return checkData(freshRuns(runsOf(settings), dir), &datasetCache{})
}

// freshRuns are the runs whose directory under dir holds no run yet.
func freshRuns(runs []runRef, dir string) []runRef {
	var out []runRef
	for _, r := range runs {
		if !results.HasRun(r.dir(dir)) {
			out = append(out, r)
		}
	}
	return out
}

// checkData refuses, before any run directory is written, what only the data can show to be wrong
// in the runs' specs (Validate touches no data): a dataset that cannot be loaded, a
// partition.sort_feature that is not one of the dataset's features, a subsample, server share or
// partition that the data cannot give (a client without examples), a model.arch that does not fit
// the dataset's examples (LeNet on 8 x 8 digits), clients the strategy refuses (strategy.ClientChecker:
// FedKT's teachers more than a client has examples), and
// a pre-training validation split the server set cannot give. It prepares each run's data as the run will
// (newProblem: the same split, subsample and partition for the seed), once per distinct dataset,
// partition and seed, and checks every setting against it, its one-client network configuration
// included (models.Config.Validate, which builds nothing). The error is a *SpecError
// naming the field and the setting, and the seed where the data was drawn with one.
func checkData(runs []runRef, cache *datasetCache) error {
	problems := map[string]*problem{}
	for _, r := range runs {
		s := r.st.Spec
		key, err := json.Marshal(struct {
			Dataset   DatasetSpec
			Partition PartitionSpec
			Seed      int64
		}{s.Dataset, s.Partition, r.seed})
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
		p := problems[string(key)]
		if p == nil {
			if p, err = newProblem(s, r.seed, cache); err != nil {
				return dataError(r, err, true)
			}
			problems[string(key)] = p
		}
		// The checks below depend on more of the setting than the data (the rule, the pre-training,
		// the model), so they run for every setting.
		if err := checkClientSizes(s, p); err != nil {
			return dataError(r, err, true)
		}
		if s.Aggregation.Pretrain != nil && p.server != nil {
			if _, _, err := pretrainSplit(s, p, r.seed); err != nil {
				return dataError(r, err, true)
			}
		}
		cfg := modelConfig(s, p, 1, 0)
		if err := cfg.Validate(); err != nil {
			path := "model"
			if se := (*models.ShapeError)(nil); errors.As(err, &se) {
				path = "model.arch"
			}
			return dataError(r, specErr(path, "%s on %s (examples of shape %v): %v", s.Model.Arch, s.Dataset.Name, cfg.InputShape, err), false)
		}
	}
	return nil
}

// checkClientSizes lets a strategy that implements strategy.ClientChecker check the clients'
// training-set sizes of the partition (FedKT: one example per teacher); its refusal is a *SpecError
// naming the field.
func checkClientSizes(s *Spec, p *problem) error {
	st, err := newStrategy(s)
	if err != nil {
		return err
	}
	cc, ok := st.(strategy.ClientChecker)
	if !ok {
		return nil
	}
	sizes := make([]int, len(p.part.Clients))
	for k, idx := range p.part.Clients {
		sizes[k] = len(idx)
	}
	if err := cc.CheckClients(sizes); err != nil {
		return fieldSpecErr(err)
	}
	return nil
}

// dataError names the run's setting (and seed, when the data depends on it) in a *SpecError, or
// wraps another error with them.
func dataError(r runRef, err error, seeded bool) error {
	where := ""
	if seeded {
		where = fmt.Sprintf(" (seed %d)", r.seed)
	}
	var se *SpecError
	if errors.As(err, &se) {
		out := *se
		out.Setting = shortName(r.st.Name)
		out.Problem += where
		return &out
	}
	return fmt.Errorf("engine: setting %s%s: %w", r.st.Name, where, err)
}
