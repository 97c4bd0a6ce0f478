package engine

import (
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

// expandPreset returns the preset name and its settings, failing the test when either cannot be made.
func expandPreset(t *testing.T, name string) (*Spec, []Setting) {
	t.Helper()
	s, err := Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatalf("preset %s does not validate: %v", name, err)
	}
	return s, settings
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
