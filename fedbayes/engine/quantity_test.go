package engine

import (
	"reflect"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/partition"
)

// TestSizesSpecValidate checks partition.sizes's refusals, each naming its field.
func TestSizesSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes *SizesSpec
		mod   func(*Spec)
		path  string
	}{
		{"unknown kind", &SizesSpec{Kind: "pareto"}, nil, "partition.sizes.kind"},
		{"negative exponent", &SizesSpec{Kind: "zipf", Exponent: -1}, nil, "partition.sizes.exponent"},
		{"parameter of another kind", &SizesSpec{Kind: "linear", Sigma: 1}, nil, "partition.sizes.sigma"},
		{"regression", &SizesSpec{Kind: "linear"}, func(s *Spec) {
			s.Dataset.Name, s.Partition.Method, s.Partition.Alpha, s.Partition.MinSize = "diabetes", "iid", 0, 0
		}, "partition.sizes"},
	} {
		s := digitsSpec()
		s.Partition.Sizes = tc.sizes
		if tc.mod != nil {
			tc.mod(s)
		}
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.path+":") {
			t.Errorf("%s: %v, want an error at %s", tc.name, err, tc.path)
		}
	}
	s := digitsSpec()
	s.Partition.Sizes = &SizesSpec{Kind: "zipf"}
	if err := s.Validate(); err != nil {
		t.Fatalf("zipf with the default exponent: %v", err)
	}
	if got := s.WithDefaults().Partition.Sizes.Exponent; got != 1 {
		t.Errorf("default zipf exponent %v, want 1", got)
	}
	if _, err := ParseSpec([]byte(`{"dataset": {"name": "digits"}, "partition": {"sizes": {"kind": "zipf", "exponent": 0}}}`)); err == nil ||
		!strings.Contains(err.Error(), "partition.sizes.exponent") {
		t.Errorf("an explicit zero exponent: %v", err)
	}
}

// TestSizesProblem builds the digits' clients with Zipf sizes on a Dirichlet split: the sizes are
// partition.ClientSizes's, the seed reproduces them, and the partition names both.
func TestSizesProblem(t *testing.T) {
	requireDigits(t)
	s := digitsSpec().WithDefaults()
	s.Partition.Sizes = &SizesSpec{Kind: "zipf", Exponent: 1}
	p, err := newProblem(s, 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := partition.ClientSizes(p.part.Total(), 4, partition.SizeOptions{Kind: partition.SizeZipf, Exponent: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.part.Sizes(); !reflect.DeepEqual(got, want) {
		t.Errorf("sizes %v, want %v", got, want)
	}
	if !strings.Contains(p.part.Method, "dirichlet") || !strings.Contains(p.part.Method, "zipf(s=1)") {
		t.Errorf("method %q does not name the label split and the sizes", p.part.Method)
	}
	q, err := newProblem(s, 3, &datasetCache{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.part.Clients, q.part.Clients) {
		t.Errorf("the same seed gave different clients")
	}
}
