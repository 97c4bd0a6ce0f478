package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/results"
)

// requireDigits skips the test when scikit-learn's digits are not installed (`fedbayes data install`).
func requireDigits(t testing.TB) { t.Helper(); requireSklearn(t, "digits", "digits.csv.gz") }

// requireDiabetes skips the test when scikit-learn's diabetes set is not installed.
func requireDiabetes(t testing.TB) {
	t.Helper()
	requireSklearn(t, "diabetes", "diabetes_target.csv.gz")
}

// requireSklearn skips the test when the scikit-learn data file of a dataset is not installed.
func requireSklearn(t testing.TB, name, file string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data.Dir(), data.SklearnDir, file)); err != nil {
		t.Skipf("%s not installed (run `fedbayes data install`): %v", name, err)
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

// raw marshals a constant value for a sweep or variant.
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // constants only
	}
	return b
}

// raws turns values into a sweep list.
func raws(values ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = raw(v)
	}
	return out
}

// variant is NewVariant for the tests' constant paths and values.
func variant(label string, pathValues ...any) Variant {
	v, err := NewVariant(label, pathValues...)
	if err != nil {
		panic(err) // constants only
	}
	return v
}

// specErrorCase is a change to a valid spec that Validate must refuse with a *SpecError at path.
type specErrorCase struct {
	name   string
	modify func(s *Spec)
	path   string
}

// checkSpecErrors applies each case to a fresh base spec and checks the refusal's path.
func checkSpecErrors(t *testing.T, base func() *Spec, cases []specErrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tc.modify(s)
			if se, ok := s.Validate().(*SpecError); !ok || se.Path != tc.path {
				t.Fatalf("error %v, want a SpecError at %s", s.Validate(), tc.path)
			}
		})
	}
}

// requireLearned fails unless every run of sum completed with a test accuracy above min (chance is
// 0.1 on the ten digits); it logs each run's accuracy and NLL.
func requireLearned(t *testing.T, sum *Summary, min float64) {
	t.Helper()
	for _, r := range sum.Runs {
		if r.State != results.Completed {
			t.Fatalf("%s: %s %s", r.Setting, r.State, r.Reason)
		}
		t.Logf("%s: accuracy %.3f, NLL %.3f", r.Setting, r.Metrics[results.Accuracy], r.Metrics[results.NLL])
		if acc := r.Metrics[results.Accuracy]; !(acc > min) {
			t.Errorf("%s: accuracy %v, want above %v", r.Setting, acc, min)
		}
	}
}

// requireRepeats runs s again into a new folder and fails unless every run gives the NLL it gave in
// sum: same seed, same result.
func requireRepeats(t *testing.T, s *Spec, sum *Summary) {
	t.Helper()
	again := runQuiet(t, s, t.TempDir(), false)
	for i, r := range sum.Runs {
		if a, b := r.Metrics[results.NLL], again.Runs[i].Metrics[results.NLL]; a != b {
			t.Errorf("%s: NLL %v then %v with the same seed", r.Setting, a, b)
		}
	}
}
