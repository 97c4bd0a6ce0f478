// Package strategy holds the server side of a federated round: a Strategy combines the models the
// clients trained in a round into the global model the next round starts from, and says how that global
// model predicts. Every method of fedbayes is a Strategy:
//
//   - the parameter-space rules of package aggregate with their client weightings (EAA, GAA, AALV,
//     PPA, LP, conflation, CF, RKLB, WB, DWC and FedAvg; Ozer et al. (2022), Fischer et al. (2024),
//     Jamoussi et al. (BA-BFL)), registered under their aggregate.Rule names;
//   - FedBE (Chen & Chao, Alg. 1): "fedbe-gaussian", "fedbe-dirichlet" and "fedbe-gaussian-no-swa";
//   - the predictive-space combinations of Hasan (2023): "bcm" (Eq. 3.3), "mixture" (Eq. 4.5) and
//     "beta-predbayes" (Eqs. 4.8-4.11), whose global model is a Predictor over the clients, and
//     their distilled forms "d-bcm" and "d-beta-predbayes" (Algs. 1-2);
//   - the one-round baselines of Hasan (2023), Table 3.1: "ep-mcmc" (Neiswanger et al. 2014),
//     "fedpa" (Al-Shedivat et al. 2021), "oneshotfl" (Guha et al. 2019) and "fedkt" (Li et al.
//     2021).
//
// A researcher adds a rule of their own by implementing the one-method interface and registering it;
// the engine (package engine) then runs it from any spec whose aggregation.rule names it, beside the
// built-in ones, with the same data, clients, evaluation, resume and provenance:
//
//	type median struct{}
//
//	// Aggregate takes the coordinate-wise median of the clients' means and the mean of their
//	// log-variances.
//	func (median) Aggregate(r *strategy.Round) (*strategy.Global, error) {
//		g, err := strategy.PerElement(r, func(means, logVars []float64) (float64, float64) {
//			sort.Float64s(means)
//			lv := 0.0
//			for _, v := range logVars {
//				lv += v / float64(len(logVars))
//			}
//			return means[len(means)/2], lv
//		})
//		return &strategy.Global{Posterior: g}, err
//	}
//
//	func init() {
//		strategy.Register("median", func(strategy.Settings) (strategy.Strategy, error) { return median{}, nil })
//	}
//
// Each strategy owns its options: the spec's aggregation.options reach its factory as raw JSON
// (Settings.Options), which it decodes with DecodeOptions into an options struct of its own (FedBEOptions,
// FedPAOptions, BetaOptions, DistilledOptions, OneshotFLOptions, FedKTOptions), with its defaults,
// refusing an unknown field by its path; the rest of Settings are facts about the experiment. A
// strategy that checks the clients' data implements ClientChecker. Adding an option touches the
// strategy's file and its test only.
//
// A strategy must be a function of its Round: what it needs from earlier rounds is the Round's
// Previous global model. Then a resumed run is bit-identical to an uninterrupted one.
//
// The package sits between client training and metrics in fedbayes's flow (data -> partition ->
// models -> client training -> server strategy -> metrics -> results -> plots); it uses aggregate and
// predictive's building blocks and knows nothing of specs or run directories. See docs/strategies.md.
package strategy
