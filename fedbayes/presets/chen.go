package presets

import (
	"fmt"
	"maps"
	"slices"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/internal/words"
	"fedbayes.dev/fedbayes/models"
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
func ChenSpec(s *engine.Spec, fedbe predictive.FedBEConfig) *engine.Spec {
	s.Dataset.ServerFraction = 0.2
	s.Partition.Method, s.Partition.MinSize = "dirichlet", partition.DefaultDirichletMinSize
	if s.Partition.Clients == 0 {
		s.Partition.Clients = 10
	}
	if s.Partition.Alpha == 0 {
		s.Partition.Alpha = 0.1
	}
	s.Model.Arch, s.Model.Kind = models.ArchMLP, models.Deterministic
	if s.Model.Hidden == nil {
		s.Model.Hidden = []int{100}
	}
	s.Aggregation = engine.AggregationSpec{Rule: "FedAvg", Weighting: "size"}
	rounds, epochs := s.Training.Rounds, s.Training.LocalEpochs
	if rounds == 0 {
		rounds = 40
	}
	if epochs == 0 {
		epochs = 20
	}
	local := predictive.LocalConfig{Optimizer: s.Training.Optimizer, LearningRate: s.Training.LearningRate,
		Momentum: s.Training.Momentum, Epochs: epochs, BatchSize: s.Training.BatchSize}.WithDefaults()
	s.Training = engine.TrainingSpec{Rounds: rounds, LocalEpochs: local.Epochs, BatchSize: local.BatchSize, Optimizer: local.Optimizer,
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
			"aggregation.options", strategy.FedBEOptions{Samples: fedbe.Samples, Alpha: fedbe.Alpha, Temperature: fedbe.Temperature, Distill: fedbe.Distill}))
	}
	return s
}

// chenCut is ChenSpec(s, fedbe) at a cut of Chen & Chao's budget, stated from the spec's own fields
// beside the paper's: "medium: 20,000 (4,000 the server's) training / all test examples, T=20 rounds,
// E=5 local epochs, 5 seeds, M=10 (paper: ...)".
func chenCut(label string, s *engine.Spec, fedbe predictive.FedBEConfig) *engine.Spec {
	c := ChenSpec(s, fedbe)
	examples := func(n int) string {
		if n <= 0 {
			return "all"
		}
		return words.Thousands(n)
	}
	train := examples(c.Dataset.Subsample)
	if n := c.Dataset.Subsample; n > 0 {
		train += fmt.Sprintf(" (%s the server's)", words.Thousands(int(float64(n)*c.Dataset.ServerFraction)))
	}
	c.Budget = fmt.Sprintf("%s: %s training / %s test examples, T=%d rounds, E=%d local epochs, %d seeds, M=%d (%s)",
		label, train, examples(c.Dataset.TestSubsample), c.Training.Rounds, c.Training.LocalEpochs, len(c.Seeds),
		fedbe.WithDefaults().Samples, chenPaperBudget)
	return c
}

// ChenServer is FedBE's server step with M = samples as Chen & Chao's code runs it (hongyouc/FedBE:
// models/Update.py, ServerUpdate; utils/tools.py; utils/options.py): the teachers' averaged
// probabilities sharpened with temperature 0.5 (--temp, temp_sharpen); SGD with momentum 0.9 at
// 1e-3 (set_opt) on a KL loss averaged over the classes as well as the batch, which with the 10
// classes of Fashion-MNIST and digits is 1e-4 on the cross-entropy averaged over the batch that
// predictive.Distill minimises; batch 128 (--server_bs);
// 20 epochs (--server_ep); SWA at that constant step (swa_lr None), averaged here at the end of
// every epoch where the code averages every 25 steps from step 500. Not carried over: the code's
// weight decay of 1e-5; and predictive.Distill draws a label per example and epoch from the
// sharpened probabilities, whose expected gradient is the KL loss's. On a small server set (1,200
// examples in fedbe-fmnist-fast, about 360 in fedbe-digits-fast: 200 and 60 steps) the student
// stays near FedAvg's mean.
func ChenServer(samples int) predictive.FedBEConfig {
	const lr = 1e-4
	return predictive.FedBEConfig{Samples: samples, Temperature: 0.5, Distill: predictive.DistillConfig{
		Optimizer: "sgd", LearningRate: lr, Momentum: 0.9, Epochs: 20, BatchSize: 128, SWACycles: 20, SWAMinLR: lr}}
}

