package predictive

// BetaFile is the file, in the run directory of a beta-PredBayes run, that holds the fitted beta and
// the server NLL-versus-beta curve (a BetaFit as JSON; the engine writes it from strategy.Global.Files).
const BetaFile = "beta.json"

// ZhangFriction is the friction alpha of the public cSGHMC code of Zhang et al. (2020) (its --alpha,
// default 0.9, in the update v = (1-alpha) v - eta grad + noise that Sample runs), the sampler Hasan
// (2023), Sec. 3.3.4 cites without listing alpha. The Fashion-MNIST presets use it: at
// SamplerConfig's default 0.1 (momentum 0.9) the effective step eta/alpha is nine times larger, the
// clients' samples end far from their shared start, and the parameter-space methods that average
// them fail (fmnist-medium, h = 0, 3 seeds: EP-MCMC 39% and FedPA 60% against the thesis's 86% and
// 84%, and 78% and 78% at 0.9; docs/predictive.md, "FedPA and EP-MCMC against the exact posterior").
// The default stays 0.1 for the other presets and specs, whose step sizes were chosen with it.
const ZhangFriction = 0.9

// maxSizeCount bounds the count fields of the configurations (epochs, students, teachers): far above
// the thesis's settings (Hasan (2023), Tables B.2-B.4), far below what overflows an int or exhausts
// memory in one allocation.
const maxSizeCount = 1_000_000
