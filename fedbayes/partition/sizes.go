package partition

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"fedbayes.dev/fedbayes/internal/randx"
)

// SizeKind names a distribution of client sizes (quantity skew).
type SizeKind string

// The size distributions. Each gives client k (from 0) a weight w_k; ClientSizes turns the weights
// into integer sizes.
const (
	// SizeLinear: w_k = k+1 (Flower Datasets' LinearPartitioner).
	SizeLinear SizeKind = "linear"
	// SizeSquare: w_k = (k+1)^2 (Flower Datasets' SquarePartitioner).
	SizeSquare SizeKind = "square"
	// SizeExponential: w_k = e^(k+1) (Flower Datasets' ExponentialPartitioner).
	SizeExponential SizeKind = "exponential"
	// SizeZipf: w_k = (k+1)^-s, a power law by rank (client 0 the largest): the power-law client
	// sizes of Li et al. (2020), FedProx, Sec. 5.1 (synthetic data) and of LEAF (Caldas et al. 2018).
	SizeZipf SizeKind = "zipf"
	// SizeLogNormal: w_k = exp(sigma z_k), z_k standard normal drawn from the seed: FedLab's
	// unbalanced partition (balance=False, unbalance_sgm).
	SizeLogNormal SizeKind = "lognormal"
	// SizeDirichlet: (w_k) ~ Dir(beta) drawn from the seed: the quantity skew of Li et al. (2022),
	// NIID-Bench ("quantity skew": q ~ Dir_N(beta)).
	SizeDirichlet SizeKind = "dirichlet"
)

// SizeKinds lists the size distributions.
var SizeKinds = []SizeKind{SizeLinear, SizeSquare, SizeExponential, SizeZipf, SizeLogNormal, SizeDirichlet}

// SizeOptions configures ClientSizes.
type SizeOptions struct {
	// Kind is the distribution.
	Kind SizeKind
	// Exponent is s of SizeZipf (> 0, finite).
	Exponent float64
	// Sigma is the log-scale spread of SizeLogNormal (> 0, finite).
	Sigma float64
	// Beta is the concentration of SizeDirichlet (> 0, finite).
	Beta float64
	// Seed makes the random kinds (lognormal, dirichlet) deterministic; the others ignore it.
	Seed uint64
}

// String names the distribution with its parameter, e.g. "zipf(s=1.5)".
func (o SizeOptions) String() string {
	switch o.Kind {
	case SizeZipf:
		return fmt.Sprintf("zipf(s=%g)", o.Exponent)
	case SizeLogNormal:
		return fmt.Sprintf("lognormal(sigma=%g)", o.Sigma)
	case SizeDirichlet:
		return fmt.Sprintf("dirichlet(beta=%g)", o.Beta)
	}
	return string(o.Kind)
}

// ClientSizes splits total examples among numClients clients by the weights of opt.Kind: every client
// gets one example first, and the other total - numClients are apportioned by largest remainders,
// client k getting floor(R w_k / W) and the R - sum of floors examples left over going one each to the
// clients with the largest fractional parts (the lower client first on ties). The sizes are at least
// 1 and sum to total. Flower Datasets instead floors N w_k / W and gives the remainder to the last
// partition, which can leave a client empty (e^1 of sum e^k for 100 partitions).
func ClientSizes(total, numClients int, opt SizeOptions) ([]int, error) {
	method := "sizes " + opt.String()
	if err := checkClients(method, total, numClients); err != nil {
		return nil, err
	}
	w, err := sizeWeights(numClients, opt)
	if err != nil {
		return nil, fmt.Errorf("partition %s: %w", method, err)
	}
	return apportion(total, w), nil
}

// sizeWeights returns the weights w_0..w_{n-1} of opt.Kind (not normalised, all positive).
func sizeWeights(n int, opt SizeOptions) ([]float64, error) {
	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s must be positive and finite, got %v", name, v)
		}
		return nil
	}
	w := make([]float64, n)
	rng := newRNG(opt.Seed, streamSizes)
	switch opt.Kind {
	case SizeLinear, SizeSquare, SizeExponential, SizeZipf:
		if opt.Kind == SizeZipf {
			if err := positive("the exponent", opt.Exponent); err != nil {
				return nil, err
			}
		}
		for k := range w {
			x := float64(k + 1)
			switch opt.Kind {
			case SizeLinear:
				w[k] = x
			case SizeSquare:
				w[k] = x * x
			case SizeExponential:
				w[k] = math.Exp(x - float64(n)) // e^(k+1) scaled by e^-n: no overflow
			case SizeZipf:
				w[k] = math.Pow(x, -opt.Exponent)
			}
		}
	case SizeLogNormal:
		if err := positive("sigma", opt.Sigma); err != nil {
			return nil, err
		}
		z := make([]float64, n)
		for k := range z {
			z[k] = opt.Sigma * rng.NormFloat64()
		}
		top := slices.Max(z)
		for k := range w {
			w[k] = math.Exp(z[k] - top) // scaled by exp(-max): no overflow
		}
	case SizeDirichlet:
		if err := positive("beta", opt.Beta); err != nil {
			return nil, err
		}
		randx.Dirichlet(rng, w, opt.Beta)
	default:
		return nil, fmt.Errorf("unknown size distribution %q; want one of %v", opt.Kind, SizeKinds)
	}
	return w, nil
}

// apportion gives each of len(w) clients one of total examples and the rest by largest remainders of
// the weights w (total >= len(w), the weights non-negative with a positive sum, or all zero: then
// equal shares).
func apportion(total int, w []float64) []int {
	n := len(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		w, sum = slices.Repeat([]float64{1}, n), float64(n)
	}
	rest := total - n
	sizes := make([]int, n)
	frac := make([]float64, n)
	given := 0
	for k, x := range w {
		share := float64(rest) * x / sum
		f := math.Floor(share)
		sizes[k], frac[k] = int(f), share-f
		given += sizes[k]
	}
	order := make([]int, n) // clients by decreasing fractional part, the lower first on ties
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(frac[b], frac[a]) })
	for i := 0; given < rest; i = (i + 1) % n {
		sizes[order[i]]++
		given++
	}
	for i := n - 1; given > rest; i = (i + n - 1) % n { // rounding overshoot: take from the smallest parts
		if k := order[i]; sizes[k] > 0 {
			sizes[k]--
			given--
		}
	}
	for k := range sizes {
		sizes[k]++
	}
	return sizes
}
