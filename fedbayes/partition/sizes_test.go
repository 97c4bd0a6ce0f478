package partition

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestClientSizesHand checks the sizes of 20 examples among 3 clients against hand-computed
// apportionments: one example each, then the other 17 by largest remainders.
func TestClientSizesHand(t *testing.T) {
	for _, tc := range []struct {
		opt  SizeOptions
		want []int
	}{
		// 17 * (1, 2, 3)/6 = 2.83, 5.67, 8.5: floors 2, 5, 8 (15); the two left go to clients 0, 1.
		{SizeOptions{Kind: SizeLinear}, []int{4, 7, 9}},
		// 17 * (1, 4, 9)/14 = 1.21, 4.86, 10.93: floors 1, 4, 10; the two left go to clients 2, 1.
		{SizeOptions{Kind: SizeSquare}, []int{2, 6, 12}},
		// 17 * (e, e^2, e^3)/(e + e^2 + e^3) = 1.53, 4.16, 11.31: floors 1, 4, 11; one left, client 0.
		{SizeOptions{Kind: SizeExponential}, []int{3, 5, 12}},
		// 17 * (1, 1/2, 1/3)/(11/6) = 9.27, 4.64, 3.09: floors 9, 4, 3; one left, client 1.
		{SizeOptions{Kind: SizeZipf, Exponent: 1}, []int{10, 6, 4}},
	} {
		got, err := ClientSizes(20, 3, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: sizes %v, want %v", tc.opt, got, tc.want)
		}
	}
}

// TestClientSizesProperties checks every kind on larger cases: at least one example each, the sum is
// the total, the random kinds reproduce per seed and differ across seeds.
func TestClientSizesProperties(t *testing.T) {
	opts := []SizeOptions{{Kind: SizeLinear}, {Kind: SizeSquare}, {Kind: SizeExponential}, {Kind: SizeZipf, Exponent: 1.5},
		{Kind: SizeLogNormal, Sigma: 1}, {Kind: SizeDirichlet, Beta: 0.3}}
	for _, opt := range opts {
		for _, tc := range []struct{ total, clients int }{{1000, 100}, {100, 100}, {60000, 10}, {101, 7}} {
			opt.Seed = 5
			a, err := ClientSizes(tc.total, tc.clients, opt)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for _, n := range a {
				if n < 1 {
					t.Fatalf("%s, %d of %d: a client of size %d", opt, tc.total, tc.clients, n)
				}
				sum += n
			}
			if sum != tc.total || len(a) != tc.clients {
				t.Fatalf("%s: %d sizes summing to %d, want %d summing to %d", opt, len(a), sum, tc.clients, tc.total)
			}
			b, _ := ClientSizes(tc.total, tc.clients, opt)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: same seed, different sizes", opt)
			}
			opt.Seed = 6
			c, _ := ClientSizes(tc.total, tc.clients, opt)
			random := opt.Kind == SizeLogNormal || opt.Kind == SizeDirichlet
			if random && tc.total > 2*tc.clients && reflect.DeepEqual(a, c) {
				t.Errorf("%s: different seeds, same sizes %v", opt, a)
			}
			if !random && !reflect.DeepEqual(a, c) {
				t.Errorf("%s: a deterministic kind depends on the seed", opt)
			}
		}
	}
	// Exponential over 100 clients: the last holds (1 - 1/e) of the examples beyond the first 100.
	s, _ := ClientSizes(10100, 100, SizeOptions{Kind: SizeExponential})
	if got := s[99]; got < 6300 || got > 6330 {
		t.Errorf("exponential: last client %d, want about 1 + 10000 (1 - 1/e) = 6322", got)
	}
	if !slices.IsSorted(s) {
		t.Errorf("exponential sizes not increasing: %v", s)
	}
}

func TestClientSizesErrors(t *testing.T) {
	for _, tc := range []struct {
		total, clients int
		opt            SizeOptions
		want           string
	}{
		{5, 6, SizeOptions{Kind: SizeLinear}, "cannot be split among 6 clients"},
		{10, 0, SizeOptions{Kind: SizeLinear}, "number of clients"},
		{10, 2, SizeOptions{Kind: "pareto"}, "unknown size distribution"},
		{10, 2, SizeOptions{Kind: SizeZipf}, "exponent must be positive"},
		{10, 2, SizeOptions{Kind: SizeLogNormal, Sigma: -1}, "sigma must be positive"},
		{10, 2, SizeOptions{Kind: SizeDirichlet}, "beta must be positive"},
	} {
		if _, err := ClientSizes(tc.total, tc.clients, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ClientSizes(%d, %d, %+v): %v, want %q", tc.total, tc.clients, tc.opt, err, tc.want)
		}
	}
}

