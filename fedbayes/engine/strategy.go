package engine

import (
	"errors"
	"math"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// strategySettings are what the spec's strategy is given: the facts of the experiment and the
// strategy's own options (aggregation.options), which the strategy decodes and checks.
func strategySettings(s *Spec) strategy.Settings {
	a, t := s.Aggregation, s.Training
	st := strategy.Settings{
		Weighting:   a.Weighting,
		Population:  a.Population,
		DWCPolicy:   a.DWCPolicy,
		Compat:      compatOf(s.Model),
		Kind:        s.Model.Kind,
		HasServer:   s.Dataset.ServerFraction > 0,
		Sampling:    t.Sampler != nil,
		Regression:  data.RegressionSet(s.Dataset.Name),
		Local:       predictive.LocalConfig{Optimizer: t.Optimizer, LearningRate: t.LearningRate, Momentum: t.Momentum, Epochs: t.LocalEpochs, BatchSize: t.BatchSize},
		Clients:     s.Partition.Clients,
		Active:      activeClients(s.Partition),
		MaxNetworks: maxClients,
		Options:     a.Options,
	}
	if t.Sampler != nil {
		st.PriorStd = samplerConfig(s).PriorStd
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

// activeClients is how many clients take part in a round (partition.participation, as
// partition.NewParticipation rounds it; the spec's check refuses a fraction outside (0, 1]).
func activeClients(p PartitionSpec) int {
	if !(p.Participation > 0 && p.Participation <= 1) {
		return p.Clients
	}
	return max(1, int(math.Round(p.Participation*float64(p.Clients))))
}

// setsClientPriors reports whether the spec's strategy sets the prior each client trains against
// (strategy.ClientPriors: partitioned VI, or a strategy of the user's own), so that the clients'
// models need prior variables; false for a parameter-space rule or a strategy the spec cannot build
// (its refusal is validateStrategy's).
func setsClientPriors(s *Spec) bool {
	if _, err := aggregate.ParseRule(s.Aggregation.Rule); err == nil || !strategy.Known(s.Aggregation.Rule) {
		return false
	}
	st, err := newStrategy(s)
	if err != nil {
		return false
	}
	_, ok := st.(strategy.ClientPriors)
	return ok
}

// validateStrategy checks a spec whose rule is a strategy other than a parameter-space rule: the
// weighting here, and the strategy checks its settings and its own options when it is built.
func validateStrategy(c *Spec) error {
	if err := oneOf("aggregation.weighting", c.Aggregation.Weighting, strategy.Weightings...); err != nil {
		return err
	}
	if setsClientPriors(c) {
		if c.Training.Prior == "previous-global" {
			return specErr("training.prior", "previous-global, but aggregation.rule %s sets each client's prior itself (its cavity); unset training.prior", c.Aggregation.Rule)
		}
		if w := c.Model.KLWeight; w != 0 && w != 1 {
			return specErr("model.kl_weight", "%v, but aggregation.rule %s's clients maximise the ELBO against their cavities: want 1 (or unset)", w, c.Aggregation.Rule)
		}
		if c.Training.ProxMu > 0 {
			return specErr("training.prox_mu", "%v, but aggregation.rule %s's clients maximise the ELBO against their cavities: a proximal term would change that objective; unset it", c.Training.ProxMu, c.Aggregation.Rule)
		}
	}
	st, err := newStrategy(c)
	if sc, ok := st.(strategy.SequentialClients); err == nil && ok && sc.Sequential() && c.Training.Mode != "sequential" {
		return specErr("training.mode", "%s, but aggregation.rule %s's sequential schedule trains the round's clients one after another: want sequential", c.Training.Mode, c.Aggregation.Rule)
	}
	return err
}

// validateSampler checks training.sampler: SG-MCMC samples deterministic networks, all active clients
// at once, with its own update (no optimizer options of its own kind).
func validateSampler(c *Spec) error {
	t := c.Training
	if t.Sampler == nil {
		return nil
	}
	if c.Model.Kind != models.Deterministic {
		return specErr("training.sampler", "samples the parameters of a deterministic network; model.kind is %q", c.Model.Kind)
	}
	if c.Model.Arch == models.ArchResNet20 {
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
