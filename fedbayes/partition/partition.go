package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Partition is an assignment of example indices to clients.
type Partition struct {
	// Method names the construction and its parameters, e.g. "dirichlet(alpha=0.5, min=10)".
	Method string
	// Source cites where the construction comes from.
	Source string
	// Clients holds, per client, the indices of its examples in increasing order.
	Clients [][]int
	// NumClasses is the number of classes of a labelled partition, 0 for a partition by key.
	NumClasses int
	// Counts is the client-by-class count matrix [client][class] of a labelled partition, nil for a
	// partition by key.
	Counts [][]int
	// Attempts is the number of random draws the construction needed (1 unless it retries).
	Attempts int
}

// NumClients returns the number of clients.
func (p *Partition) NumClients() int { return len(p.Clients) }

// Sizes returns the number of examples of each client.
func (p *Partition) Sizes() []int {
	s := make([]int, len(p.Clients))
	for k, c := range p.Clients {
		s[k] = len(c)
	}
	return s
}

// Total returns the number of examples assigned to some client.
func (p *Partition) Total() int {
	t := 0
	for _, c := range p.Clients {
		t += len(c)
	}
	return t
}

// SizeWeights returns |D_k| / sum_j |D_j|, the size weighting of McMahan et al. used by Ozer et al.
// (2022) (FVBWA) and Fischer et al. (2024), Eq. 19. It is nil when no example is assigned.
func (p *Partition) SizeWeights() []float64 {
	total := p.Total()
	if total == 0 {
		return nil
	}
	w := make([]float64, len(p.Clients))
	for k, c := range p.Clients {
		w[k] = float64(len(c)) / float64(total)
	}
	return w
}

// Validate checks the partition against a dataset of numExamples examples: every index is in range
// and used at most once, and the count matrix (if any) has one row per client, NumClasses columns
// and rows that sum to the client sizes. It does not require every example to be used; see Unused.
func (p *Partition) Validate(numExamples int) error {
	seen := make([]bool, numExamples)
	for k, c := range p.Clients {
		for _, i := range c {
			if i < 0 || i >= numExamples {
				return fmt.Errorf("partition %s: client %d has index %d, out of range [0, %d)", p.Method, k, i, numExamples)
			}
			if seen[i] {
				return fmt.Errorf("partition %s: example %d is assigned twice (again to client %d)", p.Method, i, k)
			}
			seen[i] = true
		}
	}
	if p.Counts == nil {
		return nil
	}
	if len(p.Counts) != len(p.Clients) {
		return fmt.Errorf("partition %s: count matrix has %d rows for %d clients", p.Method, len(p.Counts), len(p.Clients))
	}
	for k, row := range p.Counts {
		if len(row) != p.NumClasses {
			return fmt.Errorf("partition %s: count row of client %d has %d classes, want %d", p.Method, k, len(row), p.NumClasses)
		}
		sum := 0
		for _, n := range row {
			sum += n
		}
		if sum != len(p.Clients[k]) {
			return fmt.Errorf("partition %s: class counts of client %d sum to %d, but it has %d examples", p.Method, k, sum, len(p.Clients[k]))
		}
	}
	return nil
}

// Unused returns the number of the numExamples examples assigned to no client.
func (p *Partition) Unused(numExamples int) int { return numExamples - p.Total() }

// CountClasses returns the client-by-class count matrix of clients for the given labels.
func CountClasses(clients [][]int, labels []int32, numClasses int) ([][]int, error) {
	counts := make([][]int, len(clients))
	for k, c := range clients {
		counts[k] = make([]int, numClasses)
		for _, i := range c {
			if i < 0 || i >= len(labels) {
				return nil, fmt.Errorf("partition: client %d has index %d, out of range [0, %d)", k, i, len(labels))
			}
			y := labels[i]
			if y < 0 || int(y) >= numClasses {
				return nil, fmt.Errorf("partition: label of example %d is %d, out of range [0, %d)", i, y, numClasses)
			}
			counts[k][y]++
		}
	}
	return counts, nil
}

// checkLabels validates labelled input common to all label-based partitions.
func checkLabels(method string, labels []int32, numClasses, numClients int) error {
	if numClasses < 1 {
		return fmt.Errorf("partition %s: number of classes must be positive, got %d", method, numClasses)
	}
	if err := checkClients(method, len(labels), numClients); err != nil {
		return err
	}
	for i, y := range labels {
		if y < 0 || int(y) >= numClasses {
			return fmt.Errorf("partition %s: label of example %d is %d, out of range [0, %d)", method, i, y, numClasses)
		}
	}
	return nil
}

// checkClients validates the number of clients against the number of examples.
func checkClients(method string, numExamples, numClients int) error {
	if numClients < 1 {
		return fmt.Errorf("partition %s: number of clients must be positive, got %d", method, numClients)
	}
	if numExamples < numClients {
		return fmt.Errorf("partition %s: %d examples cannot be split among %d clients", method, numExamples, numClients)
	}
	return nil
}

// newRNG returns the generator of a partition method: PCG seeded by (seed, stream).
func newRNG(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// Generator streams, one per construction, so that equal seeds give unrelated draws.
const (
	streamIID uint64 = 0x9e3779b97f4a7c15 + iota
	streamDirichlet
	streamShards
	streamClasses
	streamHetero
	streamParticipation
	streamSizes
	streamResize
	streamSampling
	streamAvailability
	streamDrop
	streamStragglers
	streamHeldOut
)

// permutation returns a random permutation of 0..n-1.
func permutation(rng *rand.Rand, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	rng.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// splitEven cuts items into k contiguous chunks whose sizes differ by at most one (the first
// len(items) mod k chunks are one longer). The chunks alias items.
func splitEven(items []int, k int) [][]int {
	out := make([][]int, k)
	q, r := len(items)/k, len(items)%k
	start := 0
	for c := range k {
		size := q
		if c < r {
			size++
		}
		out[c] = items[start : start+size : start+size]
		start += size
	}
	return out
}

// finish sorts each client's indices and fills the count matrix of a labelled partition.
func finish(p *Partition, labels []int32) (*Partition, error) {
	for _, c := range p.Clients {
		slices.Sort(c)
	}
	if labels != nil {
		counts, err := CountClasses(p.Clients, labels, p.NumClasses)
		if err != nil {
			return nil, err
		}
		p.Counts = counts
	}
	if p.Attempts == 0 {
		p.Attempts = 1
	}
	return p, nil
}
