package predictive

import (
	"fmt"
	"math"
	"math/rand/v2"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
)

// SamplerMethod names a stochastic-gradient MCMC sampler.
type SamplerMethod string

const (
	// SGLD is stochastic gradient Langevin dynamics (Welling & Teh 2011; Hasan (2023), Eqs. 2.10-2.11
	// with a minibatch gradient): theta += -eta grad U/N + sqrt(2 eta T / N) xi, at a constant step
	// size eta, with noise at every step.
	SGLD SamplerMethod = "sgld"
	// CSGHMC is cyclical stochastic gradient Hamiltonian Monte Carlo (Zhang et al. 2020), the client
	// sampler of Hasan (2023), Sec. 3.3.4: momentum v = (1-alpha) v - eta_t grad U/N + noise,
	// theta += v, with the cosine step size eta_t = eta_0/2 (cos(pi r_t) + 1) restarting every cycle
	// (r_t in [0, 1) the position in the cycle), noise sqrt(2 alpha eta_t T / N) xi only in the
	// sampling phase at the end of each cycle, and samples taken there.
	CSGHMC SamplerMethod = "csghmc"
)

// SamplerConfig configures Sample. Zero values take the documented defaults, those of Hasan (2023),
// Tables B.1-B.3 where the thesis gives them.
type SamplerConfig struct {
	// Method is CSGHMC (default) or SGLD.
	Method SamplerMethod `json:"method,omitempty"`
	// LearningRate is eta_0, the (peak) step size on the mean loss U/N (default 0.1, Table B.3).
	LearningRate float64 `json:"learning_rate,omitempty"`
	// Friction is cSGHMC's alpha = 1 - momentum (default 0.1, momentum 0.9).
	Friction float64 `json:"friction,omitempty"`
	// Temperature is T of the tempered posterior p(theta|D)^(1/T); 0 means 1/|D_k| for client k, the
	// value of Tables B.2-B.3.
	Temperature float64 `json:"temperature,omitempty"`
	// PriorStd is the standard deviation of the Gaussian prior N(0, s^2 I) on every parameter
	// (default 5e4, Sec. 3.3.3).
	PriorStd float64 `json:"prior_std,omitempty"`
	// Epochs is the total training length in passes over the largest client (default 10).
	Epochs int `json:"epochs,omitempty"`
	// Cycles is the number of step-size cycles (default 5, Table B.2).
	Cycles int `json:"cycles,omitempty"`
	// SamplesPerCycle is the number of samples taken at the end of each cycle (default 2).
	SamplesPerCycle int `json:"samples_per_cycle,omitempty"`
	// MaxSamples keeps the last MaxSamples samples (default 6, "Maximum Samples" of Table B.2).
	MaxSamples int `json:"max_samples,omitempty"`
	// ExploreFraction is the fraction of each cycle without noise before the sampling phase
	// (default 0.75); SGLD adds noise throughout and uses it only to place the samples.
	ExploreFraction float64 `json:"explore_fraction,omitempty"`
	// BatchSize is the minibatch size per client (default 100, App. B.2).
	BatchSize int `json:"batch_size,omitempty"`
	// Seed fixes the batch order and the injected noise.
	Seed int64 `json:"seed,omitempty"`
}

// WithDefaults fills zero fields with their defaults.
func (c SamplerConfig) WithDefaults() SamplerConfig {
	if c.Method == "" {
		c.Method = CSGHMC
	}
	if c.LearningRate == 0 {
		c.LearningRate = 0.1
	}
	if c.Friction == 0 {
		c.Friction = 0.1
	}
	if c.PriorStd == 0 {
		c.PriorStd = 5e4
	}
	if c.Epochs == 0 {
		c.Epochs = 10
	}
	if c.Cycles == 0 {
		c.Cycles = 5
	}
	if c.SamplesPerCycle == 0 {
		c.SamplesPerCycle = 2
	}
	if c.MaxSamples == 0 {
		c.MaxSamples = 6
	}
	if c.ExploreFraction == 0 {
		c.ExploreFraction = 0.75
	}
	if c.BatchSize == 0 {
		c.BatchSize = 100
	}
	return c
}

