package predictive

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// The multi-round methods of a RoundsSpec: FedAvg and FedBE's variants in Chen & Chao's table.
const (
	// RoundsFedAvg is FedAvg (the size-weighted mean of the clients every round).
	RoundsFedAvg = "fedavg"
	// RoundsFedBEGaussian is FedBE with a diagonal Gaussian global model distribution and SWA
	// distillation (Chen & Chao's main method).
	RoundsFedBEGaussian = "fedbe-gaussian"
	// RoundsFedBEDirichlet is FedBE with a Dirichlet distribution over convex combinations of the
	// clients.
	RoundsFedBEDirichlet = "fedbe-dirichlet"
	// RoundsFedBENoSWA is FedBE (Gaussian) keeping the last weights of a single decaying cycle
	// instead of averaging cycle ends: Chen & Chao's "FedBE (w/o SWA)".
	RoundsFedBENoSWA = "fedbe-gaussian-no-swa"
)

// RoundsMethods lists the multi-round methods in table order.
var RoundsMethods = []string{RoundsFedAvg, RoundsFedBEGaussian, RoundsFedBEDirichlet, RoundsFedBENoSWA}

// RoundsSpec is a multi-round experiment of Chen & Chao (FedBE, Alg. 1 and the non-IID table):
// 20% of the training set is the server's unlabeled set, the rest is split among the clients with
// a Dirichlet label skew, and every method runs the same rounds from the same initial model with the
// same clients and local training; only the server step differs. JSON field names are snake_case;
// unknown fields are errors (ParseRoundsSpec).
type RoundsSpec struct {
	// Setup holds the data, server fraction, clients (default 10, all active every round), MLP,
	// seeds, methods and budget.
	Setup
	// Alpha is the concentration of the clients' Dirichlet label skew (partition.Dirichlet; default
	// 0.1, a strong skew; the poster does not state its value).
	Alpha float64 `json:"alpha,omitempty"`
	// Rounds is the number of communication rounds (default 40, Chen & Chao).
	Rounds int `json:"rounds,omitempty"`
	// Local is the clients' training in every round (default: LocalConfig's, with 20 epochs as in
	// Chen & Chao); its seed is set per run.
	Local LocalConfig `json:"local"`
	// FedBE is the server side of the FedBE methods: Samples (M), the Dirichlet Alpha and Distill.
	// Its Distribution, Rounds, Local and Seed are set per method and run.
	FedBE FedBEConfig `json:"fedbe"`
}

// ParseRoundsSpec reads a JSON rounds spec; unknown fields are errors.
func ParseRoundsSpec(b []byte) (RoundsSpec, error) { return decodeStrict[RoundsSpec](b, "rounds spec") }

// LoadRoundsSpec reads a JSON rounds spec file.
func LoadRoundsSpec(path string) (RoundsSpec, error) {
	return loadStrict[RoundsSpec](path, "rounds spec")
}

// WithDefaults fills zero fields with their defaults.
func (s RoundsSpec) WithDefaults() RoundsSpec {
	s.Setup = s.Setup.withDefaults("fedbe", 10, RoundsMethods)
	if s.Alpha == 0 {
		s.Alpha = 0.1
	}
	if s.Rounds == 0 {
		s.Rounds = 40
	}
	if s.Local.Epochs == 0 {
		s.Local.Epochs = 20
	}
	s.Local = s.Local.WithDefaults()
	s.FedBE.Rounds, s.FedBE.Local = 0, LocalConfig{}
	s.FedBE = s.FedBE.WithDefaults()
	s.FedBE.Rounds, s.FedBE.Local = s.Rounds, s.Local
	return s
}

// Validate reports the first invalid field by its JSON name.
func (s RoundsSpec) Validate() error {
	bad := badField("rounds spec")
	if err := s.Setup.validate(bad, RoundsMethods); err != nil {
		return err
	}
	switch {
	case regressionSets[s.Dataset] || strings.HasPrefix(s.Dataset, "csv:"):
		return bad("dataset", s.Dataset, "FedBE distils class probabilities: want a classification dataset")
	case !(s.Alpha > 0) || math.IsInf(s.Alpha, 0):
		return bad("alpha", s.Alpha, "want a positive, finite concentration")
	case s.Rounds < 1:
		return bad("rounds", s.Rounds, "want at least 1")
	case s.Local.Epochs < 1 || s.Local.BatchSize < 1 || !(s.Local.LearningRate > 0):
		return bad("local", fmt.Sprintf("epochs %d, batch size %d, learning rate %v", s.Local.Epochs, s.Local.BatchSize, s.Local.LearningRate), "want positive values")
	case s.FedBE.Samples < 1:
		return bad("fedbe.samples", s.FedBE.Samples, "want at least 1")
	case !(s.FedBE.Alpha > 0) || math.IsInf(s.FedBE.Alpha, 0):
		return bad("fedbe.alpha", s.FedBE.Alpha, "want a positive, finite concentration")
	}
	return nil
}

