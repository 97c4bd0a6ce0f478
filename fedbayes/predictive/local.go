package predictive

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
)

// DefaultMomentum is the momentum that the default optimizer of local training and of FedBE's
// distillation brings: SGD with momentum 0.9 (Hasan (2023), App. B.2; Chen & Chao, Sec. 5).
const DefaultMomentum = 0.9

// LocalConfig is the clients' ordinary (optimisation) training of the non-sampling methods:
// FedAvg, OneshotFL and FedBE (Hasan (2023), Sec. 3.3.4: SGD with momentum or Adam).
//
// A momentum of 0 means none, as in engine.TrainingSpec and models.OptimizerConfig: a config that
// names its optimizer gets exactly the momentum it gives. Only a config that leaves the optimizer
// out takes the default optimizer as a whole, SGD with DefaultMomentum.
type LocalConfig struct {
	// Optimizer is "sgd" or "adam"; empty: SGD with DefaultMomentum (unless Momentum is given).
	Optimizer string `json:"optimizer,omitempty"`
	// LearningRate is the step size (default 0.01, Table B.3 for h > 0).
	LearningRate float64 `json:"learning_rate,omitempty"`
	// Momentum is SGD's momentum in [0, 1) (0: none; see Optimizer for the default optimizer's).
	Momentum float64 `json:"momentum,omitempty"`
	// Epochs is the number of passes over the largest client (default 10).
	Epochs int `json:"epochs,omitempty"`
	// BatchSize is the minibatch size per client (default 100).
	BatchSize int `json:"batch_size,omitempty"`
	// Seed fixes the batch order.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults: an empty Optimizer becomes SGD with
// DefaultMomentum where Momentum is 0; a named optimizer keeps the momentum given.
func (c LocalConfig) WithDefaults() LocalConfig {
	if c.Optimizer == "" {
		c.Optimizer = "sgd"
		if c.Momentum == 0 {
			c.Momentum = DefaultMomentum
		}
	}
	if c.LearningRate == 0 {
		c.LearningRate = 0.01
	}
	if c.Epochs == 0 {
		c.Epochs = 10
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	return c
}

// optimizer returns the models optimizer configuration.
func (c LocalConfig) optimizer() (models.OptimizerConfig, error) {
	return optimizerConfig("LocalConfig", c.Optimizer, c.LearningRate, c.Momentum)
}

// optimizerConfig is the models.OptimizerConfig of an optimizer named in a LocalConfig or a
// DistillConfig (what): "sgd" with its momentum in [0, 1) as given, or "adam", which takes no
// momentum.
func optimizerConfig(what, kind string, lr, momentum float64) (models.OptimizerConfig, error) {
	if !(momentum >= 0 && momentum < 1) {
		return models.OptimizerConfig{}, fmt.Errorf("predictive: %s: momentum %v; want in [0, 1)", what, momentum)
	}
	switch kind {
	case "sgd":
		return models.OptimizerConfig{Kind: models.SGD, LearningRate: lr, Momentum: momentum}, nil
	case "adam":
		if momentum != 0 {
			return models.OptimizerConfig{}, fmt.Errorf("predictive: %s: momentum %v set, but the optimizer is adam; momentum applies to sgd", what, momentum)
		}
		return models.OptimizerConfig{Kind: models.Adam, LearningRate: lr}, nil
	}
	return models.OptimizerConfig{}, fmt.Errorf("predictive: %s: optimizer %q; want \"sgd\" or \"adam\"", what, kind)
}

// TrainClients trains the K clients of m, client k on clients[k], for cfg.Epochs passes, and returns
// the mean training loss of each client over the last epoch.
func TrainClients(m *models.Model, clients []*data.Dataset, cfg LocalConfig) ([]float64, error) {
	cfg = cfg.WithDefaults()
	if cfg.Epochs < 1 || cfg.BatchSize < 1 || !(cfg.LearningRate > 0) {
		return nil, fmt.Errorf("predictive: LocalConfig: epochs %d, batch size %d, learning rate %v; want positive values", cfg.Epochs, cfg.BatchSize, cfg.LearningRate)
	}
	if len(clients) != m.Clients() {
		return nil, fmt.Errorf("predictive: TrainClients: %d client datasets for a model of %d clients", len(clients), m.Clients())
	}
	oc, err := cfg.optimizer()
	if err != nil {
		return nil, err
	}
	tr, err := m.NewTrainer(oc)
	if err != nil {
		return nil, err
	}
	f, err := newFeed(clients, cfg.BatchSize, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	per := f.stepsPerEpoch()
	last := make([]float64, m.Clients())
	loop := models.Loop{Epochs: cfg.Epochs, Steps: per,
		Batch: func(models.LoopStep) (models.Batch, error) { return f.next(), nil },
		AfterStep: func(at models.LoopStep, st models.StepStats) error {
			if at.Epoch == cfg.Epochs-1 {
				for k, v := range st.Loss {
					last[k] += v / float64(per)
				}
			}
			return nil
		},
	}
	if err := loop.Run(tr); err != nil {
		return nil, fmt.Errorf("predictive: local training: %w", err)
	}
	for k, v := range last {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &DivergedError{Client: k, Loss: v}
		}
	}
	return last, nil
}

// DivergedError is TrainClients' error for a client model whose last-epoch loss is NaN or
// infinite (a step size too large for its data): its method broke down, as opposed to a wrong
// input, so callers mark the run diverged rather than failed.
type DivergedError struct {
	Client int
	Loss   float64
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("predictive: client %d diverged: last-epoch loss %v", e.Client, e.Loss)
}
