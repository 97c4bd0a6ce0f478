package presets

import (
	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
)

// PVIDigits is the preset that puts partitioned VI (strategy.PVI, docs/strategies.md) beside the
// one-shot rules GAA and EAA on scikit-learn's digits: 10 clients with Dirichlet(0.5) classes, a
// Bayesian MLP (64-32-10) whose variances learn (Adam at 0.01 on log σ², SGD with momentum on the
// means), 20 rounds of 2 local epochs, 3 seeds; PVI at its default damping (2/10) and at 0.5, the
// damping at which it broke down in a first trial. Seconds on 2 cores.
const PVIDigits = "pvi-digits"

// pviDigits builds the PVIDigits spec.
func pviDigits() *engine.Spec {
	return &engine.Spec{
		Dataset:     engine.DatasetSpec{Name: "digits"},
		Partition:   engine.PartitionSpec{Method: "dirichlet", Clients: 10, Alpha: 0.5, MinSize: 20},
		Model:       engine.ModelSpec{Arch: models.ArchMLP, Kind: models.Bayesian, Hidden: []int{32}},
		Aggregation: engine.AggregationSpec{Rule: "GAA", Weighting: "size"},
		Training: engine.TrainingSpec{Rounds: 20, LocalEpochs: 2, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9,
			VarianceOptimizer: string(models.Adam), VarianceLR: 0.01},
		Evaluation: engine.EvaluationSpec{Samples: 10, Every: 5},
		Seeds:      []int64{0, 1, 2},
		Variants: []engine.Variant{
			variant("gaa", "aggregation.rule", "GAA"),
			variant("eaa", "aggregation.rule", "EAA"),
			variant("pvi", "aggregation.rule", "pvi", "aggregation.weighting", ""),
			variant("pvi-damping-0.5", "aggregation.rule", "pvi", "aggregation.weighting", "", "aggregation.options", map[string]any{"damping": 0.5}),
		},
		Budget: "full (no paper: partitioned VI beside one-shot rules on a small problem)",
	}
}

func init() {
	addPaperPreset(PVIDigits, "partitioned VI beside GAA and EAA: digits, 10 Dirichlet(0.5) clients, Bayesian MLP with learning variances, "+
		"20 rounds, 3 seeds; PVI at damping 2/10 and 0.5 (docs/strategies.md)", pviDigits, nil)
}
