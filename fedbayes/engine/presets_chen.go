package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// chenPaperBudget is what the FedBE presets cut from Chen & Chao's non-IID CIFAR-10 table.
const chenPaperBudget = "paper: CIFAR-10 and a ConvNet, T=40, E=20, 10K server examples, M=10"

// chenRounds are the multi-round FedBE experiments of Chen & Chao (FedBE, Alg. 1 and the non-IID
// table) on an MLP, as predictive.RoundsSpec values: 10 clients, all active, a Dirichlet label skew,
// 20% of the training set kept for the server, FedAvg and FedBE's three forms on the same clients.
// fedbe-fmnist-fast and fedbe-digits-fast finish in minutes on two cores, fedbe-fmnist-medium in about
// an hour, and fedbe-fmnist-full runs the paper's rounds, local epochs and client count on all of
// Fashion-MNIST (hours on the pure-Go backend). Each runs through the engine as FromRounds makes it.
var chenRounds = map[string]predictive.RoundsSpec{
	"fedbe-fmnist-fast": {
		Setup:  predictive.Setup{Name: "fedbe-fmnist-fast", Dataset: "fashion-mnist", Subsample: 6000, TestSubsample: 2000, Seeds: []int64{1, 2}, Budget: "reduced (" + chenPaperBudget + ")"},
		Rounds: 10,
		Local:  predictive.LocalConfig{Epochs: 2, BatchSize: 32, LearningRate: 0.05},
		FedBE:  predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 4, BatchSize: 32, SWACycles: 4}},
	},
	"fedbe-fmnist-medium": {
		Setup:  predictive.Setup{Name: "fedbe-fmnist-medium", Dataset: "fashion-mnist", Subsample: 20000, Seeds: []int64{1, 2, 3, 4, 5}, Budget: "medium (" + chenPaperBudget + ")"},
		Rounds: 20,
		Local:  predictive.LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE:  predictive.FedBEConfig{Samples: 10, Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 5}},
	},
	"fedbe-fmnist-full": {
		Setup: predictive.Setup{Name: "fedbe-fmnist-full", Dataset: "fashion-mnist", Budget: "full (Chen & Chao's 10 clients, T=40 rounds, E=20 local epochs, M=10, 3 seeds; Fashion-MNIST and an MLP instead of CIFAR-10 and a ConvNet)"},
		Local: predictive.LocalConfig{BatchSize: 32, LearningRate: 0.05},
		FedBE: predictive.FedBEConfig{Distill: predictive.DistillConfig{Epochs: 20, BatchSize: 32}},
	},
	"fedbe-digits-fast": {
		Setup:  predictive.Setup{Name: "fedbe-digits-fast", Dataset: "digits", Hidden: []int{32}, Seeds: []int64{1, 2}, Budget: "reduced (scikit-learn digits, 32 hidden units)"},
		Rounds: 5,
		Alpha:  0.3,
		Local:  predictive.LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE:  predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 2}},
	},
}

// roundsRules maps the methods of a RoundsSpec to the engine's server strategies.
var roundsRules = map[string]string{
	predictive.RoundsFedAvg:         string(aggregate.FedAvg),
	predictive.RoundsFedBEGaussian:  strategy.FedBEGaussian,
	predictive.RoundsFedBEDirichlet: strategy.FedBEDirichlet,
	predictive.RoundsFedBENoSWA:     strategy.FedBENoSWA,
}

