package predictive

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/data"
)

// The multi-round methods of a RoundsSpec: FedAvg and FedBE's variants in Chen & Chao's table.
const (
	// RoundsFedAvg is FedAvg (the size-weighted mean of the clients every round).
	RoundsFedAvg = "fedavg"
	// RoundsFedBEGaussian is FedBE with a diagonal Gaussian global model distribution and SWA
	// distillation (Chen & Chao's main method).
	RoundsFedBEGaussian = "fedbe-gaussian"
	// RoundsFedBEDirichlet is FedBE with a Dirichlet distribution over convex combinations of the
	// clients.
	RoundsFedBEDirichlet = "fedbe-dirichlet"
	// RoundsFedBENoSWA is FedBE (Gaussian) keeping the last weights of a single decaying cycle
	// instead of averaging cycle ends: Chen & Chao's "FedBE (w/o SWA)".
	RoundsFedBENoSWA = "fedbe-gaussian-no-swa"
)

// RoundsMethods lists the multi-round methods in table order.
var RoundsMethods = []string{RoundsFedAvg, RoundsFedBEGaussian, RoundsFedBEDirichlet, RoundsFedBENoSWA}

// RoundsSpec is a multi-round experiment of Chen & Chao (FedBE, Alg. 1 and the non-IID table):
// 20% of the training set is the server's unlabeled set, the rest is split among the clients with
// a Dirichlet label skew, and every method runs the same rounds from the same initial model with the
// same clients and local training; only the server step differs. JSON field names are snake_case;
// unknown fields are errors (ParseRoundsSpec).
type RoundsSpec struct {
	// Setup holds the data, server fraction, clients (default 10, all active every round), MLP,
	// seeds, methods and budget.
	Setup
	// Alpha is the concentration of the clients' Dirichlet label skew (partition.Dirichlet; default
	// 0.1, a strong skew; the poster does not state its value).
	Alpha float64 `json:"alpha,omitempty"`
	// Rounds is the number of communication rounds (default 40, Chen & Chao).
	Rounds int `json:"rounds,omitempty"`
	// Local is the clients' training in every round (default: LocalConfig's, with 20 epochs as in
	// Chen & Chao); its seed is set per run.
	Local LocalConfig `json:"local"`
	// FedBE is the server side of the FedBE methods: Samples (M), the Dirichlet Alpha and Distill.
	// Its Distribution and Seed are set per method and run.
	FedBE FedBEConfig `json:"fedbe"`
}

// ParseRoundsSpec reads a JSON rounds spec; unknown fields are errors.
func ParseRoundsSpec(b []byte) (RoundsSpec, error) { return decodeStrict[RoundsSpec](b, "rounds spec") }

// LoadRoundsSpec reads a JSON rounds spec file.
func LoadRoundsSpec(path string) (RoundsSpec, error) {
	return loadStrict[RoundsSpec](path, "rounds spec")
}

// WithDefaults fills zero fields with their defaults.
func (s RoundsSpec) WithDefaults() RoundsSpec {
	s.Setup = s.Setup.withDefaults("fedbe", 10, RoundsMethods)
	if s.Alpha == 0 {
		s.Alpha = 0.1
	}
	if s.Rounds == 0 {
		s.Rounds = 40
	}
	if s.Local.Epochs == 0 {
		s.Local.Epochs = 20
	}
	s.Local = s.Local.WithDefaults()
	s.FedBE = s.FedBE.WithDefaults()
	return s
}

// Validate reports the first invalid field by its JSON name.
func (s RoundsSpec) Validate() error {
	bad := badField("rounds spec")
	if err := s.Setup.validate(bad, RoundsMethods); err != nil {
		return err
	}
	switch {
	case data.RegressionSet(s.Dataset):
		return bad("dataset", s.Dataset, "FedBE distils class probabilities: want a classification dataset")
	case !(s.Alpha > 0) || math.IsInf(s.Alpha, 0):
		return bad("alpha", s.Alpha, "want a positive, finite concentration")
	case s.Rounds < 1:
		return bad("rounds", s.Rounds, "want at least 1")
	case s.Local.Epochs < 1 || s.Local.BatchSize < 1 || !(s.Local.LearningRate > 0):
		return bad("local", fmt.Sprintf("epochs %d, batch size %d, learning rate %v", s.Local.Epochs, s.Local.BatchSize, s.Local.LearningRate), "want positive values")
	case s.FedBE.Samples < 1:
		return bad("fedbe.samples", s.FedBE.Samples, "want at least 1")
	case !(s.FedBE.Alpha > 0) || math.IsInf(s.FedBE.Alpha, 0):
		return bad("fedbe.alpha", s.FedBE.Alpha, "want a positive, finite concentration")
	}
	return nil
}
