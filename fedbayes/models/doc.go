// Package models is fedbayes's model zoo: mean-field Gaussian (Bayesian), MC-dropout and deterministic
// layers and the papers' architectures, all built with a leading client axis so that K independent
// copies of a model train and predict in one compiled GoMLX computation.
//
// See docs/models.md for the design, the estimators and the verification.
package models
