package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// preset is a named spec and what it reproduces.
type preset struct {
	about string
	spec  func() *Spec
}

// raws turns values into a sweep list.
func raws(values ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err) // constants only
		}
		out[i] = b
	}
	return out
}

// ozer10 is the 10-client Fashion-MNIST setting of Ozer et al. (2022), Sec. 5 and Table 1: all 10
// clients active every round, LeNet-style CNN whose three dense layers are variational (local
// reparameterisation, log-variance parameterisation, N(0, 1) prior), SGD with lr 0.01, momentum 0.9 and
// weight decay 1e-5, E = 10 local epochs, T = 50 rounds, seeds 0 to 4, FVBA (equal) and FVBWA (size)
// weighting, the rules EAA, GAA, AALV, PPA and CF, IID and Dirichlet non-IID partitions. The batch size
// is not stated in the paper; 64 is the default of the NIID-Bench pipeline (Li et al. 2022) it follows,
// and the Dirichlet concentration is NIID-Bench's 0.5.
func ozer10() *Spec {
	return &Spec{
		Name:      "ozer2022-fmnist10",
		Dataset:   DatasetSpec{Name: "fashion-mnist"},
		Partition: PartitionSpec{Method: "iid", Clients: 10, Participation: 1},
		Model: ModelSpec{Arch: "lenet", Kind: "bayesian", BayesianLayers: 3, Estimator: "local", VarParam: "logvar",
			PriorStd: 1},
		Aggregation: AggregationSpec{Rule: "GAA", Weighting: "equal"},
		Training: TrainingSpec{Rounds: 50, LocalEpochs: 10, BatchSize: 64, Optimizer: "sgd", LearningRate: 0.01,
			Momentum: 0.9, WeightDecay: 1e-5, Prior: "fixed"},
		Evaluation: EvaluationSpec{Every: 1, Samples: 10, Bins: 15, Fairness: "local"},
		Seeds:      []int64{0, 1, 2, 3, 4},
		Sweep: map[string][]json.RawMessage{
			"aggregation.rule":      raws("EAA", "GAA", "AALV", "PPA", "CF"),
			"aggregation.weighting": raws("equal", "size"),
		},
	}
}

var presets = map[string]preset{
	"ozer2022-fmnist10": {
		about: "Ozer et al. (2022) Table 1, FMNIST, 10 clients, IID: 5 rules x 2 weightings, T=50, E=10, 5 seeds (paper budget)",
		spec:  ozer10,
	},
	"ozer2022-fmnist10-dirichlet": {
		about: "as ozer2022-fmnist10 with the Dirichlet(0.5) non-IID partition",
		spec: func() *Spec {
			s := ozer10()
			s.Name = "ozer2022-fmnist10-dir"
			s.Partition.Method, s.Partition.Alpha, s.Partition.MinSize = "dirichlet", 0.5, 10
			return s
		},
	},
	"ozer2022-fmnist10-fedavg": {
		about: "the deterministic FedAvg baseline (FEDAVG row) of Ozer et al. (2022) Table 1 at the paper budget",
		spec: func() *Spec {
			s := ozer10()
			s.Name = "ozer2022-fmnist10-fedavg"
			s.Model = ModelSpec{Arch: "lenet", Kind: "deterministic"}
			s.Aggregation = AggregationSpec{Rule: "FedAvg", Weighting: "size"}
			s.Evaluation.Samples = 1
			s.Sweep = nil
			return s
		},
	},
	"ozer2022-fmnist10-reduced": {
		about: "ozer2022-fmnist10 on a reduced budget for 2 CPU cores: 6,000 training and 2,000 test images, T=5, E=1, seeds 0-1",
		spec: func() *Spec {
			s := ozer10()
			s.Name = "ozer2022-fmnist10-reduced"
			s.Dataset.Subsample, s.Dataset.TestSubsample = 6000, 2000
			s.Training.Rounds, s.Training.LocalEpochs = 5, 1
			s.Seeds = []int64{0, 1}
			return s
		},
	},
	"quick-digits": {
		about: "a 30-second check: scikit-learn digits, 5 clients, Bayesian MLP, GAA, 3 rounds",
		spec: func() *Spec {
			return &Spec{
				Name:        "quick-digits",
				Dataset:     DatasetSpec{Name: "digits"},
				Partition:   PartitionSpec{Method: "iid", Clients: 5},
				Model:       ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{32}},
				Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
				Training:    TrainingSpec{Rounds: 3, LocalEpochs: 2, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9},
				Evaluation:  EvaluationSpec{Samples: 5},
				Seeds:       []int64{0},
			}
		},
	},
}

// Preset returns a copy of the named preset spec. PresetNames lists the names.
func Preset(name string) (*Spec, error) {
	p, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("engine: unknown preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
	}
	return p.spec(), nil
}

// PresetNames lists the preset names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PresetAbout says what a preset reproduces ("" for an unknown name).
func PresetAbout(name string) string { return presets[name].about }

// Fast returns a copy of s reduced for a quick look (fedbayes run --fast): at most 3 rounds of one local
// epoch, at most 3,000 training and 1,000 test examples, the first seed only, fairness on at most 50
// examples per client, and pre-training of at most 5 epochs. The name gets a "-fast" suffix.
func Fast(s *Spec) *Spec {
	c := s.Clone()
	c.Name = strings.TrimSuffix(c.WithDefaults().Name, "-fast") + "-fast"
	if c.Training.Rounds == 0 || c.Training.Rounds > 3 {
		c.Training.Rounds = 3
	}
	c.Training.LocalEpochs = 1
	if c.Dataset.Subsample == 0 || c.Dataset.Subsample > 3000 {
		c.Dataset.Subsample = 3000
	}
	if c.Dataset.TestSubsample == 0 || c.Dataset.TestSubsample > 1000 {
		c.Dataset.TestSubsample = 1000
	}
	if len(c.Seeds) > 1 {
		c.Seeds = c.Seeds[:1]
	}
	if c.Evaluation.FairnessExamples == 0 || c.Evaluation.FairnessExamples > 50 {
		c.Evaluation.FairnessExamples = 50
	}
	if p := c.Aggregation.Pretrain; p != nil && (p.Epochs == 0 || p.Epochs > 5) {
		p.Epochs = 5
	}
	return c
}
