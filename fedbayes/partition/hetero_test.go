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

// TestHeterogeneityB21 checks Heterogeneity against Hasan (2023), App. B.2.1, worked by hand for 1,000
// examples of 10 balanced classes (100 each) and 5 clients: the class-sorted copy cut into 5 shards
// gives client k classes 2k and 2k+1 (100 each); the homogeneous shards hold 200 examples, 20 of each
// class; a fraction h of every homogeneous shard is replaced by client k's sorted shard. So every
// client holds 200 examples, and expects h·200/2 + (1-h)·20 of each of its two classes and (1-h)·20
// of each other class: at h = 0.6, 68 and 8; at h = 1, exactly 100 and 0. The counts are averaged
// over 40 seeds (the homogeneous part is random).
//
// Heterogeneity sorts a random subset of round(h n) examples instead of the whole dataset, so its
// shard boundaries fall where the subset's cumulative class counts put them, not exactly between
// classes: a client's sorted part gains or loses examples of the neighbouring classes. The boundary
// after class 2k+1 moves by a hypergeometric count (round(h n) draws, a share (2k+2)/10 below it,
// without replacement from n) whose SD, a bound on its mean absolute value, is added to the tolerance
// of the classes beside it; at h = 0.6 it is up to 4.8 examples of a client's 120 sorted ones.
func TestHeterogeneityB21(t *testing.T) {
	const n, c, k, seeds = 1000, 10, 5, 40
	labels := balancedLabels(n, c, 3)
	for _, h := range []float64{0, 0.3, 0.6, 0.9, 1} {
		own, other := h*200/2+(1-h)*20, (1-h)*20
		mean := make([][]float64, k)
		for i := range mean {
			mean[i] = make([]float64, c)
		}
		for s := range uint64(seeds) {
			p, err := Heterogeneity(labels, c, k, h, s)
			if err != nil {
				t.Fatal(err)
			}
			checkPartition(t, p, n, k, 0)
			for i, row := range p.Counts {
				if len(p.Clients[i]) != n/k {
					t.Fatalf("h=%v seed %d: client %d holds %d examples, want %d", h, s, i, len(p.Clients[i]), n/k)
				}
				for cl, v := range row {
					mean[i][cl] += float64(v) / seeds
				}
			}
		}
		nSorted := math.Round(h * n)
		// boundarySD is the SD of the sorted subset's count below the boundary after class b.
		boundarySD := func(b int) float64 {
			if b < 0 || b >= c-1 {
				return 0 // the ends of the sorted order do not move
			}
			q := float64(b+1) / c
			return math.Sqrt(nSorted * q * (1 - q) * (n - nSorted) / (n - 1))
		}
		for i := range mean {
			for cl, m := range mean[i] {
				want := other
				if cl/2 == i {
					want = own
				}
				// A count's SD is at most about 5 here (a hypergeometric share of 200), so the mean
				// over 40 seeds is within 2.5 of its expectation with room to spare; the classes
				// beside a moving boundary (the first and last class of a client's range, and the
				// neighbouring client's classes next to them) add that boundary's SD.
				tol := 2.5
				switch {
				case cl == 2*i:
					tol += boundarySD(cl - 1)
				case cl == 2*i+1:
					tol += boundarySD(cl)
				case cl == 2*i-1:
					tol += boundarySD(cl)
				case cl == 2*i+2:
					tol += boundarySD(cl - 1)
				}
				if math.Abs(m-want) > tol {
					t.Errorf("h=%v: client %d, class %d: mean count %.2f, B.2.1 gives %.2f (tolerance %.2f)", h, i, cl, m, want, tol)
				}
			}
		}
	}
}
