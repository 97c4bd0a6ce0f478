package doctor

import (
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/gomlx/gomlx/backends"

	"fedbayes.dev/fedbayes/models"
)

// Speed is the outcome of SpeedCheck.
type Speed struct {
	// Setup is the time to build the model and compile and run its first training step.
	Setup time.Duration
	// Step is the mean time of one training step after the first.
	Step time.Duration
	// Steps is the number of steps timed.
	Steps int
	// Batch is the number of examples per step.
	Batch int
}

// ExamplesPerSecond is the training throughput measured.
func (s Speed) ExamplesPerSecond() float64 {
	if s.Step <= 0 {
		return 0
	}
	return float64(s.Batch) / s.Step.Seconds()
}

// String is the one-line summary: "LeNet step (Bayesian, batch 32): 36.1 ms, 886 examples/s (setup 1.2 s)".
func (s Speed) String() string {
	return fmt.Sprintf("LeNet step (Bayesian, batch %d): %.1f ms, %.0f examples/s (setup %.1f s)",
		s.Batch, float64(s.Step.Microseconds())/1000, s.ExamplesPerSecond(), s.Setup.Seconds())
}

// SpeedCheck trains the Bayesian LeNet of the Ozer et al. (2022) setting (28x28x1 inputs, 10 classes,
// its 3 dense layers Bayesian, SGD with momentum) on be for 1+steps steps of a batch of 32 synthetic
// examples, and times them. It fails if the loss is not finite. About 2 s on the pure-Go backend on 2
// cores with steps = 5.
func SpeedCheck(be backends.Backend, steps int) (Speed, error) {
	const batch = 32
	s := Speed{Steps: steps, Batch: batch}
	if steps < 0 {
		return s, fmt.Errorf("doctor: SpeedCheck: %d steps; want at least 0", steps)
	}
	start := time.Now()
	m, err := models.NewWithBackend(be, models.Config{
		Options:    models.Options{Arch: models.ArchLeNet, Kind: models.Bayesian, BayesianLayers: 3},
		InputShape: []int{28, 28, 1}, NumClasses: 10, Seed: 1})
	if err != nil {
		return s, err
	}
	tr, err := m.NewTrainer(models.OptimizerConfig{Kind: models.SGD, LearningRate: 0.01, Momentum: 0.9})
	if err != nil {
		return s, err
	}
	rng := rand.New(rand.NewSource(1))
	b := models.Batch{X: make([]float32, batch*28*28), Labels: make([]int32, batch), DatasetSizes: []int{1000}}
	for i := range b.X {
		b.X[i] = float32(rng.NormFloat64())
	}
	for i := range b.Labels {
		b.Labels[i] = int32(i % 10)
	}
	// Every step trains on the same batch; the loss of each must be finite.
	loop := func(n int) error {
		return models.Loop{Epochs: 1, Steps: n,
			Batch: func(models.LoopStep) (models.Batch, error) { return b, nil },
			AfterStep: func(_ models.LoopStep, st models.StepStats) error {
				if len(st.Loss) != 1 || math.IsNaN(st.Loss[0]) || math.IsInf(st.Loss[0], 0) {
					return fmt.Errorf("training step computed loss %v, want one finite number", st.Loss)
				}
				return nil
			},
		}.Run(tr)
	}
	if err := loop(1); err != nil {
		return s, err
	}
	s.Setup = time.Since(start)
	start = time.Now()
	if err := loop(steps); err != nil {
		return s, err
	}
	if steps > 0 {
		s.Step = time.Since(start) / time.Duration(steps)
	}
	return s, nil
}
