package partition

import (
	"fmt"
	"math"
	"slices"

	"fedbayes.dev/fedbayes/internal/randx"
)

// DefaultDirichletMinSize is the minimum client size of Li et al. (2022)'s Dirichlet partition code
// (NIID-Bench, min_require_size), followed by Ozer et al. (2022).
const DefaultDirichletMinSize = 10

// DefaultMaxAttempts bounds the random draws of a construction that retries (Dirichlet, Shards).
const DefaultMaxAttempts = 100

// DirichletOptions configures Dirichlet.
type DirichletOptions struct {
	// Alpha is the concentration of the symmetric Dirichlet; smaller is more skewed (Fischer et al.
	// (2024) use 0.5 and 5.0). Must be positive and finite.
	Alpha float64
	// MinSize is the fewest examples every client must get; a draw that leaves a smaller client is
	// redrawn. 0 accepts any draw (clients may be empty). DefaultDirichletMinSize is the usual value.
	MinSize int
	// MaxAttempts bounds the number of draws (0 means DefaultMaxAttempts); when no draw meets
	// MinSize, Dirichlet returns an error.
	MaxAttempts int
	// Seed makes the partition deterministic.
	Seed uint64
}

// Dirichlet splits each class among the clients with proportions drawn from a symmetric
// Dirichlet(Alpha): the label-skew partition of Ozer et al. (2022), Sec. 5 and Jamoussi et al.
// (BA-BFL), "Experimental Setup" and Fig. 2, and the distribution-based label imbalance of Fischer et
// al. (2024), Sec. 3.1, all after Li et al. (2022), NIID-Bench. As in Li et al.'s code, a client
// that already holds N/K examples receives no more of the following classes (its proportion is set
// to zero before renormalising), and the whole draw is repeated while some client has fewer than
// MinSize examples, at most MaxAttempts times. Every example is assigned.
func Dirichlet(labels []int32, numClasses, numClients int, opt DirichletOptions) (*Partition, error) {
	method := fmt.Sprintf("dirichlet(alpha=%g, min=%d)", opt.Alpha, opt.MinSize)
	if err := checkLabels(method, labels, numClasses, numClients); err != nil {
		return nil, err
	}
	if !(opt.Alpha > 0) || math.IsInf(opt.Alpha, 0) {
		return nil, fmt.Errorf("partition %s: alpha must be positive and finite, got %v", method, opt.Alpha)
	}
	if opt.MinSize < 0 {
		return nil, fmt.Errorf("partition %s: minimum client size must be >= 0, got %d", method, opt.MinSize)
	}
	if opt.MinSize*numClients > len(labels) {
		return nil, fmt.Errorf("partition %s: %d clients of at least %d examples need %d examples, have %d",
			method, numClients, opt.MinSize, opt.MinSize*numClients, len(labels))
	}
	maxAttempts := opt.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if maxAttempts < 0 {
		return nil, fmt.Errorf("partition %s: MaxAttempts must be >= 0, got %d", method, opt.MaxAttempts)
	}

	rng := newRNG(opt.Seed, streamDirichlet)
	byClass := make([][]int, numClasses)
	for i, y := range labels {
		byClass[y] = append(byClass[y], i)
	}
	n := len(labels)
	limit := float64(n) / float64(numClients)
	props := make([]float64, numClients)
	clients := make([][]int, numClients)
	smallest := 0
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		for k := range clients {
			clients[k] = clients[k][:0]
		}
		for _, idx := range byClass {
			if len(idx) == 0 {
				continue
			}
			rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			randx.Dirichlet(rng, props, opt.Alpha)
			var s float64
			for k := range props {
				if float64(len(clients[k])) >= limit {
					props[k] = 0
				}
				s += props[k]
			}
			if s == 0 { // every client is full: fall back to equal shares
				for k := range props {
					props[k] = 1
				}
				s = float64(numClients)
			}
			// Cut points floor(cumsum(p) * |class|), the last one at |class|.
			var cum float64
			start := 0
			for k := range props {
				end := len(idx)
				if k < numClients-1 {
					cum += props[k] / s
					end = min(len(idx), int(cum*float64(len(idx))))
				}
				if end > start {
					clients[k] = append(clients[k], idx[start:end]...)
					start = end
				}
			}
		}
		smallest = len(clients[0])
		for _, c := range clients {
			smallest = min(smallest, len(c))
		}
		if smallest >= opt.MinSize {
			out := make([][]int, numClients)
			for k, c := range clients {
				out[k] = slices.Clone(c)
			}
			return finish(&Partition{
				Method: method, Source: "Ozer et al. (2022), Sec. 5; Jamoussi et al. (BA-BFL), Fig. 2; " +
					"Fischer et al. (2024), Sec. 3.1; after Li et al. (2022), NIID-Bench",
				Clients: out, NumClasses: numClasses, Attempts: attempt,
			}, labels)
		}
	}
	return nil, fmt.Errorf("partition %s: no draw in %d attempts gave every one of %d clients at least %d examples "+
		"(smallest client in the last draw: %d); raise alpha, lower the minimum size, use fewer clients or allow more attempts",
		method, maxAttempts, numClients, opt.MinSize, smallest)
}