// TestWithSizesIID: sizes on an IID base give each client its size and keep every example once.
func TestWithSizesIID(t *testing.T) {
	labels := balancedLabels(1000, 10, 1)
	base, err := IID(labels, 10, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{10, 40, 150, 300, 500}
	p, err := WithSizes(base, labels, sizes, 4)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 1000, 5, 0)
	if !reflect.DeepEqual(p.Sizes(), sizes) {
		t.Fatalf("sizes %v, want %v", p.Sizes(), sizes)
	}
	// The largest client of an IID base holds every class.
	for c, n := range p.Counts[4] {
		if n == 0 {
			t.Errorf("client 4 (500 examples) holds no example of class %d", c)
		}
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return WithSizes(base, labels, sizes, seed) })
}

// TestWithSizesDirichlet combines Zipf sizes with Dirichlet label skew: the sizes are Zipf's, and a
// client keeps the classes it held under the Dirichlet split while they last.
func TestWithSizesDirichlet(t *testing.T) {
	labels := balancedLabels(6000, 10, 2)
	base, err := Dirichlet(labels, 10, 10, DirichletOptions{Alpha: 0.1, MinSize: 10, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	sizes, err := ClientSizes(base.Total(), 10, SizeOptions{Kind: SizeZipf, Exponent: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := WithSizes(base, labels, sizes, 9)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 6000, 10, 0)
	if !reflect.DeepEqual(p.Sizes(), sizes) {
		t.Fatalf("sizes %v, want %v", p.Sizes(), sizes)
	}
	// The label skew survives: the share of examples in classes their client held under the
	// Dirichlet split is well above the share an IID deal of the same sizes would give (each class
	// is a tenth of the data), here 0.83 against 0.44. The largest client (2,046 examples) needs more
	// than its classes hold beside the others' needs, so it is not 1.
	kept, iid := 0, 0.0
	for k, row := range p.Counts {
		held := 0
		for c, n := range row {
			if base.Counts[k][c] > 0 {
				kept += n
				held++
			}
		}
		iid += float64(sizes[k]) * float64(held) / 10
	}
	share, iidShare := float64(kept)/6000, iid/6000
	if share < (1+iidShare)/2 {
		t.Errorf("%.3f of the examples are of classes their client held before; an IID deal gives %.3f", share, iidShare)
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return WithSizes(base, labels, sizes, seed) })
}

// TestWithSizesShardsHand: two clients each holding one class (shards), sizes 3 and 9 of 12
// examples, 6 per class: client 0 takes 3 of its class; client 1 takes its 6 and, its class spent,
// the 3 left of the other class.
func TestWithSizesShardsHand(t *testing.T) {
	labels := []int32{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	base := &Partition{Method: "hand", Source: "test", NumClasses: 2,
		Clients: [][]int{{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}}, Counts: [][]int{{6, 0}, {0, 6}}}
	p, err := WithSizes(base, labels, []int{3, 9}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{3, 0}, {3, 6}}; !reflect.DeepEqual(p.Counts, want) {
		t.Errorf("counts %v, want %v", p.Counts, want)
	}
	checkPartition(t, p, 12, 2, 0)
}

func TestWithSizesErrors(t *testing.T) {
	labels := balancedLabels(100, 2, 1)
	base, _ := IID(labels, 2, 2, 1)
	for _, tc := range []struct {
		sizes []int
		want  string
	}{
		{[]int{50}, "1 sizes for 2 clients"},
		{[]int{0, 100}, "at least one example"},
		{[]int{50, 49}, "sum to 99"},
	} {
		if _, err := WithSizes(base, labels, tc.sizes, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("WithSizes(%v): %v, want %q", tc.sizes, err, tc.want)
		}
	}
	if _, err := WithSizes(&Partition{Clients: [][]int{{0}}}, labels, []int{1}, 1); err == nil {
		t.Errorf("a partition by key took sizes")
	}
}