// fedbeConfig is the FedBE configuration of a method for one seed (the zero config for FedAvg).
func (s RoundsSpec) fedbeConfig(method string, seed int64) (FedBEConfig, bool) {
	fc := s.FedBE
	fc.Seed = seed*1009 + 3
	fc.Local.Seed = seed
	switch method {
	case RoundsFedBEGaussian:
		fc.Distribution = "gaussian"
	case RoundsFedBEDirichlet:
		fc.Distribution = "dirichlet"
	case RoundsFedBENoSWA:
		fc.Distribution = "gaussian"
		fc.Distill.SWACycles = 1
	default:
		return FedBEConfig{}, false
	}
	return fc, true
}

// RoundsPresets are named multi-round specs: NAME-fast finishes in minutes on two cores,
// fedbe-fmnist-full runs Chen & Chao's rounds, local epochs and client count on all of
// Fashion-MNIST (hours on the pure-Go backend).
var RoundsPresets = map[string]RoundsSpec{
	"fedbe-fmnist-fast": {
		Setup: Setup{Name: "fedbe-fmnist-fast", Dataset: "fashion-mnist", Subsample: 6000, TestSubsample: 2000, Budget: "reduced: 6,000 training (1,200 of them the server's) / 2,000 test examples, T=10 rounds, E=2 local epochs, " +
			"M=5 sampled models, 4 distillation epochs, 2 seeds (paper: CIFAR-10, T=40, E=20, 10K server examples, M=10)", Seeds: []int64{1, 2}},
		Rounds: 10,
		Local:  LocalConfig{Epochs: 2, BatchSize: 32, LearningRate: 0.05},
		FedBE:  FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 4, BatchSize: 32, SWACycles: 4}},
	},
	"fedbe-fmnist-medium": {
		Setup: Setup{Name: "fedbe-fmnist-medium", Dataset: "fashion-mnist", Subsample: 20000, Budget: "medium: 20,000 training (4,000 of them the server's) / all 10,000 test examples, T=20 rounds, E=5 local epochs, " +
			"M=10 sampled models, 10 distillation epochs, 3 seeds (paper: CIFAR-10, T=40, E=20, 10K server examples, M=10)", Seeds: []int64{1, 2, 3}},
		Rounds: 20,
		Local:  LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE:  FedBEConfig{Samples: 10, Distill: DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 5}},
	},
	"fedbe-fmnist-full": {
		Setup: Setup{Name: "fedbe-fmnist-full", Dataset: "fashion-mnist", Budget: "full (Chen & Chao's 10 clients, T=40 rounds, E=20 local epochs, M=10, 3 seeds; Fashion-MNIST and an MLP instead of CIFAR-10 and a ConvNet)"},
		Local: LocalConfig{BatchSize: 32, LearningRate: 0.05},
		FedBE: FedBEConfig{Distill: DistillConfig{Epochs: 20, BatchSize: 32}},
	},
	"fedbe-digits-fast": {
		Setup:  Setup{Name: "fedbe-digits-fast", Dataset: "digits", Hidden: []int{32}, Budget: "reduced: scikit-learn digits, 32 hidden units, T=5 rounds, E=5 local epochs, 2 seeds", Seeds: []int64{1, 2}},
		Rounds: 5,
		Alpha:  0.3,
		Local:  LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE:  FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 2}},
	},
}

// RoundsPresetNames lists the multi-round presets, sorted.
func RoundsPresetNames() []string {
	var out []string
	for n := range RoundsPresets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// RoundsPreset returns a copy of the named multi-round preset.
func RoundsPreset(name string) (RoundsSpec, error) {
	s, ok := RoundsPresets[name]
	if !ok {
		return RoundsSpec{}, fmt.Errorf("predictive: unknown rounds preset %q; presets: %s", name, strings.Join(RoundsPresetNames(), ", "))
	}
	return s, nil
}
