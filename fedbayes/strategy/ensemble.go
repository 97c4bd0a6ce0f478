package strategy

import (
	"encoding/json"
	"fmt"
	"slices"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/posterior"
	"fedbayes.dev/fedbayes/predictive"
)

// The predictive-space strategies of Hasan (2023).
const (
	// BCM is the Bayesian committee machine, the normalised product of the clients' predictives
	// (Hasan (2023), Eq. 3.3, with the uniform prior predictive of a zero-mean symmetric prior).
	BCM = "bcm"
	// Mixture is the clients' size-weighted mixture of predictives (Hasan (2023), Eq. 4.5).
	Mixture = "mixture"
	// BetaPredBayes interpolates between the mixture and the product with beta fitted on the server
	// set (Hasan (2023), Eqs. 4.8 and 4.11).
	BetaPredBayes = "beta-predbayes"
	// DBCM is the BCM distilled on the server set into one network (Hasan (2023), Alg. 1).
	DBCM = "d-bcm"
	// DBetaPredBayes is beta-PredBayes distilled on the server set into one network (Hasan (2023),
	// Alg. 2).
	DBetaPredBayes = "d-beta-predbayes"
)

// MetricBeta is the beta that beta-PredBayes fitted in the round (recorded with the round).
const MetricBeta = "beta"

// Where the distilled forms' student starts (DistilledOptions.StudentStart).
const (
	// StudentFromAverage starts the student at the clients' size-weighted average (the default),
	// which keeps over several rounds what the earlier rounds learned.
	StudentFromAverage = "average"
	// StudentFromPrevious starts the student at the global model the round started from: in round 1
	// a fresh initialisation, as Hasan (2023), Algs. 1-2.
	StudentFromPrevious = "previous"
)

// StudentStarts lists the values of DistilledOptions.StudentStart ("" is StudentFromAverage).
var StudentStarts = []string{StudentFromAverage, StudentFromPrevious}

// BetaOptions are beta-PredBayes's options, the spec's aggregation.options of beta-predbayes: the
// range of its search for beta (both 0: [0, 1], Hasan (2023)).
type BetaOptions struct {
	// BetaMin and BetaMax bound beta.
	BetaMin float64 `json:"beta_min,omitempty"`
	BetaMax float64 `json:"beta_max,omitempty"`
}

// DistilledOptions are the options of the distilled forms, the spec's aggregation.options of d-bcm
// and d-beta-predbayes: the distillation on the server set (zero fields: predictive's defaults),
// where the student starts, and for d-beta-predbayes the range of beta (BetaOptions).
type DistilledOptions struct {
	// BetaOptions bound d-beta-predbayes's beta; d-bcm refuses them.
	BetaOptions
	// Distill is the distillation on the server set.
	Distill predictive.DistillConfig `json:"distill,omitzero"`
	// StudentStart is where the student starts: StudentFromAverage (default, "") or
	// StudentFromPrevious (the 003 presets).
	StudentStart string `json:"student_start,omitempty"`
}

// Ensemble is a predictive-space strategy: the global model predicts with a combination of the
// clients' Monte Carlo predictives (each client averages Round.Samples stochastic passes, Hasan
// (2023), Alg. 1, step 3) instead of one network. The clients' next round starts from their
// size-weighted average (AALV for Bayesian clients, FedAvg otherwise), since the combination has no
// parameters of its own; with one round, as in the thesis, that start is never used.
type Ensemble struct {
	// Method is BCM, Mixture or BetaPredBayes.
	Method string
	// Kind is the clients' model kind.
	Kind models.Kind
	// Beta bounds beta's search (both zero: [0, 1]).
	Beta predictive.FitOptions
	// Distill, when not nil, distils the combination on the server set into one network of the
	// clients' kind, which becomes the global model (D-BCM, D-beta-PredBayes).
	Distill *predictive.DistillConfig
	// FromPrevious starts the distilled student at Round.Previous instead of the clients' average
	// (StudentFromPrevious).
	FromPrevious bool
	// Regression combines the clients' Gaussian predictives (predictive.GaussAggregate, Hasan
	// (2023), Eqs. 3.4-3.5 and 4.6-4.7) instead of class probabilities.
	Regression bool
	// PriorStd is the sampler's prior standard deviation, from which the regression BCM's prior
	// predictive is estimated (Regression only).
	PriorStd float64

	model *models.Model // the K-client network, kept between rounds (compiled once)
}

