package predictive

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
)

// LocalConfig is the clients' ordinary (optimisation) training of the non-sampling methods:
// FedAvg, OneshotFL and FedBE (Hasan (2023), Sec. 3.3.4: SGD with momentum or Adam).
type LocalConfig struct {
	// Optimizer is "sgd" (default; with Momentum) or "adam".
	Optimizer string `json:"optimizer,omitempty"`
	// LearningRate is the step size (default 0.01, Table B.3 for h > 0).
	LearningRate float64 `json:"learning_rate,omitempty"`
	// Momentum is SGD's momentum (default 0.9, App. B.2).
	Momentum float64 `json:"momentum,omitempty"`
	// Epochs is the number of passes over the largest client (default 10).
	Epochs int `json:"epochs,omitempty"`
	// BatchSize is the minibatch size per client (default 100).
	BatchSize int `json:"batch_size,omitempty"`
	// Seed fixes the batch order.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c LocalConfig) WithDefaults() LocalConfig {
	if c.Optimizer == "" {
		c.Optimizer = "sgd"
	}
	if c.LearningRate == 0 {
		c.LearningRate = 0.01
	}
	if c.Momentum == 0 && c.Optimizer == "sgd" {
		c.Momentum = 0.9
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
	switch c.Optimizer {
	case "sgd":
		return models.OptimizerConfig{Kind: models.SGD, LearningRate: c.LearningRate, Momentum: c.Momentum}, nil
	case "adam":
		return models.OptimizerConfig{Kind: models.Adam, LearningRate: c.LearningRate}, nil
	}
	return models.OptimizerConfig{}, fmt.Errorf("predictive: optimizer %q; want \"sgd\" or \"adam\"", c.Optimizer)
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
			return nil, fmt.Errorf("predictive: client %d diverged: last-epoch loss %v", k, v)
		}
	}
	return last, nil
}
