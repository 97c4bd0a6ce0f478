package models

import (
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph"
)

// KLGaussian returns KL(N(muQ, exp(logVarQ)) || N(muP, exp(logVarP))) in closed form:
//
//	1/2 [ logVarP - logVarQ + (exp(logVarQ) + (muQ - muP)^2) / exp(logVarP) - 1 ]
//
// the per-weight KL term of the variational free energy (Blundell et al. 2015, Eq. 2; Ozer et al.
// (2022), Eq. 2).
func KLGaussian(muQ, logVarQ, muP, logVarP float64) float64 {
	d := muQ - muP
	return 0.5 * (logVarP - logVarQ + (math.Exp(logVarQ)+d*d)*math.Exp(-logVarP) - 1)
}

// klGraph sums KLGaussian over every axis but the leading client axis: mu, logVar and variance
// (= exp(logVar), the value the layer already computed for its noise: passing it here spares one Exp
// pass over the parameters per step) are [K, ...]; priorMean and priorLogVar are either of the same
// shape or scalars. The result is [K].
func klGraph(mu, logVar, variance, priorMean, priorLogVar *Node) *Node {
	d := Sub(mu, priorMean)
	inner := Add(Sub(priorLogVar, logVar), Mul(Add(variance, Square(d)), Exp(Neg(priorLogVar))))
	kl := MulScalar(AddScalar(inner, -1), 0.5)
	axes := make([]int, 0, kl.Rank()-1)
	for a := 1; a < kl.Rank(); a++ {
		axes = append(axes, a)
	}
	return ReduceSum(kl, axes...)
}