// newEnsemble builds a predictive-space strategy from its options: none for bcm and mixture,
// BetaOptions for beta-predbayes, DistilledOptions for the distilled forms (without the beta range
// for d-bcm).
func newEnsemble(method string, distilled bool, s Settings) (*Ensemble, error) {
	var (
		beta BetaOptions
		o    DistilledOptions
		err  error
	)
	switch {
	case distilled && method == BetaPredBayes:
		err = DecodeOptions(s, &o)
		beta = o.BetaOptions
	case distilled:
		err = DecodeOptions(s, &struct {
			Distill      predictive.DistillConfig `json:"distill,omitzero"`
			StudentStart string                   `json:"student_start,omitempty"`
		}{})
		if err == nil {
			err = DecodeOptions(s, &o)
		}
	case method == BetaPredBayes:
		err = DecodeOptions(s, &beta)
	default:
		err = noOptions(s)
	}
	if err != nil {
		return nil, err
	}
	if (beta.BetaMin != 0 || beta.BetaMax != 0) && !(beta.BetaMax > beta.BetaMin) {
		return nil, &FieldError{Field: OptionsField + ".beta_max", Problem: fmt.Sprintf("the beta range [%v, %v] is empty", beta.BetaMin, beta.BetaMax)}
	}
	if distilled {
		if err := checkDistill(OptionsField+".distill", o.Distill); err != nil {
			return nil, err
		}
		if o.StudentStart != "" && !slices.Contains(StudentStarts, o.StudentStart) {
			return nil, notOneOf(OptionsField+".student_start", o.StudentStart, StudentStarts)
		}
	}
	if method == BetaPredBayes || distilled {
		if err := requireServer(s, "this strategy fits beta or distils on the server's set", hasanServer); err != nil {
			return nil, err
		}
	}
	if s.Regression {
		if distilled {
			return nil, &FieldError{Field: "aggregation.rule", Problem: "the distilled forms distil class probabilities; for regression use bcm, mixture or beta-predbayes"}
		}
		if !s.Sampling || !(s.PriorStd > 0) {
			return nil, &FieldError{Field: "training.sampler", Problem: "the regression BCM divides out the prior predictive of the clients' Gaussian prior: set a sampler (cSGHMC or SGLD) with its prior_std, as Hasan (2023), Sec. 4.4"}
		}
	}
	e := &Ensemble{Method: method, Kind: s.Kind, Beta: predictive.FitOptions{Min: beta.BetaMin, Max: beta.BetaMax}, Regression: s.Regression, PriorStd: s.PriorStd}
	if distilled {
		dc := o.Distill.WithDefaults()
		if err := checkDistilled(OptionsField+".distill", dc, s.Kind == models.Bayesian); err != nil {
			return nil, err
		}
		e.Distill = &dc
		e.FromPrevious = o.StudentStart == StudentFromPrevious
	}
	return e, nil
}

// clientNetwork returns the K-client network loaded with the round's clients; *cache keeps the
// network between rounds (compiled once) and is rebuilt when the number of clients changes.
func clientNetwork(cache **models.Model, r *Round) (*models.Model, *posterior.Posterior, error) {
	stacked, err := r.StackedClients()
	if err != nil {
		return nil, nil, err
	}
	K := len(r.IDs)
	if *cache == nil || (*cache).Clients() != K {
		cfg := r.Model
		cfg.Clients = K
		if *cache, err = models.New(cfg); err != nil {
			return nil, nil, err
		}
	}
	if err := (*cache).SetPosterior(stacked); err != nil {
		return nil, nil, err
	}
	return *cache, stacked, nil
}

