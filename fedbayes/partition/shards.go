package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// sortedByLabel returns the example indices ordered by class, in random order within a class.
func sortedByLabel(rng *rand.Rand, labels []int32) []int {
	order := permutation(rng, len(labels))
	slices.SortStableFunc(order, func(a, b int) int { return int(labels[a]) - int(labels[b]) })
	return order
}

// Shards sorts the examples by class, cuts them into numClients x shardsPerClient equal shards and
// gives each client shardsPerClient shards at random, all of different classes (a shard's class is
// its majority class): the quantity-based label imbalance of Fischer et al. (2024), Sec. 3.1 (20
// shards of 2,500 CIFAR-10 images, two per client), after McMahan et al. (2017). The N mod (number
// of shards) examples left over by equal shards are not assigned (see Partition.Unused). Drawing is
// repeated, at most DefaultMaxAttempts times, until every client's shards have distinct classes.
func Shards(labels []int32, numClasses, numClients, shardsPerClient int, seed uint64) (*Partition, error) {
	method := fmt.Sprintf("shards(clients=%d, per client=%d)", numClients, shardsPerClient)
	if err := checkLabels(method, labels, numClasses, numClients); err != nil {
		return nil, err
	}
	if shardsPerClient < 1 {
		return nil, fmt.Errorf("partition %s: shards per client must be positive, got %d", method, shardsPerClient)
	}
	numShards := numClients * shardsPerClient
	size := len(labels) / numShards
	if size == 0 {
		return nil, fmt.Errorf("partition %s: %d examples are too few for %d shards", method, len(labels), numShards)
	}
	rng := newRNG(seed, streamShards)
	order := sortedByLabel(rng, labels)
	shardClass := make([]int, numShards)
	present := make(map[int]bool)
	count := make([]int, numClasses)
	for s := range numShards {
		clear(count)
		for _, i := range order[s*size : (s+1)*size] {
			count[labels[i]]++
		}
		shardClass[s] = argmaxInt(count)
		present[shardClass[s]] = true
	}
	if len(present) < shardsPerClient {
		return nil, fmt.Errorf("partition %s: the shards cover only %d classes, fewer than %d shards per client of distinct classes",
			method, len(present), shardsPerClient)
	}
	for attempt := 1; attempt <= DefaultMaxAttempts; attempt++ {
		pool := permutation(rng, numShards)
		assign, ok := assignDistinct(pool, shardClass, numClients, shardsPerClient)
		if !ok {
			continue
		}
		clients := make([][]int, numClients)
		for k, shards := range assign {
			for _, s := range shards {
				clients[k] = append(clients[k], order[s*size:(s+1)*size]...)
			}
		}
		return finish(&Partition{
			Method: method, Source: "Fischer et al. (2024), Sec. 3.1 (non-IID 2-class); after McMahan et al. (2017)",
			Clients: clients, NumClasses: numClasses, Attempts: attempt,
		}, labels)
	}
	return nil, fmt.Errorf("partition %s: could not give every client %d shards of distinct classes in %d attempts "+
		"(too many shards of one class); use fewer shards per client", method, shardsPerClient, DefaultMaxAttempts)
}

// assignDistinct deals the shards in pool order: each client takes, for each of its slots, the first
// remaining shard whose class it does not hold yet. It reports false when some client gets stuck.
func assignDistinct(pool, shardClass []int, numClients, perClient int) ([][]int, bool) {
	out := make([][]int, numClients)
	for k := range out {
		for range perClient {
			found := -1
			for j, s := range pool {
				if !slices.ContainsFunc(out[k], func(t int) bool { return shardClass[t] == shardClass[s] }) {
					found = j
					break
				}
			}
			if found < 0 {
				return nil, false
			}
			out[k] = append(out[k], pool[found])
			pool = slices.Delete(pool, found, found+1)
		}
	}
	return out, true
}

// argmaxInt returns the index of the largest count, the first one on ties.
func argmaxInt(v []int) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// ClassesPerClient gives each client k distinct classes and splits every class evenly among the
// clients that hold it: the "#C=k" quantity-based label imbalance of Li et al. (2022), NIID-Bench,
// which Fischer et al. (2024), Sec. 3.1 follow with k = 2. As in Li et al.'s code, client i always
// holds class i mod C and k-1 further classes drawn at random; a class no client draws (possible when
// clients x k < C) is not assigned.
func ClassesPerClient(labels []int32, numClasses, numClients, k int, seed uint64) (*Partition, error) {
	method := fmt.Sprintf("classes-per-client(clients=%d, k=%d)", numClients, k)
	if err := checkLabels(method, labels, numClasses, numClients); err != nil {
		return nil, err
	}
	if k < 1 || k > numClasses {
		return nil, fmt.Errorf("partition %s: classes per client must be in [1, %d], got %d", method, numClasses, k)
	}
	rng := newRNG(seed, streamClasses)
	holders := make([][]int, numClasses) // holders[c]: clients holding class c, in client order
	for i := range numClients {
		held := []int{i % numClasses}
		for len(held) < k {
			c := rng.IntN(numClasses)
			if !slices.Contains(held, c) {
				held = append(held, c)
			}
		}
		for _, c := range held {
			holders[c] = append(holders[c], i)
		}
	}
	byClass := make([][]int, numClasses)
	for _, i := range permutation(rng, len(labels)) {
		byClass[labels[i]] = append(byClass[labels[i]], i)
	}
	clients := make([][]int, numClients)
	for c, hs := range holders {
		if len(hs) == 0 {
			continue
		}
		if len(byClass[c]) < len(hs) {
			return nil, fmt.Errorf("partition %s: class %d has %d examples for %d clients", method, c, len(byClass[c]), len(hs))
		}
		for j, part := range splitEven(byClass[c], len(hs)) {
			clients[hs[j]] = append(clients[hs[j]], part...)
		}
	}
	return finish(&Partition{
		Method: method, Source: "Li et al. (2022), NIID-Bench (#C=k); Fischer et al. (2024), Sec. 3.1",
		Clients: clients, NumClasses: numClasses,
	}, labels)
}
