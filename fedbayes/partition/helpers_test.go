package partition

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// balancedLabels returns n labels, n/c of each class, in shuffled order.
func balancedLabels(n, c int, seed uint64) []int32 {
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(i % c)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	rng.Shuffle(n, func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })
	return labels
}

// checkPartition validates p, checks the client count, and that it uses all but unused examples.
func checkPartition(t *testing.T, p *Partition, n, clients, unused int) {
	t.Helper()
	if err := p.Validate(n); err != nil {
		t.Fatal(err)
	}
	if p.NumClients() != clients || p.Unused(n) != unused {
		t.Fatalf("%s: %d clients, %d unused; want %d and %d", p.Method, p.NumClients(), p.Unused(n), clients, unused)
	}
	if p.Source == "" || p.Method == "" || p.Attempts < 1 {
		t.Fatalf("partition lacks method/source/attempts: %+v", p.Method)
	}
}

// checkDeterministic builds twice with the same seed and once with another.
func checkDeterministic(t *testing.T, build func(seed uint64) (*Partition, error)) {
	t.Helper()
	a, err := build(7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := build(7)
	if err != nil {
		t.Fatal(err)
	}
	c, err := build(8)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: same seed, different partitions", a.Method)
	}
	if reflect.DeepEqual(a.Clients, c.Clients) {
		t.Errorf("%s: different seeds, same partition", a.Method)
	}
}