// Aggregate fits beta (beta-PredBayes) and returns the combination as the global Predictor.
func (e *Ensemble) Aggregate(r *Round) (*Global, error) {
	m, stacked, err := clientNetwork(&e.model, r)
	if err != nil {
		return nil, err
	}
	carry := aggregate.FedAvg
	if e.Kind == models.Bayesian {
		carry = aggregate.AALV
	}
	next, err := aggregate.Stacked(carry, stacked, r.SizeWeights(), aggregate.Options{Normalize: true})
	if err != nil {
		return nil, err
	}
	if e.Regression {
		return e.aggregateGauss(r, m, next)
	}
	p := &ensemblePredictor{model: m, clients: stacked, draws: r.Draws, sizes: r.SizeWeights(), samples: r.Samples, classes: r.Model.NumClasses, beta: 1}
	w, err := r.NormalizedSizeWeights()
	if err != nil {
		return nil, err
	}
	g := &Global{Posterior: next, Predictor: p, Weights: w}
	var onServer *predictive.ClassAggregate
	if p.beta, err = e.chooseBeta(g, func() (predictive.BetaFit, error) {
		agg, err := p.aggregate(r.Server.X, r.Seed)
		if err != nil {
			return predictive.BetaFit{}, fmt.Errorf("the clients on the server set: %w", err)
		}
		onServer = agg
		return predictive.FitBetaClass(agg, r.Server.Labels, e.Beta)
	}); err != nil {
		return nil, err
	}
	if e.Distill == nil {
		return g, nil
	}
	if onServer == nil {
		if onServer, err = p.aggregate(r.Server.X, r.Seed); err != nil {
			return nil, fmt.Errorf("%s on the server set: %w", e.Method, err)
		}
	}
	start := next
	if e.FromPrevious {
		if r.Previous == nil {
			return nil, fmt.Errorf("%s: the student starts from the round's starting model, which the round lacks", e.Method)
		}
		start = r.Previous
	}
	if g.Posterior, err = distil(r, start, onServer.Beta(p.beta), *e.Distill); err != nil {
		return nil, err
	}
	g.Predictor = nil
	return g, nil
}

// distil trains one network of the clients' kind, starting at start, to reproduce the teacher's
// class probabilities on the server inputs (Hasan (2023), Algs. 1-2, the distillation step;
// predictive.Distill). D-BCM and D-beta-PredBayes start at the clients' average unless
// DistilledOptions.StudentStart is StudentFromPrevious: Hasan's student starts from a fresh initialisation,
// but over several rounds the clients' average keeps what the previous rounds learned.
func distil(r *Round, start *posterior.Posterior, teacher []float32, dc predictive.DistillConfig) (*posterior.Posterior, error) {
	cfg := r.Model
	cfg.Clients, cfg.Seed = 1, r.Seed
	student, err := models.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := student.SetPosterior(start); err != nil {
		return nil, err
	}
	dc.Seed = r.Seed
	if err := predictive.Distill(student, r.Server.X, []predictive.Teacher{{Probs: teacher}}, dc); err != nil {
		return nil, fmt.Errorf("distillation: %w", err)
	}
	return student.ClientPosterior(0)
}

// ensemblePredictor predicts with beta-PredBayes's interpolation of the clients' predictives: beta 1
// is the BCM's product, beta 0 the mixture.
type ensemblePredictor struct {
	model   *models.Model
	clients *posterior.Posterior
	// draws are the clients' posterior samples (SG-MCMC local training), or nil: a client's
	// predictive is then the average over its samples (Hasan (2023), Alg. 1, step 3).
	draws   []*posterior.Posterior
	sizes   []float64
	samples int
	classes int
	beta    float64
}

// aggregate evaluates every client on x and combines them (predictive.NewClassAggregate).
func (p *ensemblePredictor) aggregate(x []float32, seed int64) (*predictive.ClassAggregate, error) {
	probs, err := clientPredictives(p.model, p.clients, p.draws, p.samples, x, seed)
	if err != nil {
		return nil, err
	}
	return predictive.NewClassAggregate(probs, p.sizes, nil, p.classes)
}

// clientPredictives returns every client's Monte Carlo predictive on x, [K][N*C] (Hasan (2023), Alg. 1,
// step 3): the average over its posterior samples when draws is not nil (SG-MCMC local training),
// else over `samples` stochastic passes of m loaded with clients (one pass for a deterministic
// net). Client k's Monte Carlo noise is seeded by (seed, k).
func clientPredictives(m *models.Model, clients *posterior.Posterior, draws []*posterior.Posterior, samples int, x []float32, seed int64) ([][]float32, error) {
	if draws != nil {
		cp, err := predictive.PredictSamples(m, draws, x)
		if err != nil {
			return nil, err
		}
		return cp.Probs, nil
	}
	if err := m.SetPosterior(clients); err != nil {
		return nil, err
	}
	seeds := make([]int64, m.Clients())
	for k := range seeds {
		seeds[k] = seed*1_000_003 + int64(k)
	}
	if err := m.SetNoiseSeeds(seeds); err != nil {
		return nil, err
	}
	cp, err := predictive.PredictModel(m, x, max(samples, 1))
	if err != nil {
		return nil, err
	}
	return cp.Probs, nil
}

// Predict implements Predictor.
func (p *ensemblePredictor) Predict(x []float32, seed int64) ([]float32, error) {
	a, err := p.aggregate(x, seed)
	if err != nil {
		return nil, err
	}
	return a.Beta(p.beta), nil
}

