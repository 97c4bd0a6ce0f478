package data

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadTablesStandardised(t *testing.T) {
	dir := t.TempDir()
	writeSklearnDir(t, dir)
	for _, name := range []string{"wine", "breast-cancer", "boston", "diabetes"} {
		t.Run(name, func(t *testing.T) {
			raw, err := LoadSklearn(name, dir)
			if err != nil {
				t.Fatal(err)
			}
			train, test, err := Load(name, dir)
			if err != nil {
				t.Fatal(err)
			}
			if train.Len()+test.Len() != raw.Len() || test.Len() != int(math.Round(0.2*float64(raw.Len()))) {
				t.Fatalf("split %d + %d of %d", train.Len(), test.Len(), raw.Len())
			}
			// Training features have mean 0 and standard deviation 1 (or are constant 0).
			s, err := FitStandardizer(train)
			if err != nil {
				t.Fatal(err)
			}
			for j := range s.Mean {
				if math.Abs(s.Mean[j]) > 1e-5 || (math.Abs(s.Std[j]-1) > 1e-5 && s.Std[j] != 1) {
					t.Fatalf("feature %d: train mean %g std %g after standardisation", j, s.Mean[j], s.Std[j])
				}
			}
			if raw.IsRegression() && !slices.Equal(sortedCopy(append(slices.Clone(train.Targets), test.Targets...)), sortedCopy(raw.Targets)) {
				t.Fatal("regression targets changed")
			}
			again, _, _ := Load(name, dir)
			if !slices.Equal(again.X, train.X) {
				t.Fatal("same seed, different split")
			}
			other, _, _ := Load(name, dir, WithSeed(9), WithTestFraction(0.5))
			if other.Len() != raw.Len()-int(math.Round(0.5*float64(raw.Len()))) {
				t.Fatalf("test fraction 0.5: train %d of %d", other.Len(), raw.Len())
			}
			unscaled, _, _ := Load(name, dir, WithoutStandardization())
			if min(slices.Min(unscaled.X), 0) < -1e-9 && name != "boston" {
				t.Fatalf("unstandardised features negative: %v", unscaled.X[:4])
			}
		})
	}
	// digits stays in [0, 1].
	train, _, err := Load("digits", dir)
	if err != nil || slices.Min(train.X) < 0 || slices.Max(train.X) != 1 {
		t.Fatalf("digits: %v", err)
	}
}

func sortedCopy(x []float32) []float32 { return slices.Sorted(slices.Values(x)) }

func TestLoadCSVByName(t *testing.T) {
	p := writeFile(t, filepath.Join(t.TempDir(), "houses.csv"), []byte("size,rooms,price\n50,2,100\n70,3,150\n90,3,210\n120,4,300\n60,2,120\n"))
	if _, _, err := Load("csv:"+p, ""); err == nil || !strings.Contains(err.Error(), "WithTarget") {
		t.Fatalf("csv without target: %v", err)
	}
	train, test, err := Load("csv:"+p, "", WithTarget("price"), WithFeatures("size"))
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 4 || test.Len() != 1 || train.Name != "houses/train" || !slices.Equal(train.Shape, []int{1}) {
		t.Fatalf("train %d test %d name %q shape %v", train.Len(), test.Len(), train.Name, train.Shape)
	}
}

func TestLoadNames(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Load("nosuch", dir); err == nil || !strings.Contains(err.Error(), "known: fashion-mnist") {
		t.Fatalf("unknown name: %v", err)
	}
	// Every listed name is dispatched to a loader: in an empty folder each says a file is missing.
	for _, name := range Names() {
		_, _, err := Load(name, dir)
		if err == nil || strings.Contains(err.Error(), "unknown") || !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s in an empty folder: error %v", name, err)
		}
	}
}

func TestSplitBySeed(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"digits", true}, {"iris", true}, {"diabetes", true}, {"boston", true}, {"csv:/tmp/x.csv", true},
		{"fashion-mnist", false}, {"mnist", false}, {"cifar10", false}, {"emnist-digits", false},
	} {
		if got := SplitBySeed(c.name); got != c.want {
			t.Errorf("SplitBySeed(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRegressionSet checks RegressionSet against the names and against what Load gives: every
// scikit-learn table and a CSV file load with regression targets exactly when RegressionSet says so.
func TestRegressionSet(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"diabetes", true}, {"boston", true}, {"csv:/tmp/x.csv", true},
		{"digits", false}, {"iris", false}, {"wine", false}, {"breast-cancer", false},
		{"fashion-mnist", false}, {"mnist", false}, {"cifar10", false}, {"svhn", false}, {"emnist-digits", false}, {"nosuch", false},
	} {
		if got := RegressionSet(c.name); got != c.want {
			t.Errorf("RegressionSet(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	dir := t.TempDir()
	writeSklearnDir(t, dir)
	for _, name := range SklearnNames() {
		train, test, err := Load(name, dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if train.IsRegression() != RegressionSet(name) || test.IsRegression() != RegressionSet(name) {
			t.Errorf("%s loads with regression targets %v (test %v); RegressionSet says %v", name, train.IsRegression(), test.IsRegression(), RegressionSet(name))
		}
	}
	p := writeFile(t, filepath.Join(t.TempDir(), "houses.csv"), []byte("size,price\n50,100\n70,150\n90,210\n120,300\n60,120\n"))
	train, _, err := Load("csv:"+p, "", WithTarget("price"))
	if err != nil {
		t.Fatal(err)
	}
	if !train.IsRegression() || !RegressionSet("csv:"+p) {
		t.Errorf("csv without WithClassification: IsRegression %v, RegressionSet %v; want both true", train.IsRegression(), RegressionSet("csv:"+p))
	}
}
