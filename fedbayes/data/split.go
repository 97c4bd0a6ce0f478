package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// newRand returns the generator behind every seeded choice of this package (PCG; same seed, same
// result).
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x6665646261796573)) // "fedbayes"
}

// shuffle permutes s with Fisher-Yates driven by r.
func shuffle(r *rand.Rand, s []int) {
	for i := len(s) - 1; i > 0; i-- {
		j := int(r.Uint64N(uint64(i + 1)))
		s[i], s[j] = s[j], s[i]
	}
}

// SplitIndices draws round(fraction * Len()) example indices at random (given the seed) into first
// and the others into rest, both in increasing order. For classification the draw is stratified:
// each class contributes its share (largest remainders settle the rounding), so both parts keep
// the class proportions. Both parts must be non-empty.
func SplitIndices(d *Dataset, fraction float64, seed uint64) (first, rest []int, err error) {
	if err := d.Validate(); err != nil {
		return nil, nil, err
	}
	n := d.Len()
	if !(fraction > 0 && fraction < 1) {
		return nil, nil, fmt.Errorf("split of %s: fraction %g must be in (0, 1)", d.Name, fraction)
	}
	k := int(math.Round(fraction * float64(n)))
	if k == 0 || k == n {
		return nil, nil, fmt.Errorf("split of %s: fraction %g of %d examples leaves one part empty", d.Name, fraction, n)
	}
	r := newRand(seed)
	var groups [][]int
	if d.Labels != nil {
		groups = make([][]int, d.NumClasses)
		for i, l := range d.Labels {
			groups[l] = append(groups[l], i)
		}
	} else {
		groups = [][]int{make([]int, n)}
		for i := range groups[0] {
			groups[0][i] = i
		}
	}
	// Quotas: floor of each group's share, then one more for the largest remainders.
	quota := make([]int, len(groups))
	type rem struct {
		g    int
		frac float64
	}
	var rems []rem
	taken := 0
	for g, idx := range groups {
		exact := fraction * float64(len(idx))
		quota[g] = int(math.Floor(exact))
		taken += quota[g]
		rems = append(rems, rem{g, exact - float64(quota[g])})
	}
	sort.SliceStable(rems, func(i, j int) bool { return rems[i].frac > rems[j].frac })
	for i := 0; taken < k && i < len(rems); i++ {
		if quota[rems[i].g] < len(groups[rems[i].g]) {
			quota[rems[i].g]++
			taken++
		}
	}
	for g, idx := range groups {
		idx = slices.Clone(idx)
		shuffle(r, idx)
		first = append(first, idx[:quota[g]]...)
		rest = append(rest, idx[quota[g]:]...)
	}
	slices.Sort(first)
	slices.Sort(rest)
	return first, rest, nil
}

// Split divides d at random (given the seed) into a part with round(fraction * Len()) examples and
// the rest, stratified by class as in SplitIndices.
func Split(d *Dataset, fraction float64, seed uint64) (part, rest *Dataset, err error) {
	a, b, err := SplitIndices(d, fraction, seed)
	if err != nil {
		return nil, nil, err
	}
	return d.Subset(a), d.Subset(b), nil
}

// SplitServer sets aside a fraction of the training set for the server: the distillation and
// beta-tuning set of Hasan (2023), Sec. 3.3 (20% of the training set) and the pre-training set of
// Fischer et al. (2024), Sec. 3.6 (10%). It returns the server set and the rest, which the clients
// share; the server part is named NAME/server.
func SplitServer(train *Dataset, fraction float64, seed uint64) (server, clients *Dataset, err error) {
	server, clients, err = Split(train, fraction, seed)
	if err != nil {
		return nil, nil, err
	}
	server.Name, clients.Name = train.Name+"/server", train.Name+"/clients"
	return server, clients, nil
}

// TrainTestSplit holds out a test fraction of a dataset that comes without a test split (the
// scikit-learn tables, CSV files), stratified by class for classification.
func TrainTestSplit(d *Dataset, testFraction float64, seed uint64) (train, test *Dataset, err error) {
	test, train, err = Split(d, testFraction, seed)
	if err != nil {
		return nil, nil, err
	}
	train.Name, test.Name = d.Name+"/train", d.Name+"/test"
	return train, test, nil
}