func init() {
	for _, m := range []string{BCM, Mixture, BetaPredBayes} {
		m := m
		registerBuiltin(m, func(s Settings) (Strategy, error) { return newEnsemble(m, false, s) })
	}
	registerBuiltin(DBCM, func(s Settings) (Strategy, error) { return newEnsemble(BCM, true, s) })
	registerBuiltin(DBetaPredBayes, func(s Settings) (Strategy, error) { return newEnsemble(BetaPredBayes, true, s) })
}

// PriorDraws is the number of prior networks from which the regression BCM's prior predictive is
// estimated (predictive.PriorPredictive; Hasan's runner used the same number).
const PriorDraws = 200

// aggregateGauss is Aggregate for regression clients that sample: the global model predicts with the
// product, mixture or beta-interpolation of their Gaussian predictives.
func (e *Ensemble) aggregateGauss(r *Round, m *models.Model, next *posterior.Posterior) (*Global, error) {
	if r.Draws == nil {
		return nil, fmt.Errorf("%s for regression needs the clients' posterior samples", e.Method)
	}
	w, err := r.NormalizedSizeWeights()
	if err != nil {
		return nil, err
	}
	p := &gaussPredictor{model: m, draws: r.Draws, sizes: r.SizeWeights(), priorStd: e.PriorStd, beta: 1}
	g := &Global{Posterior: next, Predictor: p, Weights: w}
	if p.beta, err = e.chooseBeta(g, func() (predictive.BetaFit, error) {
		agg, err := p.aggregate(r.Server.X, r.Seed)
		if err != nil {
			return predictive.BetaFit{}, fmt.Errorf("the clients on the server set: %w", err)
		}
		return predictive.FitBetaGauss(agg, r.Server.Targets, e.Beta)
	}); err != nil {
		return nil, err
	}
	return g, nil
}

// chooseBeta returns the interpolation's beta for e.Method (Hasan (2023), Eq. 4.8): 1 for the BCM,
// 0 for the mixture, and for beta-PredBayes the beta that fit finds on the server set (Eq. 4.11),
// recorded in g as the metric MetricBeta and the file predictive.BetaFile with its NLL-versus-beta
// curve.
func (e *Ensemble) chooseBeta(g *Global, fit func() (predictive.BetaFit, error)) (float64, error) {
	switch e.Method {
	case Mixture:
		return 0, nil
	case BetaPredBayes:
	default:
		return 1, nil
	}
	f, err := fit()
	if err != nil {
		return 0, fmt.Errorf("beta-PredBayes: fitting beta: %w", err)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("beta-PredBayes: recording the fit: %w", err)
	}
	g.Metrics = map[string]float64{MetricBeta: f.Beta}
	g.Files = map[string][]byte{predictive.BetaFile: append(b, '\n')}
	return f.Beta, nil
}

// gaussPredictor predicts with beta-PredBayes's interpolation of the clients' Gaussian predictives
// (Hasan (2023), Eqs. 3.4-3.5, 4.6-4.7 and 4.8): beta 1 is the BCM, beta 0 the mixture.
type gaussPredictor struct {
	model    *models.Model
	draws    []*posterior.Posterior
	sizes    []float64
	priorStd float64
	beta     float64
}

// aggregate evaluates every client's samples on x and combines them with the prior predictive of
// the BCM correction, estimated from PriorDraws networks drawn from the prior (seeded by seed).
func (p *gaussPredictor) aggregate(x []float32, seed int64) (*predictive.GaussAggregate, error) {
	cp, err := predictive.PredictSamples(p.model, p.draws, x)
	if err != nil {
		return nil, err
	}
	prior, err := predictive.PriorPredictive(p.model, x, PriorDraws, p.priorStd, seed)
	if err != nil {
		return nil, err
	}
	return predictive.NewGaussAggregate(cp.Mean, cp.Var, p.sizes, prior.Mean, prior.Var)
}

// Predict implements Predictor: a regression model has no class probabilities.
func (p *gaussPredictor) Predict([]float32, int64) ([]float32, error) { return nil, errGaussian }

// PredictGaussian implements GaussianPredictor.
func (p *gaussPredictor) PredictGaussian(x []float32, seed int64) (mean, variance []float32, err error) {
	a, err := p.aggregate(x, seed)
	if err != nil {
		return nil, nil, err
	}
	mean, variance = a.Beta(p.beta)
	return mean, variance, nil
}
