package engine

import (
	"context"
	"testing"
	"time"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/strategy"
)

// BenchmarkRound times one federated round of the Ozer et al. (2022) setting on Fashion-MNIST: 10
// clients (IID), one local epoch at batch 64, SGD with momentum, the full training set (6,000 images
// per client), for the Bayesian MLP (784-100-10) and the Bayesian LeNet (variational dense layers).
// It compares the vectorised path (all clients in one computation) with one client at a time, and
// reports the clients' training (s/round, examples/s) and, apart, the evaluation of the global model
// with M=10 samples (eval-s/1k: seconds per 1,000 test images). `make bench-round` runs it with
// GOMAXPROCS=1 and 2.
//
//	go test ./fedbayes/engine -run xxx -bench Round -benchtime=1x -count=3
func BenchmarkRound(b *testing.B) {
	requireFashionMNIST(b)
	cases := []struct {
		name      string
		model     ModelSpec
		subsample int
	}{
		{"mlp", ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{100}}, 0},
		{"lenet", ModelSpec{Arch: "lenet", Kind: "bayesian", BayesianLayers: 3}, 0},
	}
	for _, c := range cases {
		for _, mode := range []string{"vectorized", "sequential"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				s := (&Spec{
					Dataset:     DatasetSpec{Name: "fashion-mnist", Subsample: c.subsample},
					Partition:   PartitionSpec{Method: "iid", Clients: 10},
					Model:       c.model,
					Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
					Training:    TrainingSpec{LocalEpochs: 1, BatchSize: 64, Optimizer: "sgd", LearningRate: 0.01, Momentum: 0.9, Mode: mode},
				}).WithDefaults()
				if err := s.Validate(); err != nil {
					b.Fatal(err)
				}
				p, err := newProblem(s, 0, &datasetCache{})
				if err != nil {
					b.Fatal(err)
				}
				k := 10
				if mode == "sequential" {
					k = 1
				}
				m, err := models.New(modelConfig(s, p, k, 1))
				if err != nil {
					b.Fatal(err)
				}
				tr, err := m.NewTrainer(optimizerConfig(s.Training))
				if err != nil {
					b.Fatal(err)
				}
				global, err := m.ClientPosterior(0)
				if err != nil {
					b.Fatal(err)
				}
				strat, err := newStrategy(s)
				if err != nil {
					b.Fatal(err)
				}
				jobs := make([]clientJob, 10)
				sizes := p.part.Sizes()
				for i := range jobs {
					jobs[i] = clientJob{id: i, indices: p.part.Clients[i]}
				}
				round := func(r int) time.Duration {
					start := time.Now()
					in := roundInput{spec: s, prob: p, seed: 0, round: r, global: global, jobs: jobs}
					var out localOutcome
					if mode == "sequential" {
						out, err = trainSequential(context.Background(), m, tr, in)
					} else {
						out, err = trainVectorized(context.Background(), m, tr, in)
					}
					if err != nil {
						b.Fatal(err)
					}
					rs := &runState{spec: s, prob: p, strategy: strat}
					ids := make([]int, len(jobs))
					for i := range ids {
						ids[i] = i
					}
					if _, err := rs.aggregate(out, ids, sizes[:len(jobs)], global, r); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				round(0) // compiles the step
				b.ResetTimer()
				var total time.Duration
				for i := 0; i < b.N; i++ {
					total += round(i + 1)
				}
				b.ReportMetric(total.Seconds()/float64(b.N), "s/round")
				b.ReportMetric(float64(p.train.Len())*float64(b.N)/total.Seconds(), "examples/s")

				// Evaluation of the global model on the test set, M=10 samples, on a one-client model
				// (as the engine evaluates).
				b.StopTimer()
				em, err := models.New(modelConfig(s, p, 1, 1))
				if err != nil {
					b.Fatal(err)
				}
				s.Evaluation.Fairness, s.Evaluation.Samples = "off", 10
				ev := newEvaluator(em, s, p, 0)
				if _, _, err := ev.evaluate(&strategy.Global{Posterior: global}, 0, 0); err != nil { // compiles
					b.Fatal(err)
				}
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if _, _, err := ev.evaluate(&strategy.Global{Posterior: global}, 0, i+1); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(time.Since(start).Seconds()/float64(b.N)/float64(p.test.Len())*1000, "eval-s/1k")
			})
		}
	}
}
