package strategy

import (
	"encoding/json"
	"fmt"

	"fedbayes.dev/fedbayes/aggregate"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// Strategy is the server step of a federated round (Ozer et al. (2022), Alg. 1, line "aggregate";
// Chen & Chao, Alg. 1, "server"): it combines the clients of a round into the next global model.
type Strategy interface {
	// Aggregate combines the clients that trained in round r. It must not keep state between rounds
	// (use r.Previous), so that a resumed run gives the same numbers as an uninterrupted one.
	Aggregate(r *Round) (*Global, error)
}

// Round is what the server holds at the end of a round: the clients' trained models and the context
// a strategy may need.
type Round struct {
	// Number is the round, from 1.
	Number int
	// IDs are the active clients' indices into the partition, in the order of the client models.
	IDs []int
	// Sizes are the active clients' training-set sizes, in the same order.
	Sizes []int
	// Stacked holds the clients' trained models with a leading client axis [len(IDs), ...], and
	// List the same models one by one; the engine sets one of them (Clients and StackedClients
	// convert).
	Stacked *posterior.Posterior
	List    []*posterior.Posterior
	// Draws are the clients' posterior samples when local training samples (SG-MCMC, the engine's
	// training.sampler), each stacked like Stacked, which then holds each client's sample mean; nil
	// otherwise.
	//
	// Stacked, List and Draws are read-only: the engine hands the same client models to every run of
	// a sweep whose clients trained alike (the first round of the settings that differ only in the
	// strategy), so a strategy that changed them would change the other runs.
	Draws []*posterior.Posterior
	// Previous is the global model the clients started the round from.
	Previous *posterior.Posterior
	// Seed fixes the strategy's randomness in this round (derived from the run's seed and Number).
	Seed int64
	// Model is the clients' network with one client (Clients = 1); a strategy that predicts or
	// distils builds its models from it.
	Model models.Config
	// Server is the server's own set (labelled; predictive-space strategies use its inputs as the
	// unlabelled transfer set and its labels only where a method fits on them), or nil if the
	// experiment has none.
	Server *data.Dataset
	// Samples is the number of Monte Carlo samples of a stochastic client's predictive.
	Samples int
	// Data, when not nil, returns the active clients' training sets in the order of IDs. Only a
	// strategy whose clients do more than send their trained models reads it: FedKT, whose clients
	// train teacher ensembles of their own (Li et al. 2021). The engine sets it; it copies the
	// examples, so call it once.
	Data func() ([]*data.Dataset, error)
}

// ClientData returns the active clients' training sets (Data), or an error if the round has none.
func (r *Round) ClientData() ([]*data.Dataset, error) {
	if r.Data == nil {
		return nil, fmt.Errorf("strategy: round %d gives no client data", r.Number)
	}
	sets, err := r.Data()
	if err != nil {
		return nil, err
	}
	if len(sets) != len(r.IDs) {
		return nil, fmt.Errorf("strategy: round %d: %d client data sets for %d clients", r.Number, len(sets), len(r.IDs))
	}
	return sets, nil
}

// Clients returns the round's client models one by one.
func (r *Round) Clients() ([]*posterior.Posterior, error) {
	if r.List == nil {
		if r.Stacked == nil {
			return nil, fmt.Errorf("strategy: round %d holds no client models", r.Number)
		}
		l, err := posterior.Unstack(r.Stacked)
		if err != nil {
			return nil, err
		}
		r.List = l
	}
	return r.List, nil
}

// StackedClients returns the round's client models stacked on a leading client axis.
func (r *Round) StackedClients() (*posterior.Posterior, error) {
	if r.Stacked == nil {
		if r.List == nil {
			return nil, fmt.Errorf("strategy: round %d holds no client models", r.Number)
		}
		s, err := posterior.Stack(r.List)
		if err != nil {
			return nil, err
		}
		r.Stacked = s
	}
	return r.Stacked, nil
}

// SizeWeights are the active clients' sizes as float64 weights (unnormalised).
func (r *Round) SizeWeights() []float64 {
	w := make([]float64, len(r.Sizes))
	for i, n := range r.Sizes {
		w[i] = float64(n)
	}
	return w
}

// NormalizedSizeWeights are the active clients' sizes over their sum (aggregate.SizeWeights).
func (r *Round) NormalizedSizeWeights() ([]float64, error) { return aggregate.SizeWeights(r.Sizes) }

// Global is the outcome of a strategy's round.
type Global struct {
	// Posterior is the global model the next round's clients start from, in the clients'
	// parameterisation. Unless Predictor is set, it is also the model that is evaluated.
	Posterior *posterior.Posterior
	// Predictor, when not nil, is how the global model predicts: a predictive-space combination of
	// the clients (BCM, mixture, beta-PredBayes) rather than one network.
	Predictor Predictor
	// Weights are the normalised client weights the strategy used (recorded with the round), or nil.
	Weights []float64
	// Metrics are figures of the round the strategy reports (for example "dwc_fallbacks" or
	// "beta"), recorded with the round's metrics.
	Metrics map[string]float64
	// Files are documents of the round the strategy reports beyond numbers, by file name (letters,
	// digits, '.', '_' and '-'), which the engine writes atomically into the run's directory before
	// the round's row: beta-PredBayes's fitted beta with its server NLL curve (predictive.BetaFile).
	// A later round's file replaces an earlier one's.
	Files map[string][]byte
}

// Predictor is a global model that is not one network: it returns class probabilities [N, C] for the
// N examples of x (flat, in the clients' input shape). seed fixes its Monte Carlo noise.
type Predictor interface {
	Predict(x []float32, seed int64) ([]float32, error)
}

// GaussianPredictor is a Predictor of a regression global model (models.Regression): it returns the
// predictive mean and variance of each of the N examples of x. A regression strategy whose global
// model is not one network sets a Predictor that implements it; its Predict then reports that it
// predicts Gaussians.
type GaussianPredictor interface {
	Predictor
	PredictGaussian(x []float32, seed int64) (mean, variance []float32, err error)
}

// errGaussian is what Predict of a GaussianPredictor returns: a regression model has no class
// probabilities.
var errGaussian = fmt.Errorf("strategy: a regression global model predicts Gaussians (PredictGaussian), not class probabilities")

// Settings are what a strategy's factory is given: facts about the experiment its server step
// runs in, which the engine derives from the spec, and the strategy's own options (Options), which
// the strategy decodes and validates itself (DecodeOptions). A registered strategy reads what it
// needs and may ignore the rest.
//
// Weighting, Population and DWCPolicy are the options of the parameter-space rules (package
// aggregate), which stay fields of the spec's aggregation object (aggregation.weighting,
// aggregation.population, aggregation.dwc_policy) rather than aggregation.options: the weighting is
// a results label of every run, and every run records the DWC policy's default.
type Settings struct {
	// Weighting is the client weighting of the parameter-space rules: equal, size, maxdisc or
	// fixedpoint (Fischer et al. (2024), Eqs. 18-21).
	Weighting string
	// Population is PPA's sample size N (0: aggregate.DefaultPopulationSize).
	Population int
	// DWCPolicy is keep-previous, conflation or error (aggregate.DWCPolicy).
	DWCPolicy string
	// Compat is the model's compatibility mode (aggregate.Options.BFLP, BABFL).
	Compat models.Compat
	// Kind is the clients' model kind.
	Kind models.Kind
	// HasServer says the experiment keeps a server set (Round.Server is not nil).
	HasServer bool
	// Sampling says the clients draw posterior samples (Round.Draws is not nil).
	Sampling bool
	// PriorStd is the standard deviation of the clients' Gaussian prior on every parameter (the
	// sampler's), which EP-MCMC divides out.
	PriorStd float64
	// Regression says the clients predict Gaussians (models.Regression); the strategies that
	// combine class probabilities or vote on labels refuse it.
	Regression bool
	// Local is the clients' local training (optimizer, learning rate, momentum, epochs, batch
	// size), which a strategy that trains networks of the clients' own (FedKT's teachers) takes
	// where its options leave it unset.
	Local predictive.LocalConfig
	// Clients is the number of clients of the partition, Active how many take part in a round
	// (partition.participation; 0: all).
	Clients, Active int
	// MaxNetworks is the most networks the engine trains at once (its bound on clients); a
	// strategy that trains several networks per client (FedKT) keeps within it. 0: no bound.
	MaxNetworks int
	// Options are the strategy's own options, the spec's aggregation.options as raw JSON (nil when
	// the spec has none): the strategy decodes them with DecodeOptions into its options struct,
	// with its defaults, and refuses a field it does not know.
	Options json.RawMessage
}

// FieldError is a strategy refusing its settings; Field is the spec field at fault (a JSON path of
// the engine's spec, e.g. "dataset.server_fraction").
type FieldError struct {
	Field, Problem string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }
