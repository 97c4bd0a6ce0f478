package data

import (
	"slices"
	"strings"
	"testing"
)

// classificationSet has the given number of examples per class, one feature holding the index.
func classificationSet(perClass ...int) *Dataset {
	d := &Dataset{Name: "c", Shape: []int{1}, NumClasses: len(perClass), Labels: []int32{}}
	for c, n := range perClass {
		for i := 0; i < n; i++ {
			d.X = append(d.X, float32(len(d.Labels)))
			d.Labels = append(d.Labels, int32(c))
		}
	}
	return d
}

func TestSplitIndices(t *testing.T) {
	tests := []struct {
		name      string
		d         *Dataset
		fraction  float64
		wantFirst int
		perClass  []int // expected class counts of the first part; nil for regression
	}{
		{"stratified exact", classificationSet(50, 30, 20), 0.2, 20, []int{10, 6, 4}},
		{"largest remainder", classificationSet(5, 5, 5), 0.2, 3, []int{1, 1, 1}},
		{"rounding across classes", classificationSet(7, 3), 0.5, 5, []int{4, 1}}, // 3.5 and 1.5: ties go to the first class
		{"regression", &Dataset{Name: "r", Shape: []int{1}, X: make([]float32, 10), Targets: make([]float32, 10)}, 0.3, 3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, rest, err := SplitIndices(tc.d, tc.fraction, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != tc.wantFirst || len(first)+len(rest) != tc.d.Len() {
				t.Fatalf("sizes %d + %d, want %d + %d", len(first), len(rest), tc.wantFirst, tc.d.Len()-tc.wantFirst)
			}
			all := append(slices.Clone(first), rest...)
			slices.Sort(all)
			for i, v := range all {
				if v != i {
					t.Fatalf("the parts do not partition 0..%d: %v", tc.d.Len()-1, all)
				}
			}
			if !slices.IsSorted(first) || !slices.IsSorted(rest) {
				t.Fatal("parts not in increasing order")
			}
			if tc.perClass != nil {
				if got := tc.d.Subset(first).ClassCounts(); !slices.Equal(got, tc.perClass) {
					t.Fatalf("class counts of the first part %v, want %v", got, tc.perClass)
				}
			}
			again, _, _ := SplitIndices(tc.d, tc.fraction, 7)
			if !slices.Equal(first, again) {
				t.Fatal("same seed, different split")
			}
		})
	}
}

func TestSplitSeedsDiffer(t *testing.T) {
	d := classificationSet(100, 100)
	a, _, _ := SplitIndices(d, 0.2, 1)
	b, _, _ := SplitIndices(d, 0.2, 2)
	if slices.Equal(a, b) {
		t.Fatal("seeds 1 and 2 gave the same split")
	}
}

func TestSplitErrors(t *testing.T) {
	d := classificationSet(3, 3)
	for _, tc := range []struct {
		fraction float64
		want     string
	}{{0, "must be in (0, 1)"}, {1, "must be in (0, 1)"}, {0.01, "leaves one part empty"}, {0.99, "leaves one part empty"}} {
		if _, _, err := SplitIndices(d, tc.fraction, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fraction %g: error %v, want %q", tc.fraction, err, tc.want)
		}
	}
	bad := classificationSet(2)
	bad.Labels[1] = 5
	if _, _, err := SplitIndices(bad, 0.5, 0); err == nil || !strings.Contains(err.Error(), "outside [0, 1)") {
		t.Errorf("invalid labels: error %v", err)
	}
}

func TestSplitServerAndTrainTest(t *testing.T) {
	d := classificationSet(40, 60)
	d.Name = "fm/train"
	server, clients, err := SplitServer(d, 0.2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if server.Len() != 20 || clients.Len() != 80 || server.Name != "fm/train/server" || clients.Name != "fm/train/clients" {
		t.Fatalf("server %d %q, clients %d %q", server.Len(), server.Name, clients.Len(), clients.Name)
	}
	if !slices.Equal(server.ClassCounts(), []int{8, 12}) {
		t.Fatalf("server class counts %v", server.ClassCounts())
	}
	// The values follow the indices: no example is in both parts.
	seen := map[float32]bool{}
	for _, v := range append(slices.Clone(server.X), clients.X...) {
		if seen[v] {
			t.Fatalf("example %g in both parts", v)
		}
		seen[v] = true
	}
	d.Name = "iris"
	train, test, err := TrainTestSplit(d, 0.25, 0)
	if err != nil || train.Len() != 75 || test.Len() != 25 || train.Name != "iris/train" || test.Name != "iris/test" {
		t.Fatalf("train/test %v %v %v", train, test, err)
	}
}
