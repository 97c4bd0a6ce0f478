package engine

import (
	"encoding/json"
	"fedbayes.dev/fedbayes/strategy"

	"fedbayes.dev/fedbayes/predictive"
)

// chenLeNet is Chen & Chao's non-IID setting (FedBE, Alg. 1 and the non-IID table: 10 clients, all
// active, a Dirichlet(0.1) label skew, 20% of the training set kept, unlabelled, for the server; T=40
// rounds of E=20 local epochs; M=10 sampled models) with a LeNet on Fashion-MNIST for their ConvNet on
// CIFAR-10. Every server strategy runs on the same clients, so one table compares them: FedAvg and
// FedBE's three forms on a deterministic LeNet, as in the paper, and GAA, FedBE, the BCM and
// beta-PredBayes (Hasan (2023)) on a Bayesian LeNet with variational dense layers.
func chenLeNet() *Spec {
	fedbe := strategy.FedBEOptions{Samples: 10}
	det := func(label, rule string, withServer bool) Variant {
		if withServer {
			return variant(label, "model.kind", "deterministic", "aggregation.rule", rule, "aggregation.options", fedbe)
		}
		return variant(label, "model.kind", "deterministic", "aggregation.rule", rule)
	}
	// The Bayesian LeNet has variational dense layers on deterministic convolutions, as Ozer et al.
	// (2022)'s.
	bayes := func(label, rule string, withServer bool) Variant {
		if withServer {
			return variant(label, "aggregation.rule", rule, "aggregation.options", fedbe, "model.bayesian_layers", 3)
		}
		return variant(label, "aggregation.rule", rule, "model.bayesian_layers", 3)
	}
	return &Spec{
		Dataset:     DatasetSpec{Name: "fashion-mnist", ServerFraction: 0.2},
		Partition:   PartitionSpec{Method: "dirichlet", Clients: 10, Alpha: 0.1, MinSize: 10},
		Model:       ModelSpec{Arch: "lenet", Kind: "bayesian"},
		Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 40, LocalEpochs: 20, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.01, Momentum: 0.9},
		Evaluation:  EvaluationSpec{Samples: 10},
		Seeds:       []int64{1, 2, 3},
		Variants: []Variant{
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
		func(s *Spec) *Spec { return reduce(s, 6000, 2000, 5, 1, []int64{1, 2}, 1) })
}

// hasanLeNet is Hasan (2023)'s one-round comparison (Tables 3.1-3.2 and 4.2: K=5 clients with
// heterogeneity h, 20% of the training set on the server, one round) on the engine, with a LeNet on
// Fashion-MNIST for the thesis's MLP: FedAvg and FedBE train their clients by optimisation; EP-MCMC,
// the BCM, the mixture, beta-PredBayes and their distilled forms combine cSGHMC samples (Sec. 3.3.4:
// 5 cycles, 2 samples per cycle, step size 0.1, prior N(0, 5e4^2)), and FedPA steps from them (server
// step size 0.5, Tables B.2-B.3). FedKT and OneshotFL run in Hasan's engine presets (fmnist-fast). The
// sampler's friction is that of Zhang et al.'s public cSGHMC code (predictive.ZhangFriction; the thesis
// does not state it): at the package default 0.1 the clients' samples end too far apart for EP-MCMC
// and FedPA to combine them (docs/predictive.md).
func hasanLeNet() *Spec {
	sampler := predictive.SamplerConfig{Method: predictive.CSGHMC, LearningRate: 0.1, Cycles: 5, SamplesPerCycle: 2, Friction: predictive.ZhangFriction}
	sampling := func(label, rule string) Variant {
		return variant(label, "aggregation.rule", rule, "training.sampler", sampler)
	}
	return &Spec{
		Dataset:     DatasetSpec{Name: "fashion-mnist", ServerFraction: 0.2},
		Partition:   PartitionSpec{Method: "heterogeneity", Clients: 5},
		Model:       ModelSpec{Arch: "lenet", Kind: "deterministic"},
		Aggregation: AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 1, LocalEpochs: 25, BatchSize: 100, Optimizer: "sgd", LearningRate: 0.01, Momentum: 0.9},
		Evaluation:  EvaluationSpec{Samples: 10},
		Seeds:       []int64{1, 2, 3, 4, 5},
		Sweep:       map[string][]json.RawMessage{"partition.h": raws(0, 0.3, 0.6, 0.9)},
		Variants: []Variant{
			variant("FedAvg", "aggregation.rule", "FedAvg"),
			variant("FedBE", "aggregation.rule", "fedbe-gaussian", "aggregation.options", strategy.FedBEOptions{Samples: 10}),
			sampling("EP-MCMC", "ep-mcmc"),
			variant("FedPA", "aggregation.rule", "fedpa", "training.sampler", sampler, "aggregation.options", strategy.FedPAOptions{ServerLR: 0.5}),
			sampling("BCM", "bcm"),
			sampling("Mixture", "mixture"),
			sampling("beta-PredBayes", "beta-predbayes"),
			sampling("D-BCM", "d-bcm"),
			sampling("D-beta-PredBayes", "d-beta-predbayes"),
		},
	}
}

func init() {
	addPaperPreset("hasan-lenet-h",
		"Hasan (2023) Tables 3.1-4.2 on one engine: LeNet on fashion-mnist, 5 clients, h = 0-0.9, 20% server set, one round: "+
			"FedAvg, FedBE, and EP-MCMC, FedPA, BCM, mixture, beta-PredBayes, D-BCM, D-beta-PredBayes on cSGHMC samples",
		hasanLeNet,
		func(s *Spec) *Spec { return reduce(s, 3000, 2000, 1, 10, []int64{1, 2, 3}, 1) })
}
