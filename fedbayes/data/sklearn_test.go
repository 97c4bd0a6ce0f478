package data

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSklearnDir writes small files in the formats of scikit-learn's bundled data into dir/sklearn.
// Digits and diabetes have their real row counts (1,797 and 442), which the loader checks.
func writeSklearnDir(t testing.TB, dir string) {
	t.Helper()
	sk := filepath.Join(dir, SklearnDir)
	var iris strings.Builder
	iris.WriteString("6,4,setosa,versicolor,virginica\n")
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&iris, "%g,%g,1.4,0.2,%d\n", 5+0.1*float64(i), 3-0.5*float64(i%2), i%3)
	}
	writeFile(t, filepath.Join(sk, "iris.csv"), []byte(iris.String()))
	var wine, cancer strings.Builder
	wine.WriteString("10,2,class_0,class_1,class_2\n")
	cancer.WriteString("10,3,malignant,benign\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&wine, "%d,%d,%d\n", i, 2*i, i%3)
		fmt.Fprintf(&cancer, "%d,1,%d,%d\n", i, i*i, i%2)
	}
	writeFile(t, filepath.Join(sk, "wine_data.csv"), []byte(wine.String()))
	writeFile(t, filepath.Join(sk, "breast_cancer.csv"), []byte(cancer.String()))
	var boston strings.Builder
	boston.WriteString("10,2,,\n\"CRIM\",\"ZN\",\"MEDV\"\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&boston, "%g,%d,%g\n", 0.1*float64(i), i, 20+float64(i))
	}
	writeFile(t, filepath.Join(sk, "boston_house_prices.csv"), []byte(boston.String()))
	var digits strings.Builder
	for i := 0; i < 1797; i++ {
		for p := 0; p < 64; p++ {
			fmt.Fprintf(&digits, "%d,", (i+p)%17)
		}
		fmt.Fprintf(&digits, "%d\n", i%10)
	}
	writeFile(t, filepath.Join(sk, "digits.csv.gz"), gzipBytes(t, []byte(digits.String())))
	var dia, target strings.Builder
	for i := 0; i < 442; i++ {
		fmt.Fprintf(&dia, "%d %d %g 101.0 157 93.2 38.0 4.0 4.8598 %d\n", 20+i%50, 1+i%2, 20+0.1*float64(i), i%90)
		fmt.Fprintf(&target, "%.18e\n", float64(25+i))
	}
	writeFile(t, filepath.Join(sk, "diabetes_data_raw.csv.gz"), gzipBytes(t, []byte(dia.String())))
	writeFile(t, filepath.Join(sk, "diabetes_target.csv.gz"), gzipBytes(t, []byte(target.String())))
}

func TestLoadSklearnFormats(t *testing.T) {
	dir := t.TempDir()
	writeSklearnDir(t, dir)
	tests := []struct {
		name    string
		n       int
		shape   []int
		classes int
		check   func(*Dataset) string
	}{
		{"iris", 6, []int{4}, 3, func(d *Dataset) string {
			if d.X[4] != 5.1 || d.Labels[5] != 2 || d.ClassNames[1] != "versicolor" || d.FeatureNames[0] != "sepal length (cm)" {
				return fmt.Sprintf("X[4] %g labels %v names %v", d.X[4], d.Labels, d.ClassNames)
			}
			return ""
		}},
		{"wine", 10, []int{2}, 3, nil},
		{"breast-cancer", 10, []int{3}, 2, func(d *Dataset) string {
			if d.X[3*9+2] != 81 || d.ClassNames[0] != "malignant" {
				return fmt.Sprintf("X %v", d.X[27:30])
			}
			return ""
		}},
		{"boston", 10, []int{2}, 0, func(d *Dataset) string {
			if d.Targets[9] != 29 || d.FeatureNames[1] != "ZN" || d.X[2*9+1] != 9 {
				return fmt.Sprintf("targets %v names %v", d.Targets, d.FeatureNames)
			}
			return ""
		}},
		{"digits", 1797, []int{8, 8, 1}, 10, func(d *Dataset) string {
			if d.X[64+15] != 1 || d.X[64+16] != 0 || d.Labels[11] != 1 { // row 1: (1+p)%17 at p=15 is 16, scaled by 1/16
				return fmt.Sprintf("row 1 pixels %v label %d", d.X[64+14:64+17], d.Labels[11])
			}
			return ""
		}},
		{"diabetes", 442, []int{10}, 0, func(d *Dataset) string {
			if d.Targets[441] != 466 || d.FeatureNames[2] != "bmi" || math.Abs(float64(d.X[10*441+2])-64.1) > 1e-4 {
				return fmt.Sprintf("target %g bmi %g", d.Targets[441], d.X[10*441+2])
			}
			return ""
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := LoadSklearn(tc.name, dir)
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != tc.n || fmt.Sprint(d.Shape) != fmt.Sprint(tc.shape) || d.NumClasses != tc.classes {
				t.Fatalf("len %d shape %v classes %d", d.Len(), d.Shape, d.NumClasses)
			}
			if tc.check != nil {
				if msg := tc.check(d); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}

func TestLoadSklearnErrors(t *testing.T) {
	tests := []struct {
		name, file, content, want string
	}{
		{"iris", "iris.csv", "3,4,a,b,c\n1,2,3,4,0\n", "has 1 data rows, the header says 3"},
		{"iris", "iris.csv", "1,4,a,b,c\n1,2,3,4,3\n", "label 3 is not a class in [0, 3)"},
		{"iris", "iris.csv", "1,4,a,b,c\n1,2,3,0\n", "line 2 has 4 fields, want 5"},
		{"wine", "wine_data.csv", "x,y\n", "not scikit-learn's"},
		{"digits", "digits.csv.gz", "0,1\n", "want 65"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, filepath.Join(dir, SklearnDir, tc.file), []byte(tc.content))
			_, err := LoadSklearn(tc.name, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, p, tc.want)
			}
		})
	}
	if _, err := LoadSklearn("iris", t.TempDir()); err == nil || !strings.Contains(err.Error(), "fedbayes data install") {
		t.Fatalf("missing file: error %v", err)
	}
}

// TestInstalledData checks the real files when they are installed (`fedbayes data install`) in
// $FEDBAYES_DATA or the default directory; it is skipped otherwise.
func TestInstalledData(t *testing.T) {
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
		t.Skipf("no installed data in %s (run `fedbayes data install`)", dir)
	}
	iris, err := LoadSklearn("iris", dir)
	if err != nil {
		t.Fatal(err)
	}
	// First row of Fisher's iris data: 5.1, 3.5, 1.4, 0.2, setosa.
	if iris.Len() != 150 || iris.X[0] != 5.1 || iris.X[1] != 3.5 || iris.Labels[0] != 0 || fmt.Sprint(iris.ClassCounts()) != "[50 50 50]" {
		t.Fatalf("iris: len %d first %v counts %v", iris.Len(), iris.X[:4], iris.ClassCounts())
	}
	boston, err := LoadSklearn("boston", dir)
	if err != nil || boston.Len() != 506 || boston.Targets[0] != 24 || boston.FeatureNames[5] != "RM" {
		t.Fatalf("boston: %v", err)
	}
	if testing.Short() {
		return
	}
	train, test, err := LoadFashionMNIST(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 60000 || test.Len() != 10000 {
		t.Fatalf("fashion-mnist: %d/%d", train.Len(), test.Len())
	}
	for c, n := range train.ClassCounts() {
		if n != 6000 {
			t.Fatalf("fashion-mnist class %d has %d training images, want 6000", c, n)
		}
	}
}
