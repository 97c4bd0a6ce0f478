package partition

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestHeldOutCount: ceil(share n), with 0.1 x 30 = 3 (not 4 from the float product's last bit).
func TestHeldOutCount(t *testing.T) {
	for _, c := range []struct {
		n     int
		share float64
		want  int
	}{{10, 0.2, 2}, {30, 0.1, 3}, {7, 0.2, 2}, {1, 0.5, 1}, {3, 0.34, 2}, {200, 0.25, 50}} {
		if got := HeldOutCount(c.n, c.share); got != c.want {
			t.Errorf("HeldOutCount(%d, %v) = %d, want %d", c.n, c.share, got, c.want)
		}
	}
}

// TestHoldOut: each client keeps n - ceil(share n) examples in their order and holds out the rest,
// the two disjoint and together the client's examples; the counts are recounted; the split is
// seeded, and one client's split does not depend on the other clients.
func TestHoldOut(t *testing.T) {
	labels := []int32{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 2}
	p := &Partition{Method: "hand", Source: "test", NumClasses: 3, Attempts: 1,
		Clients: [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10, 11}}}
	var err error
	if p.Counts, err = CountClasses(p.Clients, labels, 3); err != nil {
		t.Fatal(err)
	}
	h, err := HoldOut(p, labels, 0.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Train.Validate(len(labels)); err != nil {
		t.Fatal(err)
	}
	if got := h.Train.Sizes(); !reflect.DeepEqual(got, []int{7, 1}) { // 10 - ceil(2.5), 2 - ceil(0.5)
		t.Fatalf("training sizes %v, want [7 1]", got)
	}
	if len(h.Test[0]) != 3 || len(h.Test[1]) != 1 {
		t.Fatalf("held-out sizes %d, %d; want 3, 1", len(h.Test[0]), len(h.Test[1]))
	}
	for k, idx := range p.Clients {
		all := append(slices.Clone(h.Train.Clients[k]), h.Test[k]...)
		slices.Sort(all)
		if !reflect.DeepEqual(all, idx) {
			t.Errorf("client %d: training %v and held out %v are not its examples %v", k, h.Train.Clients[k], h.Test[k], idx)
		}
		if !slices.IsSorted(h.Train.Clients[k]) || !slices.IsSorted(h.Test[k]) {
			t.Errorf("client %d: not in increasing order: %v, %v", k, h.Train.Clients[k], h.Test[k])
		}
	}
	if !strings.Contains(h.Train.Method, "held out 0.25") {
		t.Errorf("method %q does not name the split", h.Train.Method)
	}
	again, _ := HoldOut(p, labels, 0.25, 5)
	if !reflect.DeepEqual(again, h) {
		t.Error("the same seed gives another split")
	}
	other, _ := HoldOut(p, labels, 0.25, 6)
	if reflect.DeepEqual(other.Test[0], h.Test[0]) {
		t.Error("another seed gives the same split of client 0") // 1 in C(10, 3) = 120 by chance
	}
	// Client 0 alone: the same split as beside client 1.
	alone := &Partition{Method: "hand", NumClasses: 3, Clients: p.Clients[:1]}
	a, err := HoldOut(alone, nil, 0.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Test[0], h.Test[0]) {
		t.Errorf("client 0 alone holds out %v, beside client 1 %v", a.Test[0], h.Test[0])
	}
	// Counts recounted: client 1 kept one example of class 2.
	if !reflect.DeepEqual(h.Train.Counts[1], []int{0, 0, 1}) {
		t.Errorf("client 1's counts %v, want [0 0 1]", h.Train.Counts[1])
	}
}

// TestHoldOutRefuses: a share outside (0, 1), a client left with nothing to train on, counts
// without labels.
func TestHoldOutRefuses(t *testing.T) {
	p := &Partition{Method: "hand", Clients: [][]int{{0, 1, 2}, {3}}}
	for _, c := range []struct {
		share float64
		want  string
	}{{0, "must be in (0, 1)"}, {1, "must be in (0, 1)"}, {-0.1, "must be in (0, 1)"}, {0.2, "client 1 has 1 examples"}} {
		if _, err := HoldOut(p, nil, c.share, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("share %v: error %v, want %q", c.share, err, c.want)
		}
	}
	q := &Partition{Method: "hand", NumClasses: 1, Clients: [][]int{{0, 1}}, Counts: [][]int{{2}}}
	if _, err := HoldOut(q, nil, 0.5, 1); err == nil || !strings.Contains(err.Error(), "no labels") {
		t.Errorf("counts without labels: %v", err)
	}
}