// FromRounds translates a multi-round FedBE spec (predictive.RoundsSpec, the JSON of `fedbayes
// fedbe`) into the engine spec that runs it: the same data, server fraction, clients, Dirichlet label
// skew (min_size partition.DefaultDirichletMinSize), deterministic MLP, rounds, local training and
// seeds, with one variant per method, labelled by the method's name (so runs are
// NAME-METHOD-seedS): FedAvg with size weights, and the FedBE strategies with the spec's M,
// Dirichlet concentration and distillation (Chen & Chao, Alg. 1). The spec is validated first; its
// local.seed and fedbe.seed are refused, since the engine derives every stream from the run's seed.
func FromRounds(rs predictive.RoundsSpec) (*Spec, error) {
	rs = rs.WithDefaults()
	if err := rs.Validate(); err != nil {
		return nil, err
	}
	if rs.Local.Seed != 0 || rs.FedBE.Seed != 0 {
		return nil, fmt.Errorf("rounds spec %q: local.seed and fedbe.seed have no engine counterpart (the engine derives every stream from the run's seed, seeds); remove them", rs.Name)
	}
	distill := rs.FedBE.Distill
	s := &Spec{
		Name:   rs.Name,
		Budget: rs.Budget,
		Dataset: DatasetSpec{Name: rs.Dataset, Dir: rs.DataDir, Subsample: rs.Subsample, TestSubsample: rs.TestSubsample,
			ServerFraction: rs.ServerFraction},
		Partition:   PartitionSpec{Method: "dirichlet", Clients: rs.Clients, Alpha: rs.Alpha, MinSize: partition.DefaultDirichletMinSize},
		Model:       ModelSpec{Arch: "mlp", Kind: "deterministic", Hidden: append([]int(nil), rs.Hidden...)},
		Aggregation: AggregationSpec{Rule: string(aggregate.FedAvg), Weighting: "size"},
		Training: TrainingSpec{Rounds: rs.Rounds, LocalEpochs: rs.Local.Epochs, BatchSize: rs.Local.BatchSize,
			Optimizer: rs.Local.Optimizer, LearningRate: rs.Local.LearningRate, Momentum: rs.Local.Momentum},
		Seeds: append([]int64(nil), rs.Seeds...),
	}
	for _, m := range rs.Methods {
		rule, ok := roundsRules[m]
		if !ok {
			return nil, fmt.Errorf("rounds spec: methods: %q is not a multi-round method", m)
		}
		if m == predictive.RoundsFedAvg {
			s.Variants = append(s.Variants, variant(m, "aggregation.rule", rule))
			continue
		}
		s.Variants = append(s.Variants, variant(m, "aggregation.rule", rule,
			"aggregation.server", ServerSpec{Samples: rs.FedBE.Samples, Alpha: rs.FedBE.Alpha, Distill: &distill}))
	}
	if _, err := s.Expand(); err != nil {
		return nil, fmt.Errorf("rounds spec %q as an engine spec: %w", rs.Name, err)
	}
	return s, nil
}

// ChenPresetNames lists the multi-round FedBE presets (Chen & Chao on an MLP), sorted.
func ChenPresetNames() []string { return slices.Sorted(maps.Keys(chenRounds)) }

// ChenRounds returns the multi-round FedBE preset name as a predictive.RoundsSpec (what Preset runs,
// through FromRounds), for `fedbayes fedbe -preset`; ok is false for another name.
func ChenRounds(name string) (rs predictive.RoundsSpec, ok bool) {
	rs, ok = chenRounds[name]
	rs.Hidden = append([]int(nil), rs.Hidden...)
	rs.Seeds = append([]int64(nil), rs.Seeds...)
	return rs, ok
}

func init() {
	for _, name := range ChenPresetNames() {
		about := "Chen & Chao (FedBE) non-IID table on an MLP: " + chenRounds[name].Dataset + ", 10 clients, Dirichlet(" +
			fmt.Sprint(chenRounds[name].WithDefaults().Alpha) + "), 20% server set: FedAvg and FedBE (Gaussian, Dirichlet, w/o SWA)"
		addPaperPreset(name, about, func() *Spec {
			rs, _ := ChenRounds(name)
			s, err := FromRounds(rs)
			if err != nil {
				panic("engine: preset " + name + ": " + err.Error()) // a programming error, caught by TestPresets
			}
			return s
		}, nil)
	}
}

// isOldRoundsRun reports whether meta is a run written by the former multi-round runner
// (predictive.RunRounds, `fedbayes fedbe` before it ran through the engine): its stored spec is
// {"spec": rounds spec, "method": ...} and its labels are method and dataset. Such runs drew their
// data split, initial model and batch order from other seed streams, and trained each client for E
// passes over the largest client's data, so they are not runs of the engine spec of the same name.
func isOldRoundsRun(meta results.Meta) bool {
	var old struct {
		Spec *struct {
			FedBE json.RawMessage `json:"fedbe"`
		} `json:"spec"`
		Method string `json:"method"`
	}
	if json.Unmarshal(meta.Spec, &old) != nil || old.Spec == nil || len(old.Spec.FedBE) == 0 {
		return false
	}
	_, ok := roundsRules[old.Method]
	return ok
}

// RefuseOldRounds returns an error naming the first run directory directly under dir that the
// former multi-round runner wrote (isOldRoundsRun), saying why it cannot be read as, or resumed by,
// an engine run; nil when there is none or dir does not exist. Run and CheckData refuse such a
// results directory with it before they write anything; a reader of results directories calls it
// itself.
func RefuseOldRounds(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	for _, e := range entries {
		rd := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if !results.HasRun(rd) {
			continue
		}
		meta, err := results.ReadMeta(rd)
		if err != nil {
			continue // not ours to judge: the loaders report unreadable runs
		}
		if isOldRoundsRun(meta) {
			return fmt.Errorf("engine: %s was written by the former multi-round FedBE runner (fedbayes fedbe before "+
				"it ran through the engine): its data split, initial model and local epochs differ from the engine's, "+
				"so it is neither read nor resumed as an engine run; move it away or choose another results directory", rd)
		}
	}
	return nil
}
