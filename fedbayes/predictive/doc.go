// Package predictive aggregates Bayesian clients in predictive space rather than in parameter
// space (Hasan (2023), "Bayesian Federated Learning in Predictive Space", the thesis; Chen & Chao,
// FedBE). The engine runs the thesis's one-round comparison and Chen & Chao's rounds (engine specs:
// the presets fmnist-fast, digits-fast, fedbe-fmnist-fast, ...) with these pieces as its server
// strategies.
//
// Aggregators (plain Go, float64 inside, on the client predictive distributions of any source):
//
//   - the product of experts / Bayesian Committee Machine with the prior correction: Hasan (2023),
//     Eq. 3.3 for classes, Eqs. 3.4-3.5 for Gaussian regression outputs;
//   - the mixture, Eq. 4.5, with the Gaussian moments of Eqs. 4.6-4.7 for regression;
//   - beta-Predictive Bayes, the geometric interpolation of the two, Eq. 4.8 (Eqs. 4.9-4.10 for
//     regression), with beta fitted by minimising the negative log-likelihood on the server set
//     (Eq. 4.11; FitBeta also returns the NLL-versus-beta curve).
//
// Classification aggregates are computed in log space: a product of many small probabilities
// divided by a prior never underflows, and the result is normalised with a log-sum-exp.
//
// Client posterior samples (Sampler): SGLD and cyclical SGHMC (Zhang et al. 2020, the thesis's
// cSGHMC) run on any deterministic net of fedbayes/models, all clients at once on the model's
// client axis; variational and MC-dropout clients are sampled by models.Model.Predict directly.
//
// Distillation (Distill) compresses any ensemble's predictive into one student on the unlabeled
// server set: D-BCM and D-beta-PredBayes (Hasan (2023), Algs. 1-2), OneshotFL, and FedBE (Chen &
// Chao, Alg. 1) with SWA. The one-round baselines FedAvg, EP-MCMC with diagonal Gaussians
// (Eq. 2.13), FedPA (Al-Shedivat et al. 2021: shrinkage covariances of the clients' samples, one
// server step) and FedKT (Li et al. 2021: voting teachers, students and a consistent vote on the
// server set) complete the thesis's Table 3.1; FedBEServer is the server step of the engine's FedBE
// strategies, which run FedBE against FedAvg over several rounds on the same clients (Chen & Chao's
// comparison).
// docs/predictive.md has the formulas and the verification.
package predictive
