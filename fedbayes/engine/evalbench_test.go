package engine

import (
	"fmt"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/strategy"
)

// BenchmarkEvaluation times one evaluation of the global model at the cross-device shape of
// pfl-research's benchmark (issue 52): Fashion-MNIST, 1,000 clients of 50 examples, the Bayesian
// LeNet, M = 10 samples, 2,000 test images, fairness local. fairness_clients=1000 scores every
// client (50,000 examples besides the test set); fairness_clients=100, the default, scores a seeded
// sample of 100 (5,000 examples). It reports seconds per evaluation and the examples predicted.
//
//	go test ./fedbayes/engine -run xxx -bench Evaluation -benchtime=1x
func BenchmarkEvaluation(b *testing.B) {
	requireFashionMNIST(b)
	for _, scored := range []int{1000, 100} {
		b.Run(fmt.Sprintf("fairness_clients=%d", scored), func(b *testing.B) {
			s := (&Spec{
				Dataset:     DatasetSpec{Name: "fashion-mnist", Subsample: 50_000, TestSubsample: 2_000},
				Partition:   PartitionSpec{Method: "iid", Clients: 1000, Participation: 0.05},
				Model:       ModelSpec{Arch: "lenet", Kind: "bayesian"},
				Aggregation: AggregationSpec{Rule: "GAA"},
				Training:    TrainingSpec{BatchSize: 10},
				Evaluation:  EvaluationSpec{Samples: 10, FairnessClients: scored},
			}).WithDefaults()
			if err := s.Validate(); err != nil {
				b.Fatal(err)
			}
			p, err := newProblem(s, 0, &datasetCache{})
			if err != nil {
				b.Fatal(err)
			}
			m, err := models.New(globalConfig(s, p, 0))
			if err != nil {
				b.Fatal(err)
			}
			global, err := m.ClientPosterior(0)
			if err != nil {
				b.Fatal(err)
			}
			g := &strategy.Global{Posterior: global}
			off := *s
			off.Evaluation.Fairness = "off"
			if _, _, err := newEvaluator(m, &off, p, 0).evaluate(g, 0, 0); err != nil { // compiles
				b.Fatal(err)
			}
			ev := newEvaluator(m, s, p, 0)
			rows := p.test.Len()
			for _, y := range ev.fairY {
				rows += len(y)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, _, err := ev.evaluate(g, 0, i+1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/eval")
			b.ReportMetric(float64(rows), "examples/eval")
		})
	}
}
