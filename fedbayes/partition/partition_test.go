package partition

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Partition
		want string
	}{
		{"ok", Partition{Method: "m", Clients: [][]int{{0, 2}, {1}}, NumClasses: 2, Counts: [][]int{{1, 1}, {0, 1}}}, ""},
		{"range", Partition{Method: "m", Clients: [][]int{{0, 3}}}, "client 0 has index 3, out of range [0, 3)"},
		{"negative", Partition{Method: "m", Clients: [][]int{{-1}}}, "index -1"},
		{"twice", Partition{Method: "m", Clients: [][]int{{0, 1}, {1}}}, "example 1 is assigned twice (again to client 1)"},
		{"rows", Partition{Method: "m", Clients: [][]int{{0}}, NumClasses: 2, Counts: [][]int{}}, "0 rows for 1 clients"},
		{"sum", Partition{Method: "m", Clients: [][]int{{0}}, NumClasses: 2, Counts: [][]int{{1, 1}}}, "sum to 2, but it has 1"},
		{"cols", Partition{Method: "m", Clients: [][]int{{0}}, NumClasses: 2, Counts: [][]int{{1}}}, "has 1 classes, want 2"},
	} {
		err := tc.p.Validate(3)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	p := Partition{Clients: [][]int{{0, 2}, {1}, {}}}
	if s := p.Sizes(); s[0] != 2 || s[1] != 1 || s[2] != 0 {
		t.Errorf("Sizes = %v", s)
	}
	if w := p.SizeWeights(); w[0] != 2.0/3 || w[1] != 1.0/3 || w[2] != 0 {
		t.Errorf("SizeWeights = %v", w)
	}
	if p.Unused(5) != 2 {
		t.Errorf("Unused = %d", p.Unused(5))
	}
	if (&Partition{Clients: [][]int{{}}}).SizeWeights() != nil {
		t.Errorf("SizeWeights of an empty partition is not nil")
	}
}

func TestCountClasses(t *testing.T) {
	counts, err := CountClasses([][]int{{0, 1, 3}, {2}}, []int32{1, 1, 0, 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{0, 2, 1}, {1, 0, 0}}; !equalMatrix(counts, want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	if _, err := CountClasses([][]int{{4}}, []int32{0}, 1); err == nil {
		t.Errorf("out-of-range index gave no error")
	}
	if _, err := CountClasses([][]int{{0}}, []int32{3}, 2); err == nil {
		t.Errorf("out-of-range label gave no error")
	}
}

func equalMatrix(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

func TestIID(t *testing.T) {
	labels := balancedLabels(1003, 10, 1)
	p, err := IID(labels, 10, 10, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, p, 1003, 10, 0)
	for k, s := range p.Sizes() {
		want := 100
		if k < 3 {
			want = 101
		}
		if s != want {
			t.Errorf("client %d has %d examples, want %d", k, s, want)
		}
		for c, n := range p.Counts[k] {
			if n < 1 || n > 25 { // about 10 of each class per client
				t.Errorf("client %d has %d examples of class %d", k, n, c)
			}
		}
	}
	checkDeterministic(t, func(seed uint64) (*Partition, error) { return IID(labels, 10, 10, seed) })
	q, err := IIDSize(50, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, q, 50, 7, 0)
	if q.Counts != nil {
		t.Errorf("IIDSize has a count matrix")
	}
}

func TestLabelledInputErrors(t *testing.T) {
	labels := []int32{0, 1, 2, 1}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"iid clients", func() error { _, err := IID(labels, 3, 0, 1); return err }, "number of clients must be positive"},
		{"iid too many", func() error { _, err := IID(labels, 3, 5, 1); return err }, "4 examples cannot be split among 5 clients"},
		{"iid label", func() error { _, err := IID(labels, 2, 2, 1); return err }, "label of example 2 is 2, out of range [0, 2)"},
		{"iid classes", func() error { _, err := IID(labels, 0, 2, 1); return err }, "number of classes"},
		{"iidsize", func() error { _, err := IIDSize(0, 1, 1); return err }, "0 examples"},
		{"shards per client", func() error { _, err := Shards(labels, 3, 2, 0, 1); return err }, "shards per client must be positive"},
		{"shards too few", func() error { _, err := Shards(labels, 3, 2, 3, 1); return err }, "too few for 6 shards"},
		{"shards classes", func() error { _, err := Shards([]int32{0, 0, 0, 0}, 3, 2, 2, 1); return err }, "cover only 1 classes"},
		{"k range", func() error { _, err := ClassesPerClient(labels, 3, 2, 4, 1); return err }, "must be in [1, 3]"},
		{"h range", func() error { _, err := Heterogeneity(labels, 3, 2, 1.5, 1); return err }, "h must be in [0, 1]"},
		{"key nan", func() error { _, err := SortedByKey([]float32{1, float32(nan())}, 1, 1, 1); return err }, "key of example 1 is NaN"},
	} {
		err := tc.run()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
