package engine

import (
	"fmt"
	"maps"
	"slices"

	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// ChenMethods are the variant labels of Chen & Chao's presets, in table order: FedAvg and FedBE's
// three forms. Each label is its strategy's registry name (Method).
var ChenMethods = []string{"fedavg", strategy.FedBEGaussian, strategy.FedBEDirichlet, strategy.FedBENoSWA}

// chenPaperBudget is what the FedBE presets cut from Chen & Chao's non-IID CIFAR-10 table.
const chenPaperBudget = "paper: CIFAR-10 and a ConvNet, T=40, E=20, 10K server examples, M=10"

// ChenSpec completes s as one of Chen & Chao's multi-round FedBE experiments (FedBE, Alg. 1 and the
// non-IID table) on an MLP, from what s gives (dataset, its subsets, the clients and their Dirichlet
// concentration, hidden widths, rounds, local training, seeds, name, budget) and FedBE's server
// options fedbe (M, the Dirichlet distribution's concentration, the distillation; zero fields take
// predictive.FedBEConfig's defaults): 20% of the training set kept for the server, 10 clients unless
// given, all active every round, with a Dirichlet label skew (default alpha 0.1, min_size
// partition.DefaultDirichletMinSize), a deterministic MLP (100 hidden units unless given), 40 rounds
// of 20 local epochs unless given (predictive.LocalConfig's defaults otherwise), and one variant per
// method (ChenMethods): FedAvg with size weights, and the FedBE strategies with fedbe's options, all
// on the same clients from the same initial model. The fedbe-* presets and notebook 05 are built with
// it.
func ChenSpec(s *Spec, fedbe predictive.FedBEConfig) *Spec {
	s.Dataset.ServerFraction = 0.2
	s.Partition.Method, s.Partition.MinSize = "dirichlet", partition.DefaultDirichletMinSize
	if s.Partition.Clients == 0 {
		s.Partition.Clients = 10
	}
	if s.Partition.Alpha == 0 {
		s.Partition.Alpha = 0.1
	}
	s.Model.Arch, s.Model.Kind = "mlp", "deterministic"
	if s.Model.Hidden == nil {
		s.Model.Hidden = []int{100}
	}
	s.Aggregation = AggregationSpec{Rule: "FedAvg", Weighting: "size"}
	rounds, epochs := s.Training.Rounds, s.Training.LocalEpochs
	if rounds == 0 {
		rounds = 40
	}
	if epochs == 0 {
		epochs = 20
	}
	local := predictive.LocalConfig{Optimizer: s.Training.Optimizer, LearningRate: s.Training.LearningRate,
		Momentum: s.Training.Momentum, Epochs: epochs, BatchSize: s.Training.BatchSize}.WithDefaults()
	s.Training = TrainingSpec{Rounds: rounds, LocalEpochs: local.Epochs, BatchSize: local.BatchSize, Optimizer: local.Optimizer,
		LearningRate: local.LearningRate, Momentum: local.Momentum}
	if s.Seeds == nil {
		s.Seeds = []int64{1, 2, 3}
	}
	fedbe = fedbe.WithDefaults()
	for _, m := range ChenMethods {
		if m == "fedavg" {
			s.Variants = append(s.Variants, variant(m, "aggregation.rule", "FedAvg"))
			continue
		}
		s.Variants = append(s.Variants, variant(m, "aggregation.rule", m,
			"aggregation.options", strategy.FedBEOptions{Samples: fedbe.Samples, Alpha: fedbe.Alpha, Distill: fedbe.Distill}))
	}
	return s
}

// chenPresets are the multi-round FedBE experiments of Chen & Chao on an MLP: fedbe-fmnist-fast and
// fedbe-digits-fast finish in minutes on two cores, fedbe-fmnist-medium in about an hour, and
// fedbe-fmnist-full runs the paper's rounds, local epochs and client count on all of Fashion-MNIST
// (hours on the pure-Go backend).
var chenPresets = map[string]func() *Spec{
	"fedbe-fmnist-fast": func() *Spec {
		return ChenSpec(&Spec{Budget: "reduced (" + chenPaperBudget + ")",
			Dataset:  DatasetSpec{Name: "fashion-mnist", Subsample: 6000, TestSubsample: 2000},
			Training: TrainingSpec{Rounds: 10, LocalEpochs: 2, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2}},
			predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 4, BatchSize: 32, SWACycles: 4}})
	},
	"fedbe-fmnist-medium": func() *Spec {
		return ChenSpec(&Spec{Budget: "medium (" + chenPaperBudget + ")",
			Dataset:  DatasetSpec{Name: "fashion-mnist", Subsample: 20000},
			Training: TrainingSpec{Rounds: 20, LocalEpochs: 5, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2, 3, 4, 5}},
			predictive.FedBEConfig{Samples: 10, Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 5}})
	},
	"fedbe-fmnist-full": func() *Spec {
		return ChenSpec(&Spec{Budget: "full (Chen & Chao's 10 clients, T=40 rounds, E=20 local epochs, M=10, 3 seeds; Fashion-MNIST and an MLP instead of CIFAR-10 and a ConvNet)",
			Dataset:  DatasetSpec{Name: "fashion-mnist"},
			Training: TrainingSpec{BatchSize: 32, LearningRate: 0.05}},
			predictive.FedBEConfig{Distill: predictive.DistillConfig{Epochs: 20, BatchSize: 32}})
	},
	"fedbe-digits-fast": func() *Spec {
		return ChenSpec(&Spec{Budget: "reduced (scikit-learn digits, 32 hidden units)",
			Dataset:   DatasetSpec{Name: "digits"},
			Partition: PartitionSpec{Alpha: 0.3},
			Model:     ModelSpec{Hidden: []int{32}},
			Training:  TrainingSpec{Rounds: 5, LocalEpochs: 5, BatchSize: 32, LearningRate: 0.05},
			Seeds:     []int64{1, 2}},
			predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 32, SWACycles: 2}})
	},
}

func init() {
	for name, build := range chenPresets {
		s := build()
		addPaperPreset(name, "Chen & Chao (FedBE) non-IID table on an MLP: "+s.Dataset.Name+", 10 clients, Dirichlet("+
			fmt.Sprint(s.Partition.Alpha)+"), 20% server set: FedAvg and FedBE (Gaussian, Dirichlet, w/o SWA)", build, nil)
	}
}

// ChenPresetNames lists the multi-round FedBE presets (Chen & Chao on an MLP; what `fedbayes fedbe`
// runs), sorted.
func ChenPresetNames() []string { return slices.Sorted(maps.Keys(chenPresets)) }
