package partition

import (
	"fmt"
	"math/rand/v2"
)

// WithSizes combines quantity skew with a label partition: it deals the examples that base assigns
// anew so that client k gets sizes[k] of them, while base decides each client's classes. Client k's
// class proportions are q_k(c) = base.Counts[k][c] / |D_k| (the whole pool's proportions for a
// client that base left empty). The deal is Flower Datasets' InnerDirichletPartitioner's (after Acar
// et al. (2021), FedDyn), with q_k in place of its Dirichlet draw: one example at a time, a client
// that still needs examples is picked uniformly at random, then a class from q_k restricted to the
// classes with examples left, and an example of that class not yet dealt. When none of the client's
// classes has examples left, the class is drawn in proportion to the examples left of every class
// (so a client of a shard partition may then receive a class its shards did not hold; a client whose
// size exceeds what its classes hold always does). The sizes must be positive and sum to base.Total();
// the examples base leaves unassigned stay unassigned.
func WithSizes(base *Partition, labels []int32, sizes []int, seed uint64) (*Partition, error) {
	if base == nil || base.Counts == nil {
		return nil, fmt.Errorf("partition: sizes: the label partition has no class counts (a partition by key cannot take sizes)")
	}
	method := base.Method + " with sizes"
	if err := checkResize(method, base, labels, sizes); err != nil {
		return nil, err
	}
	rng := newRNG(seed, streamResize)
	pool := make([][]int, base.NumClasses) // the examples of each class, shuffled
	for _, c := range base.Clients {
		for _, i := range c {
			pool[labels[i]] = append(pool[labels[i]], i)
		}
	}
	for _, idx := range pool {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	}
	props := classProportions(base, pool)
	need := append([]int(nil), sizes...)
	open := make([]int, len(sizes)) // clients that still need examples
	for k := range open {
		open[k] = k
	}
	clients := make([][]int, len(sizes))
	for k, n := range sizes {
		clients[k] = make([]int, 0, n)
	}
	weights := make([]float64, base.NumClasses)
	for len(open) > 0 {
		slot := rng.IntN(len(open))
		k := open[slot]
		c := drawClass(rng, props[k], pool, weights)
		last := len(pool[c]) - 1
		clients[k] = append(clients[k], pool[c][last])
		pool[c] = pool[c][:last]
		if need[k]--; need[k] == 0 {
			open[slot] = open[len(open)-1]
			open = open[:len(open)-1]
		}
	}
	return finish(&Partition{
		Method: method, NumClasses: base.NumClasses, Clients: clients,
		Source: base.Source + "; sizes dealt after Flower Datasets' InnerDirichletPartitioner (Acar et al. 2021)",
	}, labels)
}

// checkResize validates WithSizes's input: labels of the base's classes, one positive size per client,
// the sizes summing to the examples base assigns.
func checkResize(method string, base *Partition, labels []int32, sizes []int) error {
	if err := checkLabels(method, labels, base.NumClasses, max(1, len(base.Clients))); err != nil {
		return err
	}
	if err := base.Validate(len(labels)); err != nil {
		return err
	}
	if len(sizes) != len(base.Clients) {
		return fmt.Errorf("partition %s: %d sizes for %d clients", method, len(sizes), len(base.Clients))
	}
	sum := 0
	for k, n := range sizes {
		if n < 1 {
			return fmt.Errorf("partition %s: client %d has size %d; every client needs at least one example", method, k, n)
		}
		sum += n
	}
	if sum != base.Total() {
		return fmt.Errorf("partition %s: the sizes sum to %d, but the label partition assigns %d examples", method, sum, base.Total())
	}
	return nil
}

// classProportions returns each client's class proportions in base, or the pool's for an empty client.
func classProportions(base *Partition, pool [][]int) [][]float64 {
	overall := make([]float64, base.NumClasses)
	for c, idx := range pool {
		overall[c] = float64(len(idx))
	}
	props := make([][]float64, len(base.Clients))
	for k, row := range base.Counts {
		if len(base.Clients[k]) == 0 {
			props[k] = overall
			continue
		}
		props[k] = make([]float64, len(row))
		for c, n := range row {
			props[k][c] = float64(n) / float64(len(base.Clients[k]))
		}
	}
	return props
}

// drawClass draws a class with examples left: from q restricted to those classes, or, when q puts no
// weight on any of them, in proportion to the examples left. weights is scratch space.
func drawClass(rng *rand.Rand, q []float64, pool [][]int, weights []float64) int {
	var sum float64
	for c := range weights {
		weights[c] = 0
		if len(pool[c]) > 0 {
			weights[c] = q[c]
		}
		sum += weights[c]
	}
	if sum == 0 {
		for c := range weights {
			weights[c] = float64(len(pool[c]))
			sum += weights[c]
		}
	}
	u := rng.Float64() * sum
	last := -1
	for c, x := range weights {
		if x == 0 {
			continue
		}
		last = c
		if u < x {
			return c
		}
		u -= x
	}
	return last // u fell past the end by rounding: the last class with weight
}
