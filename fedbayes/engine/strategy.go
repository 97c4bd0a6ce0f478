package engine

import (
	"errors"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// strategySettings are the options of a spec's server step that the strategies read.
func strategySettings(s *Spec) strategy.Settings {
	a := s.Aggregation
	st := strategy.Settings{
		Weighting:  a.Weighting,
		Population: a.Population,
		DWCPolicy:  a.DWCPolicy,
		Compat:     compatOf(s.Model),
		Kind:       models.Kind(s.Model.Kind),
		HasServer:  s.Dataset.ServerFraction > 0,
		Sampling:   s.Training.Sampler != nil,
		Regression: data.RegressionSet(s.Dataset.Name),
	}
	if s.Training.Sampler != nil {
		st.PriorStd = samplerConfig(s).PriorStd
	}
	if sv := a.Server; sv != nil {
		st.FedBE = strategy.FedBEOptions{Samples: sv.Samples, Alpha: sv.Alpha}
		if sv.Distill != nil {
			st.FedBE.Distill = *sv.Distill
		}
		st.BetaMin, st.BetaMax = sv.BetaMin, sv.BetaMax
		st.StudentStart = sv.StudentStart
		st.FedPA = predictive.FedPAConfig{Rho: sv.FedPARho, ServerLR: sv.ServerLR}
		if sv.FedKT != nil {
			st.FedKT = *sv.FedKT
		}
	}
	if st.FedKT.Local == (predictive.LocalConfig{}) {
		t := s.Training
		st.FedKT.Local = predictive.LocalConfig{Optimizer: t.Optimizer, LearningRate: t.LearningRate, Momentum: t.Momentum, Epochs: t.LocalEpochs, BatchSize: t.BatchSize}
	}
	if st.FedKT.Distill == (predictive.DistillConfig{}) {
		st.FedKT.Distill = st.FedBE.Distill
	}
	return st
}

// newStrategy builds the spec's server strategy; a strategy's refusal of its settings becomes a
// *SpecError naming the field.
func newStrategy(s *Spec) (strategy.Strategy, error) {
	st, err := strategy.New(s.Aggregation.Rule, strategySettings(s))
	var fe *strategy.FieldError
	if errors.As(err, &fe) {
		return nil, specErr(fe.Field, "%s (aggregation.rule %s)", fe.Problem, s.Aggregation.Rule)
	}
	return st, err
}

// validateStrategy checks a spec whose rule is a strategy other than a parameter-space rule: the
// strategy checks its settings, and the server options are checked here.
func validateStrategy(c *Spec) error {
	if sv := c.Aggregation.Server; sv != nil {
		if sv.Samples < 0 {
			return specErr("aggregation.server.samples", "%d; must be >= 0 (0 means 10)", sv.Samples)
		}
		if sv.Alpha < 0 {
			return specErr("aggregation.server.alpha", "%v; must be >= 0 (0 means 1)", sv.Alpha)
		}
		if d := sv.Distill; d != nil {
			if err := oneOf("aggregation.server.distill.optimizer", d.Optimizer, "", "sgd", "adam"); err != nil {
				return err
			}
			// SWA cycles against epochs are checked by the strategies that distil (their defaults differ).
			if d.Epochs < 0 || d.BatchSize < 0 || d.LearningRate < 0 || d.SWACycles < 0 {
				return specErr("aggregation.server.distill", "epochs, batch_size, learning_rate and swa_cycles must be >= 0 (0 takes the default)")
			}
		}
	}
	if err := validateFedKT(c); err != nil {
		return err
	}
	if sv := c.Aggregation.Server; sv != nil && sv.StudentStart != "" {
		if err := oneOf("aggregation.server.student_start", sv.StudentStart, strategy.StudentStarts...); err != nil {
			return err
		}
		if r := c.Aggregation.Rule; !strategy.Is(r, strategy.DBCM) && !strategy.Is(r, strategy.DBetaPredBayes) {
			return specErr("aggregation.server.student_start", "set, but aggregation.rule is %s; it applies to d-bcm and d-beta-predbayes", c.Aggregation.Rule)
		}
	}
	if err := oneOf("aggregation.weighting", c.Aggregation.Weighting, strategy.Weightings...); err != nil {
		return err
	}
	_, err := newStrategy(c)
	return err
}

// validateSampler checks training.sampler: SG-MCMC samples deterministic networks, all active clients
// at once, with its own update (no optimizer options of its own kind).
func validateSampler(c *Spec) error {
	t := c.Training
	if t.Sampler == nil {
		return nil
	}
	if c.Model.Kind != string(models.Deterministic) {
		return specErr("training.sampler", "samples the parameters of a deterministic network; model.kind is %q", c.Model.Kind)
	}
	if c.Model.Arch == string(models.ArchResNet20) {
		return specErr("training.sampler", "resnet20 keeps batch-norm running statistics, which are not parameters to sample")
	}
	if t.Mode == "sequential" {
		return specErr("training.mode", "sequential is not available with training.sampler (the clients sample together)")
	}
	if t.ProxMu > 0 || t.Prior == "previous-global" {
		return specErr("training.sampler", "the sampler has its own Gaussian prior (prior_std); unset training.prox_mu and training.prior")
	}
	if err := samplerConfig(c).Validate(); err != nil {
		return specErr("training.sampler", "%v", err)
	}
	return nil
}

// validateFedKT checks aggregation.server.fedkt: only the fedkt strategy reads it, its sizes are not
// negative, and the K s t teachers it trains at once stay within the engine's bound on clients.
func validateFedKT(c *Spec) error {
	sv := c.Aggregation.Server
	if sv == nil || sv.FedKT == nil {
		return nil
	}
	if !strategy.Is(c.Aggregation.Rule, strategy.FedKTName) {
		return specErr("aggregation.server.fedkt", "set, but aggregation.rule is %s; it configures fedkt", c.Aggregation.Rule)
	}
	k := sv.FedKT
	if k.Students < 0 || k.Teachers < 0 {
		return specErr("aggregation.server.fedkt", "students %d and teachers %d must be >= 0 (0 takes 2 and 5)", k.Students, k.Teachers)
	}
	if k.Local.Epochs < 0 || k.Local.BatchSize < 0 || k.Local.LearningRate < 0 || k.Distill.Epochs < 0 || k.Distill.BatchSize < 0 || k.Distill.LearningRate < 0 {
		return specErr("aggregation.server.fedkt", "the epochs, batch sizes and learning rates of local and distill must be >= 0 (0 takes the default)")
	}
	if err := oneOf("aggregation.server.fedkt.local.optimizer", k.Local.Optimizer, "", "sgd", "adam"); err != nil {
		return err
	}
	if err := oneOf("aggregation.server.fedkt.distill.optimizer", k.Distill.Optimizer, "", "sgd", "adam"); err != nil {
		return err
	}
	d := k.WithDefaults()
	if d.Students > maxClients || d.Teachers > maxClients || c.Partition.Clients > maxClients || c.Partition.Clients*d.Students*d.Teachers > maxClients {
		return specErr("aggregation.server.fedkt", "%d clients x %d students x %d teachers: too many teacher networks; at most %d", c.Partition.Clients, d.Students, d.Teachers, maxClients)
	}
	return nil
}
