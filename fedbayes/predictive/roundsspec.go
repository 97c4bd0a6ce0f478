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
	// Name prefixes the settings (results directories NAME-METHOD-seedS); default "fedbe".
	Name string `json:"name,omitempty"`
	// Dataset is a classification data.Load name (fashion-mnist, digits, ...).
	Dataset string `json:"dataset"`
	// DataDir is the data folder; empty means data.Dir().
	DataDir string `json:"data_dir,omitempty"`
	// Subsample keeps this many training examples (seeded, class-stratified); 0 keeps all.
	Subsample int `json:"subsample,omitempty"`
	// TestSubsample keeps this many test examples; 0 keeps all.
	TestSubsample int `json:"test_subsample,omitempty"`
	// ServerFraction is the share of the training set kept, unlabeled, for the server (default 0.2).
	ServerFraction float64 `json:"server_fraction,omitempty"`
	// Clients is the number of clients, all active every round (default 10, Chen & Chao).
	Clients int `json:"clients,omitempty"`
	// Alpha is the concentration of the clients' Dirichlet label skew (partition.Dirichlet; default
	// 0.1, a strong skew; the poster does not state its value).
	Alpha float64 `json:"alpha,omitempty"`
	// Hidden are the MLP's hidden widths (default [100]).
	Hidden []int `json:"hidden,omitempty"`
	// Rounds is the number of communication rounds (default 40, Chen & Chao).
	Rounds int `json:"rounds,omitempty"`
	// Seeds lists the seeds (default [1, 2, 3]).
	Seeds []int64 `json:"seeds,omitempty"`
	// Methods lists the methods (default RoundsMethods).
	Methods []string `json:"methods,omitempty"`
	// Local is the clients' training in every round (default: LocalConfig's, with 20 epochs as in
	// Chen & Chao); its seed is set per run.
	Local LocalConfig `json:"local"`
	// FedBE is the server side of the FedBE methods: Samples (M), the Dirichlet Alpha and Distill.
	// Its Distribution, Rounds, Local and Seed are set per method and run.
	FedBE FedBEConfig `json:"fedbe"`
	// Budget says whether the spec runs the paper's budget ("full") or how it was reduced; it is
	// recorded with every run. Empty means unstated.
	Budget string `json:"budget,omitempty"`
}

// ParseRoundsSpec reads a JSON rounds spec; unknown fields are errors.
func ParseRoundsSpec(b []byte) (RoundsSpec, error) { return decodeStrict[RoundsSpec](b, "rounds spec") }

// LoadRoundsSpec reads a JSON rounds spec file.
func LoadRoundsSpec(path string) (RoundsSpec, error) {
	return loadStrict[RoundsSpec](path, "rounds spec")
}

