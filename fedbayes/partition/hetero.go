package partition

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Heterogeneity mixes homogeneous and class-sorted data with the heterogeneity parameter h in
// [0, 1] of Hasan (2023), Sec. 3.3.1 and App. B.2.1: a fraction h of every client's shard comes from
// data sorted by class and cut into contiguous pieces, the rest is a uniform random share. h = 0 is
// IID; h = 1 gives each client a contiguous range of classes.
//
// The thesis replaces part of each homogeneous shard by the matching part of a sorted copy of the
// dataset, which can give one example to two clients. Here the sorted part is drawn from a random
// subset of round(h N) examples that is disjoint from the homogeneous part, so every example is used
// exactly once while each client's sorted part covers about the same class range as in the thesis (its
// ends move with the subset's class counts, by a few examples: TestHeterogeneityB21). Client sizes
// differ by at most two.
func Heterogeneity(labels []int32, numClasses, numClients int, h float64, seed uint64) (*Partition, error) {
	method := fmt.Sprintf("heterogeneity(h=%g, clients=%d)", h, numClients)
	if err := checkLabels(method, labels, numClasses, numClients); err != nil {
		return nil, err
	}
	p, err := mixSorted(method, len(labels), numClients, h, seed, func(a, b int) int {
		return cmp.Compare(labels[a], labels[b])
	})
	if err != nil {
		return nil, err
	}
	p.NumClasses = numClasses
	p.Source = "Hasan (2023), Sec. 3.3.1 and App. B.2.1"
	return finish(p, labels)
}

// SortedByKey is Heterogeneity for regression: the sorted part is ordered by a per-example key (an
// input feature, such as the date for air quality) instead of the class, as Hasan (2023), Secs.
// 3.3.2 and 4.3 do for the UCI regression datasets. h = 1 sorts the whole dataset by key and cuts it
// into contiguous ranges; equal keys are in random order. The partition has no count matrix.
func SortedByKey(keys []float32, numClients int, h float64, seed uint64) (*Partition, error) {
	method := fmt.Sprintf("sorted-by-key(h=%g, clients=%d)", h, numClients)
	if err := checkClients(method, len(keys), numClients); err != nil {
		return nil, err
	}
	for i, k := range keys {
		if math.IsNaN(float64(k)) {
			return nil, fmt.Errorf("partition %s: key of example %d is NaN", method, i)
		}
	}
	p, err := mixSorted(method, len(keys), numClients, h, seed, func(a, b int) int {
		return cmp.Compare(keys[a], keys[b])
	})
	if err != nil {
		return nil, err
	}
	p.Source = "Hasan (2023), Secs. 3.3.2 and 4.3"
	return finish(p, nil)
}

// mixSorted builds the h-mixture: a random round(h n) examples, stably sorted by compare (random
// order among equals), cut into contiguous pieces, plus an even random split of the rest.
func mixSorted(method string, n, numClients int, h float64, seed uint64, compare func(a, b int) int) (*Partition, error) {
	if !(h >= 0 && h <= 1) {
		return nil, fmt.Errorf("partition %s: h must be in [0, 1], got %v", method, h)
	}
	rng := newRNG(seed, streamHetero)
	perm := permutation(rng, n)
	nSorted := int(math.Round(h * float64(n)))
	sorted, homog := perm[:nSorted:nSorted], perm[nSorted:]
	slices.SortStableFunc(sorted, compare)
	sortedParts := splitEven(sorted, numClients)
	homogParts := splitEven(homog, numClients)
	clients := make([][]int, numClients)
	for k := range clients {
		clients[k] = append(slices.Clone(homogParts[k]), sortedParts[k]...)
	}
	return &Partition{Method: method, Clients: clients}, nil
}
