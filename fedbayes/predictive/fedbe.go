package predictive

import (
	"fmt"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// FedBEConfig configures FedBE (Chen & Chao, "FedBE: Making Bayesian Model Ensemble Applicable to
// Federated Learning", Alg. 1).
type FedBEConfig struct {
	// Distribution is the global model distribution: "gaussian" (default; diagonal Gaussian fitted to
	// the clients, aggregate.FedBEGaussian) or "dirichlet" (aggregate.FedBEDirichlet).
	Distribution string `json:"distribution,omitempty"`
	// Alpha is the Dirichlet concentration (default 1).
	Alpha float64 `json:"alpha,omitempty"`
	// Samples is M, the number of sampled global models (default 10, Hasan (2023), App. B.2); the
	// teachers are these, the K clients and their weighted mean.
	Samples int `json:"samples,omitempty"`
	// Distill is the server's distillation; default SGD with DefaultMomentum (where the optimizer is
	// left out), learning rate 0.01, and SWA over 4 cycles (Chen & Chao: momentum SGD, cyclical learning rate, averaging at cycle ends).
	Distill DistillConfig `json:"distill"`
	// Temperature sharpens the pseudo labels: the teachers' averaged probabilities are raised to
	// 1/Temperature and normalised (Sharpen). Chen & Chao's code sharpens with 0.5 (its --temp);
	// 0 or 1 leaves them as they are.
	Temperature float64 `json:"temperature,omitempty"`
	// Seed fixes the sampled global models and, with the round, the client and distillation order.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c FedBEConfig) WithDefaults() FedBEConfig {
	if c.Distribution == "" {
		c.Distribution = "gaussian"
	}
	if c.Alpha == 0 {
		c.Alpha = 1
	}
	if c.Samples == 0 {
		c.Samples = 10
	}
	if c.Distill.Optimizer == "" {
		c.Distill.Optimizer = "sgd"
		if c.Distill.Momentum == 0 {
			c.Distill.Momentum = DefaultMomentum
		}
		if c.Distill.LearningRate == 0 {
			c.Distill.LearningRate = 0.01
		}
	}
	if c.Distill.SWACycles == 0 {
		c.Distill.SWACycles = 4
	}
	c.Distill = c.Distill.WithDefaults()
	return c
}

// FedBETeachers returns FedBE's teacher ensemble for trained clients (stacked [K, ...]
// deterministic posterior): M models sampled from the global model distribution, the K clients and
// their weighted mean (Chen & Chao, Alg. 1), stacked [M+K+1, ...], and the weighted mean itself
// (unstacked), where distillation starts. weights are the client sizes (nil: equal).
func FedBETeachers(clients *posterior.Posterior, weights []float64, fc FedBEConfig, seed int64) (teachers, mean *posterior.Posterior, err error) {
	fc = fc.WithDefaults()
	list, err := posterior.Unstack(clients)
	if err != nil {
		return nil, nil, err
	}
	var w []float64
	if weights != nil {
		if w, err = normalizeWeights(weights, len(list)); err != nil {
			return nil, nil, err
		}
	}
	var sampled []*posterior.Posterior
	switch fc.Distribution {
	case "gaussian":
		sampled, err = aggregate.FedBEGaussian(list, w, fc.Samples, seed, aggregate.Options{})
	case "dirichlet":
		sampled, err = aggregate.FedBEDirichlet(list, w, fc.Alpha, fc.Samples, seed, aggregate.Options{})
	default:
		return nil, nil, fmt.Errorf("predictive: fedbe.distribution %q; want \"gaussian\" or \"dirichlet\"", fc.Distribution)
	}
	if err != nil {
		return nil, nil, err
	}
	mean, err = FedAvgModel(clients, weights)
	if err != nil {
		return nil, nil, err
	}
	all := append(append(sampled, list...), mean)
	teachers, err = posterior.Stack(all)
	if err != nil {
		return nil, nil, err
	}
	return teachers, mean, nil
}

// FedBEServer is the server side of one FedBE round: it builds the teachers from the trained
// clients, labels the unlabeled server inputs with the teachers' averaged predictive (the pseudo
// labels of Chen & Chao, Alg. 1), and distils them, with SWA, into a student that starts at the
// clients' weighted mean. It returns the new global model (unstacked). cfg is the clients' model
// configuration.
func FedBEServer(cfg models.Config, clients *posterior.Posterior, weights []float64, serverX []float32, fc FedBEConfig, round int) (*posterior.Posterior, error) {
	fc = fc.WithDefaults()
	teachers, mean, err := FedBETeachers(clients, weights, fc, fc.Seed+int64(round)*1_000_003)
	if err != nil {
		return nil, err
	}
	probs, tmean, _, err := EnsembleMean(cfg, teachers, serverX)
	if err != nil {
		return nil, err
	}
	if err := CheckTemperature(fc.Temperature); err != nil {
		return nil, fmt.Errorf("predictive: FedBE %w", err)
	}
	if fc.Temperature > 0 && fc.Temperature != 1 && cfg.Task != models.Regression {
		if err := Sharpen(probs, cfg.NumClasses, fc.Temperature); err != nil {
			return nil, err
		}
	}
	scfg := cfg
	scfg.Clients = 1
	scfg = scfg.AsDeterministic()
	scfg.Seed = fc.Seed + int64(round)
	student, err := models.New(scfg)
	if err != nil {
		return nil, err
	}
	if err := student.SetPosterior(mean); err != nil {
		return nil, err
	}
	dc := fc.Distill
	dc.Seed = fc.Seed + int64(round)*7
	if err := Distill(student, serverX, []Teacher{{Probs: probs, Mean: tmean}}, dc); err != nil {
		return nil, err
	}
	return student.ClientPosterior(0)
}

// CheckTemperature checks a FedBEConfig.Temperature: a finite value >= 0 (0 or 1: no sharpening).
func CheckTemperature(t float64) error {
	if !(t >= 0) || math.IsInf(t, 0) {
		return fmt.Errorf("temperature %v; must be a finite value >= 0 (0 or 1 means none)", t)
	}
	return nil
}

// Sharpen raises each row of probs (examples x classes, each row a distribution) to the power
// 1/temperature and normalises it, in place: temperature < 1 sharpens, > 1 flattens. As in Chen &
// Chao's code (utils/tools.py, temp_sharpen), a powered value is floored at 1e-8 before the
// normalisation, so no class gets probability 0; the powers are taken of each value divided by its
// row's largest, so that a small temperature cannot floor a whole row to uniform (the code floors
// p^(1/T) itself, which at its 0.5 gives the same rows). Computed in float64.
func Sharpen(probs []float32, classes int, temperature float64) error {
	if classes < 1 || len(probs)%classes != 0 {
		return fmt.Errorf("predictive: Sharpen: %d probabilities are not rows of %d classes", len(probs), classes)
	}
	if !(temperature > 0) || math.IsInf(temperature, 0) {
		return fmt.Errorf("predictive: Sharpen: temperature %v; want a finite value > 0", temperature)
	}
	row := make([]float64, classes)
	for n := 0; n < len(probs); n += classes {
		top := 0.0
		for _, v := range probs[n : n+classes] {
			top = max(top, float64(v))
		}
		if !(top > 0) || math.IsInf(top, 0) {
			return fmt.Errorf("predictive: Sharpen: example %d has no positive finite probability", n/classes)
		}
		var sum float64
		for j := range row {
			row[j] = max(math.Pow(float64(probs[n+j])/top, 1/temperature), 1e-8)
			sum += row[j]
		}
		for j, v := range row {
			probs[n+j] = float32(v / sum)
		}
	}
	return nil
}