// WithDefaults fills zero fields with their defaults.
func (s RoundsSpec) WithDefaults() RoundsSpec {
	if s.Name == "" {
		s.Name = "fedbe"
	}
	if s.ServerFraction == 0 {
		s.ServerFraction = 0.2
	}
	if s.Clients == 0 {
		s.Clients = 10
	}
	if s.Alpha == 0 {
		s.Alpha = 0.1
	}
	if s.Hidden == nil {
		s.Hidden = []int{100}
	}
	if s.Rounds == 0 {
		s.Rounds = 40
	}
	if s.Seeds == nil {
		s.Seeds = []int64{1, 2, 3}
	}
	if s.Methods == nil {
		s.Methods = append([]string(nil), RoundsMethods...)
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
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("predictive: rounds spec field %s = %v: %s", field, v, want)
	}
	switch {
	case s.Dataset == "":
		return bad("dataset", `""`, "name a classification dataset (fashion-mnist, digits, ...)")
	case regressionSets[s.Dataset] || strings.HasPrefix(s.Dataset, "csv:"):
		return bad("dataset", s.Dataset, "FedBE distils class probabilities: want a classification dataset")
	case !(s.ServerFraction > 0 && s.ServerFraction < 1):
		return bad("server_fraction", s.ServerFraction, "want in (0, 1)")
	case s.Clients < 2:
		return bad("clients", s.Clients, "want at least 2")
	case !(s.Alpha > 0) || math.IsInf(s.Alpha, 0):
		return bad("alpha", s.Alpha, "want a positive, finite concentration")
	case s.Rounds < 1:
		return bad("rounds", s.Rounds, "want at least 1")
	case len(s.Seeds) == 0:
		return bad("seeds", s.Seeds, "want at least one seed")
	case s.Subsample < 0:
		return bad("subsample", s.Subsample, "want a non-negative size")
	case s.TestSubsample < 0:
		return bad("test_subsample", s.TestSubsample, "want a non-negative size")
	case s.Local.Epochs < 1 || s.Local.BatchSize < 1 || !(s.Local.LearningRate > 0):
		return bad("local", fmt.Sprintf("epochs %d, batch size %d, learning rate %v", s.Local.Epochs, s.Local.BatchSize, s.Local.LearningRate), "want positive values")
	case s.FedBE.Samples < 1:
		return bad("fedbe.samples", s.FedBE.Samples, "want at least 1")
	case !(s.FedBE.Alpha > 0) || math.IsInf(s.FedBE.Alpha, 0):
		return bad("fedbe.alpha", s.FedBE.Alpha, "want a positive, finite concentration")
	case len(s.Methods) == 0:
		return bad("methods", s.Methods, "want at least one method")
	}
	for _, h := range s.Hidden {
		if h < 1 {
			return bad("hidden", s.Hidden, "want positive widths")
		}
	}
	seen := map[string]bool{}
	for _, m := range s.Methods {
		if !contains(RoundsMethods, m) {
			return bad("methods", m, "want one of "+strings.Join(RoundsMethods, ", "))
		}
		if seen[m] {
			return bad("methods", m, "listed twice")
		}
		seen[m] = true
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
	"fedbe-fmnist-fast": {Name: "fedbe-fmnist-fast", Dataset: "fashion-mnist", Subsample: 6000, TestSubsample: 2000,
		Budget: "reduced: 6,000 training (1,200 of them the server's) / 2,000 test examples, T=10 rounds, E=2 local epochs, " +
			"M=5 sampled models, 4 distillation epochs, 2 seeds (paper: CIFAR-10, T=40, E=20, 10K server examples, M=10)",
		Rounds: 10, Seeds: []int64{1, 2},
		Local: LocalConfig{Epochs: 2, BatchSize: 32, LearningRate: 0.05},
		FedBE: FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 4, BatchSize: 32, SWACycles: 4}}},
	"fedbe-fmnist-medium": {Name: "fedbe-fmnist-medium", Dataset: "fashion-mnist", Subsample: 20000,
		Budget: "medium: 20,000 training (4,000 of them the server's) / all 10,000 test examples, T=20 rounds, E=5 local epochs, " +
			"M=10 sampled models, 10 distillation epochs, 3 seeds (paper: CIFAR-10, T=40, E=20, 10K server examples, M=10)",
		Rounds: 20, Seeds: []int64{1, 2, 3},
		Local: LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE: FedBEConfig{Samples: 10, Distill: DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 5}}},
	"fedbe-fmnist-full": {Name: "fedbe-fmnist-full", Dataset: "fashion-mnist",
		Budget: "full (Chen & Chao's 10 clients, T=40 rounds, E=20 local epochs, M=10, 3 seeds; Fashion-MNIST and an MLP instead of CIFAR-10 and a ConvNet)",
		Local:  LocalConfig{BatchSize: 32, LearningRate: 0.05},
		FedBE:  FedBEConfig{Distill: DistillConfig{Epochs: 20, BatchSize: 32}}},
	"fedbe-digits-fast": {Name: "fedbe-digits-fast", Dataset: "digits", Hidden: []int{32},
		Budget: "reduced: scikit-learn digits, 32 hidden units, T=5 rounds, E=5 local epochs, 2 seeds",
		Rounds: 5, Seeds: []int64{1, 2}, Alpha: 0.3,
		Local: LocalConfig{Epochs: 5, BatchSize: 32, LearningRate: 0.05},
		FedBE: FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 2}}},
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