// chenPresets are the multi-round FedBE experiments of Chen & Chao on an MLP: fedbe-fmnist-fast and
// fedbe-digits-fast finish in minutes on two cores, fedbe-fmnist-medium in about an hour, and
// fedbe-fmnist-full runs the paper's rounds, local epochs and client count on all of Fashion-MNIST
// (hours on the pure-Go backend).
var chenPresets = map[string]func() *engine.Spec{
	"fedbe-fmnist-fast": func() *engine.Spec {
		return chenCut("reduced", &engine.Spec{
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist", Subsample: 6000, TestSubsample: 2000},
			Training: engine.TrainingSpec{Rounds: 10, LocalEpochs: 2, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2}},
			ChenServer(5))
	},
	"fedbe-fmnist-medium": func() *engine.Spec {
		return chenCut("medium", &engine.Spec{
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist", Subsample: 20000},
			Training: engine.TrainingSpec{Rounds: 20, LocalEpochs: 5, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2, 3, 4, 5}},
			ChenServer(10))
	},
	"fedbe-fmnist-full": func() *engine.Spec {
		return ChenSpec(&engine.Spec{Budget: "full (Chen & Chao's 10 clients, T=40 rounds, E=20 local epochs, M=10, 3 seeds; Fashion-MNIST and an MLP instead of CIFAR-10 and a ConvNet)",
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist"},
			Training: engine.TrainingSpec{BatchSize: 32, LearningRate: 0.05}},
			ChenServer(10))
	},
	"fedbe-digits-fast": func() *engine.Spec {
		return ChenSpec(&engine.Spec{Budget: "reduced (scikit-learn digits, 32 hidden units)",
			Dataset:   engine.DatasetSpec{Name: "digits"},
			Partition: engine.PartitionSpec{Alpha: 0.3},
			Model:     engine.ModelSpec{Hidden: []int{32}},
			Training:  engine.TrainingSpec{Rounds: 5, LocalEpochs: 5, BatchSize: 32, LearningRate: 0.05},
			Seeds:     []int64{1, 2}},
			ChenServer(5))
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

// chenLeNet is Chen & Chao's non-IID setting (FedBE, Alg. 1 and the non-IID table: 10 clients, all
// active, a Dirichlet(0.1) label skew, 20% of the training set kept, unlabelled, for the server; T=40
// rounds of E=20 local epochs; M=10 sampled models) with a LeNet on Fashion-MNIST for their ConvNet on
// CIFAR-10. Every server strategy runs on the same clients, so one table compares them: FedAvg and
// FedBE's three forms on a deterministic LeNet, as in the paper, and GAA, FedBE, the BCM and
// beta-PredBayes (Hasan (2023)) on a Bayesian LeNet with variational dense layers.
func chenLeNet() *engine.Spec {
	fedbe := strategy.FedBEOptions{Samples: 10}
	det := func(label, rule string, withServer bool) engine.Variant {
		if withServer {
			return variant(label, "model.kind", "deterministic", "aggregation.rule", rule, "aggregation.options", fedbe)
		}
		return variant(label, "model.kind", "deterministic", "aggregation.rule", rule)
	}
	// The Bayesian LeNet has variational dense layers on deterministic convolutions, as Ozer et al.
	// (2022)'s.
	bayes := func(label, rule string, withServer bool) engine.Variant {
		if withServer {
			return variant(label, "aggregation.rule", rule, "aggregation.options", fedbe, "model.bayesian_layers", 3)
		}
		return variant(label, "aggregation.rule", rule, "model.bayesian_layers", 3)
	}
	return &engine.Spec{
		Dataset:     engine.DatasetSpec{Name: "fashion-mnist", ServerFraction: 0.2},
		Partition:   engine.PartitionSpec{Method: "dirichlet", Clients: 10, Alpha: 0.1, MinSize: 10},
		Model:       engine.ModelSpec{Arch: models.ArchLeNet, Kind: models.Bayesian},
		Aggregation: engine.AggregationSpec{Rule: "GAA", Weighting: "size"},
		Training:    engine.TrainingSpec{Rounds: 40, LocalEpochs: 20, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.01, Momentum: 0.9},
		Evaluation:  engine.EvaluationSpec{Samples: 10},
		Seeds:       []int64{1, 2, 3},
		Variants: []engine.Variant{
			det("FedAvg", "FedAvg", false),
			det("FedBE", "fedbe-gaussian", true),
			det("FedBE-Dirichlet", "fedbe-dirichlet", true),
			det("FedBE-noSWA", "fedbe-gaussian-no-swa", true),
			bayes("B-GAA", "GAA", false),
			bayes("B-FedBE", "fedbe-gaussian", true),
			bayes("B-BCM", "bcm", false),
			bayes("B-beta-PredBayes", "beta-predbayes", false),
		},
	}
}

func init() {
	addPaperPreset("chen-lenet-dirichlet",
		"Chen & Chao (FedBE) non-IID setting on one engine: LeNet on fashion-mnist, 10 clients, Dirichlet(0.1), 20% server set: "+
			"FedAvg and FedBE (Gaussian, Dirichlet, w/o SWA), Bayesian GAA, FedBE, BCM and beta-PredBayes on the same clients",
		chenLeNet,
		func(s *engine.Spec) *engine.Spec { return reduce(s, 6000, 2000, 5, 1, []int64{1, 2}, 1) })
}