// Validate reports the first invalid field by name.
func (c SamplerConfig) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("predictive: SamplerConfig.%s = %v; %s", field, v, want)
	}
	switch {
	case c.Method != SGLD && c.Method != CSGHMC:
		return bad("Method", c.Method, `want "sgld" or "csghmc"`)
	case !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0):
		return bad("LearningRate", c.LearningRate, "want positive and finite")
	case !(c.Friction > 0 && c.Friction <= 1):
		return bad("Friction", c.Friction, "want in (0, 1]")
	case !(c.Temperature >= 0) || math.IsInf(c.Temperature, 0):
		return bad("Temperature", c.Temperature, "want non-negative and finite (0: 1/|D_k|)")
	case !(c.PriorStd > 0) || math.IsInf(c.PriorStd, 0):
		return bad("PriorStd", c.PriorStd, "want positive and finite")
	case c.Epochs < 1:
		return bad("Epochs", c.Epochs, "want at least 1")
	case c.Cycles < 1:
		return bad("Cycles", c.Cycles, "want at least 1")
	case c.SamplesPerCycle < 1:
		return bad("SamplesPerCycle", c.SamplesPerCycle, "want at least 1")
	case c.MaxSamples < 1:
		return bad("MaxSamples", c.MaxSamples, "want at least 1")
	case !(c.ExploreFraction >= 0 && c.ExploreFraction < 1):
		return bad("ExploreFraction", c.ExploreFraction, "want in [0, 1)")
	case c.BatchSize < 1:
		return bad("BatchSize", c.BatchSize, "want at least 1")
	}
	return nil
}

// Samples are the posterior samples of K clients drawn together.
type Samples struct {
	// Models holds the samples in the order drawn, each a stacked deterministic posterior [K, ...]
	// (sample s of every client).
	Models []*posterior.Posterior
	// Steps are the steps (counted from 1) at which the samples were taken.
	Steps []int
	// TotalSteps is the number of steps run.
	TotalSteps int
	// Examples is the number of examples the steps read, over every client.
	Examples int
}

// Sample runs the configured SG-MCMC sampler on the K clients of m (a deterministic net: every
// parameter is sampled; use models.Model.Predict directly for variational and MC-dropout clients),
// client k on clients[k], and returns their posterior samples.
//
// The model's trainer provides the likelihood step: a plain SGD step with the current step size
// eta_t gives exactly -eta_t grad(mean NLL) for every client at once; the prior gradient, the
// momentum and the Gaussian noise are then added on the host in float64, so the sampler is the
// exact update written in CSGHMC / SGLD whatever optimizer hooks the models package offers. The
// model's parameters are left at the last step's values.
func Sample(m *models.Model, clients []*data.Dataset, cfg SamplerConfig) (*Samples, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sm, err := NewSampler(m)
	if err != nil {
		return nil, err
	}
	return sm.Sample(clients, cfg)
}

// Sampler is the SG-MCMC sampler of one model: its likelihood step (a plain SGD trainer, whose step
// size is set before every step) is built once, so that a model sampled again (each round of a
// federated run) does not build and compile the step again. Sample(m, ...) is
// NewSampler(m).Sample(...). While a Sampler is in use, no other trainer of m may be created
// (models.Model keeps one trainer).
type Sampler struct {
	m  *models.Model
	tr *models.Trainer
}

// NewSampler checks that m is a network the sampler can sample (deterministic, without batch-norm
// statistics) and creates its likelihood step.
func NewSampler(m *models.Model) (*Sampler, error) {
	mc := m.Config()
	if mc.Kind != models.Deterministic {
		return nil, fmt.Errorf("predictive: Sample needs a deterministic net, got kind %q (variational and MC-dropout clients are sampled by Predict)", mc.Kind)
	}
	if mc.Arch == models.ArchResNet20 {
		return nil, fmt.Errorf("predictive: Sample: %q keeps batch-norm running statistics, which are not parameters to sample", mc.Arch)
	}
	// The learning rate is a placeholder: Sample sets the schedule's step size before every step.
	tr, err := m.NewTrainer(models.OptimizerConfig{Kind: models.SGD, LearningRate: 1})
	if err != nil {
		return nil, err
	}
	return &Sampler{m: m, tr: tr}, nil
}

