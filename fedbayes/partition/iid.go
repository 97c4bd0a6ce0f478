package partition

import "fmt"

// IID splits the examples uniformly at random into numClients clients of equal size (sizes differ by
// at most one): the IID setting of Ozer et al. (2022), Sec. 5 and Fischer et al. (2024), Sec. 3.1
// (the "homogeneous" partition of Li et al. (2022), NIID-Bench).
func IID(labels []int32, numClasses, numClients int, seed uint64) (*Partition, error) {
	if err := checkLabels("iid", labels, numClasses, numClients); err != nil {
		return nil, err
	}
	p := iid(len(labels), numClients, seed)
	p.NumClasses = numClasses
	return finish(p, labels)
}

// IIDSize is IID for an unlabelled or regression dataset of numExamples examples (no count matrix).
func IIDSize(numExamples, numClients int, seed uint64) (*Partition, error) {
	if err := checkClients("iid", numExamples, numClients); err != nil {
		return nil, err
	}
	return finish(iid(numExamples, numClients, seed), nil)
}

// iid builds the IID split.
func iid(n, numClients int, seed uint64) *Partition {
	rng := newRNG(seed, streamIID)
	chunks := splitEven(permutation(rng, n), numClients)
	return &Partition{
		Method:  fmt.Sprintf("iid(clients=%d)", numClients),
		Source:  "Ozer et al. (2022), Sec. 5; Fischer et al. (2024), Sec. 3.1",
		Clients: chunks,
	}
}
