package partition

import (
	"math"
	"testing"
)

// classRange returns the number of classes a client holds.
func classesHeld(row []int) int {
	n := 0
	for _, v := range row {
		if v > 0 {
			n++
		}
	}
	return n
}

func TestHeterogeneity(t *testing.T) {
	const n, c, k = 5000, 10, 5
	labels := balancedLabels(n, c, 9)
	for _, tc := range []struct {
		h           float64
		maxHeld     int // upper bound on classes per client
		minHeld     int
		sortedShare float64
	}{
		{0, 10, 10, 0},
		{0.3, 10, 10, 0.3},
		{0.9, 10, 2, 0.9},
		{1, 2, 2, 1}, // 5 clients, 10 classes sorted: exactly 2 classes each
	} {
		p, err := Heterogeneity(labels, c, k, tc.h, 4)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, p, n, k, 0)
		for i, row := range p.Counts {
			if held := classesHeld(row); held > tc.maxHeld || held < tc.minHeld {
				t.Errorf("h=%v: client %d holds %d classes: %v", tc.h, i, held, row)
			}
			if s := len(p.Clients[i]); s < n/k-2 || s > n/k+2 {
				t.Errorf("h=%v: client %d has %d examples", tc.h, i, s)
			}
			// The two dominant classes of client i are 2i and 2i+1 (its sorted range): their share is
			// about h + (1-h) 2/10.
			share := float64(row[2*i]+row[2*i+1]) / float64(len(p.Clients[i]))
			if want := tc.sortedShare + (1-tc.sortedShare)*0.2; math.Abs(share-want) > 0.05 {
				t.Errorf("h=%v: client %d: share of classes %d,%d is %.3f, want about %.3f", tc.h, i, 2*i, 2*i+1, share, want)
			}
		}
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return Heterogeneity(labels, c, k, 0.6, seed) })
}

func TestSortedByKey(t *testing.T) {
	const n = 1000
	keys := make([]float32, n)
	for i := range keys {
		keys[i] = float32((i * 7919) % n) // a permutation of 0..999
	}
	p, err := SortedByKey(keys, 4, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, n, 4, 0)
	if p.Counts != nil || p.NumClasses != 0 {
		t.Errorf("regression partition has class counts")
	}
	for k, c := range p.Clients { // h = 1: client k holds keys [250k, 250k+250)
		for _, i := range c {
			if kk := int(keys[i]); kk < 250*k || kk >= 250*(k+1) {
				t.Fatalf("client %d holds key %d", k, kk)
			}
		}
	}
	p, err = SortedByKey(keys, 4, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, n, 4, 0)
	// h = 0.5: client 0's mean key sits between the sorted extreme (62) and the IID mean (500).
	var mean float64
	for _, i := range p.Clients[0] {
		mean += float64(keys[i])
	}
	mean /= float64(len(p.Clients[0]))
	if mean < 200 || mean > 350 {
		t.Errorf("h=0.5: client 0 mean key %.1f, want about 0.5*62 + 0.5*500 = 281", mean)
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return SortedByKey(keys, 4, 0.5, seed) })
}