// Sample runs the sampler from the model's current parameters, as the function Sample does.
func (sm *Sampler) Sample(clients []*data.Dataset, cfg SamplerConfig) (*Samples, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, tr := sm.m, sm.tr
	K := m.Clients()
	if len(clients) != K {
		return nil, fmt.Errorf("predictive: Sample: %d client datasets for a model of %d clients", len(clients), K)
	}
	f, err := newFeed(clients, cfg.BatchSize, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	// Plain SGD keeps no state, but a step of another trainer of m may have left some in its scope.
	if err := tr.ResetOptimizer(); err != nil {
		return nil, err
	}
	p, err := m.Posterior()
	if err != nil {
		return nil, err
	}
	theta, err := flatten(p)
	if err != nil {
		return nil, err
	}
	vel := theta.zerosLike()
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5a4d91e))
	total := cfg.Epochs * f.stepsPerEpoch()
	plan := newSchedule(cfg, total)
	out := &Samples{TotalSteps: total}
	alpha := cfg.Friction
	if cfg.Method == SGLD {
		alpha = 1
	}
	priorPrec := 1 / (cfg.PriorStd * cfg.PriorStd)
	noiseStd := make([]float64, K)
	decay := make([]float64, K)
	var lr float64
	loop := models.Loop{Epochs: cfg.Epochs, Steps: f.stepsPerEpoch(),
		BeforeStep: func(at models.LoopStep) error {
			lr = plan.lr(at.Index)
			return tr.SetLearningRate(lr)
		},
		Batch: func(models.LoopStep) (models.Batch, error) {
			b := f.next()
			out.Examples += len(b.X) / f.exSize
			return b, nil
		},
		// The trainer's plain SGD step gave the likelihood part of the update; the prior, the
		// momentum and the noise are added here, and the schedule's samples taken.
		AfterStep: func(at models.LoopStep, _ models.StepStats) error {
			s := at.Index
			after, err := m.Posterior()
			if err != nil {
				return err
			}
			stepped, err := flatten(after)
			if err != nil {
				return err
			}
			noisy := plan.noisy(s)
			for k := 0; k < K; k++ {
				n := float64(f.sizes[k])
				T := cfg.Temperature
				if T == 0 {
					T = 1 / n
				}
				decay[k] = lr * priorPrec / n
				noiseStd[k] = 0
				if noisy {
					noiseStd[k] = math.Sqrt(2 * alpha * lr * T / n)
				}
			}
			for i, th := range theta.values {
				st, v := stepped.values[i], vel.values[i]
				per := len(th) / K
				for j := range th {
					k := j / per
					d := float64(st[j]-th[j]) - decay[k]*float64(th[j])
					if noiseStd[k] > 0 {
						d += noiseStd[k] * rng.NormFloat64()
					}
					if cfg.Method == CSGHMC {
						nv := (1-alpha)*float64(v[j]) + d
						v[j] = float32(nv)
						d = nv
					}
					th[j] = float32(float64(th[j]) + d)
				}
			}
			if err := setFlat(m, theta); err != nil {
				return err
			}
			if plan.take(s) {
				sp, err := theta.posterior()
				if err != nil {
					return err
				}
				out.Models = append(out.Models, sp)
				out.Steps = append(out.Steps, s+1)
			}
			return nil
		},
	}
	if err := loop.Run(tr); err != nil {
		return nil, fmt.Errorf("predictive: sampler: %w", err)
	}
	if len(out.Models) > cfg.MaxSamples {
		drop := len(out.Models) - cfg.MaxSamples
		out.Models, out.Steps = out.Models[drop:], out.Steps[drop:]
	}
	if len(out.Models) == 0 {
		return nil, fmt.Errorf("predictive: the sampler ran %d steps and took no sample; raise Epochs", total)
	}
	return out, nil
}

// setFlat loads host values into the model.
func setFlat(m *models.Model, f *flatParams) error {
	p, err := f.posterior()
	if err != nil {
		return err
	}
	return m.SetPosterior(p)
}

// schedule places the step sizes, the noisy steps and the samples of a sampler run.
type schedule struct {
	cfg      SamplerConfig
	total    int
	cycleLen int
	samples  map[int]bool
}

// newSchedule divides total steps into cfg.Cycles cycles (the last may be shorter) and places
// SamplesPerCycle samples evenly in the sampling phase of each cycle, the last at its final step.
func newSchedule(cfg SamplerConfig, total int) *schedule {
	s := &schedule{cfg: cfg, total: total, samples: map[int]bool{}}
	s.cycleLen = max(1, (total+cfg.Cycles-1)/cfg.Cycles)
	for start := 0; start < total; start += s.cycleLen {
		end := min(start+s.cycleLen, total) - 1
		length := end - start + 1
		phase := max(1, length-int(math.Floor(cfg.ExploreFraction*float64(length))))
		gap := max(1, phase/cfg.SamplesPerCycle)
		for j := 0; j < cfg.SamplesPerCycle && end-j*gap >= start; j++ {
			s.samples[end-j*gap] = true
		}
	}
	return s
}

// position returns r in [0, 1), the position of step s in its cycle.
func (s *schedule) position(step int) float64 {
	return float64(step%s.cycleLen) / float64(s.cycleLen)
}

// lr is the step size at step s: cosine-cyclical for cSGHMC (Zhang et al. 2020, Eq. 1), constant for
// SGLD.
func (s *schedule) lr(step int) float64 {
	if s.cfg.Method == SGLD {
		return s.cfg.LearningRate
	}
	// Keep the step size positive at the very end of a cycle (the trainer rejects 0).
	return max(s.cfg.LearningRate/2*(math.Cos(math.Pi*s.position(step))+1), 1e-6*s.cfg.LearningRate)
}

// noisy reports whether step s injects noise: always for SGLD, in the sampling phase for cSGHMC.
func (s *schedule) noisy(step int) bool {
	return s.cfg.Method == SGLD || s.position(step) >= s.cfg.ExploreFraction
}

// take reports whether a sample is taken after step s.
func (s *schedule) take(step int) bool { return s.samples[step] }
