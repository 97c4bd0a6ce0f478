package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
)

// OneshotFLName is the registered name of OneshotFL.
const OneshotFLName = "oneshotfl"

// OneshotFL is one-shot federated learning by ensemble distillation (Guha et al. 2019; a one-round
// baseline of Hasan (2023), Sec. 2.2.2 and Table 3.1): the server labels its set with the clients'
// ensemble, the softmax of their averaged log-probabilities (predictive.LogitAverage; Hasan (2023),
// App. B.2), and distils it into one network of the clients' kind. The student starts from the
// global model the round started from (Round.Previous): in the one round of the baseline, a fresh
// initialisation, as in Hasan's runner. Its options (OneshotFLOptions) are the distillation.
type OneshotFL struct {
	// Distill configures the distillation (Seed is set from the round).
	Distill predictive.DistillConfig

	model *models.Model // the K-client network, kept between rounds (compiled once)
}

// OneshotFLOptions are OneshotFL's options, the spec's aggregation.options of oneshotfl.
type OneshotFLOptions struct {
	// Distill is the distillation on the server set (zero fields: predictive's defaults).
	Distill predictive.DistillConfig `json:"distill,omitzero"`
}

// newOneshotFL builds OneshotFL from its options, refusing an experiment without a server set or
// with regression.
func newOneshotFL(s Settings) (*OneshotFL, error) {
	var o OneshotFLOptions
	if err := DecodeOptions(s, &o); err != nil {
		return nil, err
	}
	if err := checkDistill(OptionsField+".distill", o.Distill); err != nil {
		return nil, err
	}
	dc := o.Distill.WithDefaults()
	if err := firstError(
		requireServer(s, "OneshotFL distils the clients' ensemble on the server's set", hasanServer),
		requireClassification(s, "OneshotFL averages the clients' class log-probabilities"),
		checkDistilled(OptionsField+".distill", dc, s.Kind == models.Bayesian)); err != nil {
		return nil, err
	}
	return &OneshotFL{Distill: dc}, nil
}

// Aggregate distils the clients' logit average on the server set.
func (o *OneshotFL) Aggregate(r *Round) (*Global, error) {
	if r.Server == nil || r.Previous == nil {
		return nil, fmt.Errorf("OneshotFL needs the server set and the round's starting model")
	}
	m, stacked, err := clientNetwork(&o.model, r)
	if err != nil {
		return nil, err
	}
	probs, err := clientPredictives(m, stacked, r.Draws, r.Samples, r.Server.X, r.Seed)
	if err != nil {
		return nil, fmt.Errorf("OneshotFL: the clients on the server set: %w", err)
	}
	teacher, err := predictive.LogitAverage(probs, r.Model.NumClasses)
	if err != nil {
		return nil, err
	}
	g, err := distil(r, r.Previous, teacher, o.Distill)
	if err != nil {
		return nil, err
	}
	// LogitAverage weighs the clients equally.
	return &Global{Posterior: g, Weights: aggregate.EqualWeights(len(r.IDs))}, nil
}

func init() {
	registerBuiltin(OneshotFLName, func(s Settings) (Strategy, error) { return newOneshotFL(s) })
}
