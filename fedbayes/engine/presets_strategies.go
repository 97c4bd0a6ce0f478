package engine

// chenLeNet is Chen & Chao's non-IID setting (FedBE, Alg. 1 and the non-IID table: 10 clients, all
// active, a Dirichlet(0.1) label skew, 20% of the training set kept, unlabelled, for the server; T=40
// rounds of E=20 local epochs; M=10 sampled models) with a LeNet on Fashion-MNIST for their ConvNet on
// CIFAR-10. Every server strategy runs on the same clients, so one table compares them: FedAvg and
// FedBE's three forms on a deterministic LeNet, as in the paper, and GAA, FedBE, the BCM and
// beta-PredBayes (Hasan (2023)) on a Bayesian LeNet.
func chenLeNet() *Spec {
	server := ServerSpec{Samples: 10}
	det := func(label, rule string, withServer bool) Variant {
		if withServer {
			return variant(label, "model.kind", "deterministic", "aggregation.rule", rule, "aggregation.server", server)
		}
		return variant(label, "model.kind", "deterministic", "aggregation.rule", rule)
	}
	bayes := func(label, rule string, withServer bool) Variant {
		if withServer {
			return variant(label, "aggregation.rule", rule, "aggregation.server", server)
		}
		return variant(label, "aggregation.rule", rule)
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
