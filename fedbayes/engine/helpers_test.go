package engine

import (
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/data"
)

// requireDigits skips the test when scikit-learn's digits are not installed (`fedbayes data install`).
func requireDigits(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, "digits.csv.gz")); err != nil {
		t.Skipf("digits not installed (run `fedbayes data install`): %v", err)
	}
}

// requireFashionMNIST skips the test when Fashion-MNIST is not installed.
func requireFashionMNIST(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), "fashion-mnist")); err != nil {
		t.Skipf("Fashion-MNIST not installed (run `fedbayes data install`): %v", err)
	}
}

// digitsSpec is a small, fast federated run on the digits: 4 clients with unequal sizes (Dirichlet),
// a Bayesian MLP, 2 rounds.
func digitsSpec() *Spec {
	return &Spec{
		Name:        "digits",
		Dataset:     DatasetSpec{Name: "digits", Subsample: 600, TestSubsample: 300},
		Partition:   PartitionSpec{Method: "dirichlet", Clients: 4, Alpha: 1, MinSize: 20},
		Model:       ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{16}},
		Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
		Training:    TrainingSpec{Rounds: 2, LocalEpochs: 1, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.1, Momentum: 0.9},
		Evaluation:  EvaluationSpec{Samples: 2, FairnessExamples: 30},
		Seeds:       []int64{3},
	}
}
