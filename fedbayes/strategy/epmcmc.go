package strategy

import (
	"fmt"

	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// EPMCMCName is the registered name of EPMCMC.
const EPMCMCName = "ep-mcmc"

// EPMCMC is embarrassingly parallel MCMC with diagonal Gaussians (Neiswanger et al. 2014; Hasan
// (2023), Eq. 2.13): each client's posterior samples are summarised by a Gaussian, the global
// posterior is their product divided by the prior K-1 times (predictive.EPMCMC), and the global model
// predicts with the average of networks drawn from it. It needs the clients to sample (the engine's
// training.sampler). The next round starts from the global Gaussian's mean.
type EPMCMC struct {
	// PriorStd is the clients' prior standard deviation (the sampler's).
	PriorStd float64
}

// newEPMCMC builds EP-MCMC (it takes no options), refusing clients that do not sample.
func newEPMCMC(s Settings) (*EPMCMC, error) {
	if err := noOptions(s); err != nil {
		return nil, err
	}
	if err := requireSampler(s, "EP-MCMC combines the clients' posterior samples"); err != nil {
		return nil, err
	}
	if !(s.PriorStd > 0) {
		return nil, &FieldError{Field: "training.sampler.prior_std", Problem: fmt.Sprintf("%v; EP-MCMC needs the clients' positive prior standard deviation", s.PriorStd)}
	}
	return &EPMCMC{PriorStd: s.PriorStd}, nil
}

// Aggregate combines the round's samples into the global Gaussian.
func (e *EPMCMC) Aggregate(r *Round) (*Global, error) {
	if len(r.Draws) < 2 {
		return nil, fmt.Errorf("EP-MCMC needs at least 2 samples per client, got %d (raise the sampler's cycles or samples_per_cycle)", len(r.Draws))
	}
	g, err := predictive.EPMCMC(r.Draws, e.PriorStd)
	if err != nil {
		return nil, err
	}
	return &Global{Posterior: Means(g), Predictor: &drawnEnsemble{round: r, global: g}}, nil
}

// drawnEnsemble predicts with networks drawn from a Gaussian posterior over a deterministic net's
// parameters (predictive.DrawModels, predictive.EnsembleMean): Round.Samples networks per call.
type drawnEnsemble struct {
	round  *Round
	global *posterior.Posterior
}

// Predict implements Predictor.
func (d *drawnEnsemble) Predict(x []float32, seed int64) ([]float32, error) {
	if d.round.Model.Task == models.Regression {
		return nil, errGaussian
	}
	probs, _, _, err := d.predict(x, seed)
	return probs, err
}

// PredictGaussian implements GaussianPredictor: the equally weighted mixture of the drawn networks'
// Gaussians (Hasan (2023), Eqs. 4.6-4.7).
func (d *drawnEnsemble) PredictGaussian(x []float32, seed int64) (mean, variance []float32, err error) {
	if d.round.Model.Task != models.Regression {
		return nil, nil, fmt.Errorf("strategy: PredictGaussian on a classification model")
	}
	_, mean, variance, err = d.predict(x, seed)
	return mean, variance, err
}

// predict draws Round.Samples networks (at least 2) and averages their predictives on x.
func (d *drawnEnsemble) predict(x []float32, seed int64) (probs, mean, variance []float32, err error) {
	draws, err := predictive.DrawModels(d.global, max(d.round.Samples, 2), seed)
	if err != nil {
		return nil, nil, nil, err
	}
	return predictive.EnsembleMean(d.round.Model, draws, x)
}

func init() {
	registerBuiltin(EPMCMCName, func(s Settings) (Strategy, error) { return newEPMCMC(s) })
}
