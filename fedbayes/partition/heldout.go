package partition

import (
	"fmt"
	"math"
	"slices"
)

// HeldOut is a partition whose clients each set aside part of their own examples for evaluation: the
// per-client held-out split that personalised federated learning evaluates on (each client's own
// test data, as LEAF's per-user train/test split; Caldas et al. (2018), "LEAF: A benchmark for
// federated settings"), from which the distribution of per-client accuracy is read
// (Jamoussi et al. (BA-BFL), "Metrics").
type HeldOut struct {
	// Train is the partition of the examples the clients train on: each client's examples less its
	// held-out ones, in their original order (its Counts are recounted).
	Train *Partition
	// Test holds, per client, the indices of its held-out examples, in increasing order.
	Test [][]int
}

// HoldOut sets aside, of each client k of p with n_k examples, ceil(share n_k) examples drawn
// uniformly without replacement (the rounding of scikit-learn's train_test_split for a fractional
// test_size): share is in (0, 1) and every client keeps at least one example to train on. labels
// recount the classes of a labelled partition (nil for a partition by key). The draws depend on
// seed alone, one stream per client, so client k's split does not change with the other clients.
func HoldOut(p *Partition, labels []int32, share float64, seed uint64) (HeldOut, error) {
	if !(share > 0 && share < 1) {
		return HeldOut{}, fmt.Errorf("partition: held-out share %v; must be in (0, 1)", share)
	}
	train := &Partition{Method: fmt.Sprintf("%s, held out %v", p.Method, share), Source: p.Source,
		NumClasses: p.NumClasses, Attempts: p.Attempts, Clients: make([][]int, len(p.Clients))}
	test := make([][]int, len(p.Clients))
	for k, idx := range p.Clients {
		n := len(idx)
		h := HeldOutCount(n, share)
		if n-h < 1 {
			return HeldOut{}, fmt.Errorf("partition: client %d has %d examples: holding out %d (share %v, rounded up) leaves none to train on; "+
				"use a smaller share, fewer clients or more data", k, n, h, share)
		}
		out := make([]bool, n)
		for _, j := range permutation(newRNG(seed^splitmix(uint64(k)+1), streamHeldOut), n)[:h] {
			out[j] = true
		}
		keep := make([]int, 0, n-h)
		held := make([]int, 0, h)
		for j, i := range idx {
			if out[j] {
				held = append(held, i)
			} else {
				keep = append(keep, i)
			}
		}
		slices.Sort(held)
		train.Clients[k], test[k] = keep, held
	}
	if p.Counts != nil {
		if labels == nil {
			return HeldOut{}, fmt.Errorf("partition: held out: the partition counts classes, but no labels were given")
		}
		counts, err := CountClasses(train.Clients, labels, p.NumClasses)
		if err != nil {
			return HeldOut{}, err
		}
		train.Counts = counts
	}
	return HeldOut{Train: train, Test: test}, nil
}

// HeldOutCount is the number of a client's n examples HoldOut sets aside: ceil(share n), ignoring a
// rounding error of 1e-9 (0.1 x 30 is 3, not 4).
func HeldOutCount(n int, share float64) int {
	return int(math.Ceil(share*float64(n) - 1e-9))
}
