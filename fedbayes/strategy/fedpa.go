package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/predictive"
)

// FedPAName is the registered name of FedPA.
const FedPAName = "fedpa"

// FedPA is federated posterior averaging (Al-Shedivat et al. 2021; a one-round baseline of Hasan
// (2023), Table 3.1): each client summarises its posterior samples by their mean and a shrinkage
// covariance and sends the gradient of its Gaussian's negative log density at the global model; the
// server takes one step on their weighted sum (predictive.FedPA). It needs the clients to sample (the
// engine's training.sampler); the clients are weighted by their sizes.
type FedPA struct {
	// Config holds the shrinkage rho and the server step size.
	Config predictive.FedPAConfig
}

// FedPAOptions are FedPA's options, the spec's aggregation.options of fedpa: predictive's
// configuration, rho (nil: 0.4, Hasan (2023), Tables B.2-B.3) and server_lr (0: 1).
type FedPAOptions = predictive.FedPAConfig

// newFedPA builds FedPA from its options (FedPAOptions), refusing clients that do not sample.
func newFedPA(s Settings) (*FedPA, error) {
	var o FedPAOptions
	if err := DecodeOptions(s, &o); err != nil {
		return nil, err
	}
	c := o.WithDefaults()
	if err := firstError(requireSampler(s, "FedPA summarises the clients' posterior samples"), invalid(OptionsField, c.Validate())); err != nil {
		return nil, err
	}
	return &FedPA{Config: c}, nil
}

// Aggregate takes FedPA's server step from the previous global model.
func (f *FedPA) Aggregate(r *Round) (*Global, error) {
	if len(r.Draws) == 0 || r.Previous == nil {
		return nil, fmt.Errorf("FedPA needs the clients' samples and the previous global model")
	}
	g, err := predictive.FedPA(r.Previous, r.Draws, r.SizeWeights(), f.Config)
	if err != nil {
		return nil, err
	}
	w, err := r.NormalizedSizeWeights()
	return &Global{Posterior: g, Weights: w}, err
}

func init() {
	registerBuiltin(FedPAName, func(s Settings) (Strategy, error) { return newFedPA(s) })
}
