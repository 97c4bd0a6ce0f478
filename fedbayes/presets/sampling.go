package presets

import (
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
)

// SamplingDigits is the preset of client sampling beyond uniform (docs/partitions.md): the digits
// among 20 clients whose sizes follow Zipf's law (s = 1, the largest about 28 % of the data) and
// whose classes a Dirichlet(0.5) split decides; 5 clients a round, drawn uniformly, by size
// (Li et al. 2020), by power-of-choice among 10 candidates (Cho et al. 2020), and uniformly with 20 %
// of them dropping out and 30 % of the clients stragglers (PFLlib's client_drop_rate and
// train_slow_rate). A deterministic MLP and FedAvg with size weights (what is compared is the
// sampling, not a posterior), 30 rounds, 3 seeds; about 5 s on 2 cores.
const SamplingDigits = "sampling-digits"

// samplingDigits builds the SamplingDigits spec.
func samplingDigits() *engine.Spec {
	return &engine.Spec{
		Dataset: engine.DatasetSpec{Name: "digits"},
		Partition: engine.PartitionSpec{Method: "dirichlet", Clients: 20, Participation: 0.25, Alpha: 0.5, MinSize: 10,
			Sizes: &engine.SizesSpec{Kind: "zipf", Exponent: 1}},
		Model:       engine.ModelSpec{Arch: models.ArchMLP, Kind: models.Deterministic, Hidden: []int{32}},
		Aggregation: engine.AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training:    engine.TrainingSpec{Rounds: 30, LocalEpochs: 2, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9},
		Evaluation:  engine.EvaluationSpec{Every: 5},
		Seeds:       []int64{0, 1, 2},
		Variants: []engine.Variant{
			variant("uniform", "partition.sampling", map[string]any{"method": "uniform"}),
			variant("size", "partition.sampling", map[string]any{"method": "size"}),
			variant("power-of-choice", "partition.sampling", map[string]any{"method": "power-of-choice", "candidates": 10}),
			variant("drops-stragglers", "partition.sampling", map[string]any{"method": "uniform", "drop_rate": 0.2, "straggler_rate": 0.3}),
		},
		Budget: "full (no paper: a comparison of the sampling options on Zipf-sized Dirichlet clients)",
	}
}

func init() {
	addPaperPreset(SamplingDigits, "client sampling on skewed clients: digits, 20 clients of Zipf sizes with Dirichlet(0.5) classes, 5 a round; "+
		"uniform, size-proportional, power-of-choice and uniform with 20 % dropouts and 30 % stragglers (docs/partitions.md)",
		samplingDigits, nil)
}
