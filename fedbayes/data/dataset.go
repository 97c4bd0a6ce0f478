// Package data holds the datasets fedbayes trains and evaluates on, their loaders and their install.
//
// A Dataset keeps its examples as one flat []float32 with a per-example shape: images are
// channels-last [H, W, C], tables are [F]. Classification sets carry int32 labels, regression sets
// float32 targets.
//
// Installed out of the box (see Install and `fedbayes data install`): Fashion-MNIST, from Debian's
// dataset-fashion-mnist, and scikit-learn's bundled tables (digits, iris, wine, breast cancer,
// Boston housing, diabetes), from Debian's python3-sklearn. Loaders for the standard files a user may
// have: MNIST/EMNIST (IDX), CIFAR-10/100 (binary version), SVHN (cropped digits .mat) and CSV tables.
//
// Every loader checks what it reads: a wrong magic number, a truncated or corrupt file, or a label
// count that differs from the image count is an error naming the file and the problem, never a panic
// and never a silently shorter dataset. See docs/data.md for the normalisation conventions.
package data

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Dataset is a set of examples stored as flat float32 values with a per-example shape.
type Dataset struct {
	// Name identifies the dataset and split, for example "fashion-mnist/train".
	Name string
	// X holds Len() * prod(Shape) values, example after example, already normalised.
	X []float32
	// Shape is the shape of one example: [H, W, C] for images (channels last), [F] for tables.
	Shape []int
	// Labels are the classification labels in [0, NumClasses); nil for regression.
	Labels []int32
	// Targets are the regression targets; nil for classification.
	Targets []float32
	// NumClasses is the number of classes; 0 for regression.
	NumClasses int
	// ClassNames names the classes (len NumClasses) when known.
	ClassNames []string
	// FeatureNames names the features of a table (len prod(Shape)) when known; nil for images.
	FeatureNames []string
}

// ExampleSize is the number of float32 values in one example: the product of Shape.
func (d *Dataset) ExampleSize() int {
	n := 1
	for _, s := range d.Shape {
		n *= s
	}
	return n
}

// Len is the number of examples.
func (d *Dataset) Len() int {
	if d == nil {
		return 0
	}
	if d.Labels != nil {
		return len(d.Labels)
	}
	if d.Targets != nil {
		return len(d.Targets)
	}
	if size := d.ExampleSize(); size > 0 {
		return len(d.X) / size
	}
	return 0
}

// IsRegression reports whether the dataset has regression targets instead of class labels.
func (d *Dataset) IsRegression() bool { return d.Labels == nil && d.Targets != nil }

// Validate checks that the fields agree with each other: X has Len()*prod(Shape) values, exactly one
// of Labels and Targets is set, labels lie in [0, NumClasses) and ClassNames, when given, has
// NumClasses names.
func (d *Dataset) Validate() error {
	if d == nil {
		return fmt.Errorf("data: nil dataset")
	}
	name := d.Name
	if name == "" {
		name = "(unnamed)"
	}
	if len(d.Shape) == 0 {
		return fmt.Errorf("dataset %s: empty example shape", name)
	}
	for i, s := range d.Shape {
		if s <= 0 {
			return fmt.Errorf("dataset %s: example shape %v has non-positive dimension %d at axis %d", name, d.Shape, s, i)
		}
	}
	if (d.Labels == nil) == (d.Targets == nil) {
		return fmt.Errorf("dataset %s: exactly one of Labels (classification) and Targets (regression) must be set", name)
	}
	n := d.Len()
	if len(d.X) != n*d.ExampleSize() {
		return fmt.Errorf("dataset %s: X has %d values, want %d examples x %d values per example = %d",
			name, len(d.X), n, d.ExampleSize(), n*d.ExampleSize())
	}
	if d.FeatureNames != nil && len(d.FeatureNames) != d.ExampleSize() {
		return fmt.Errorf("dataset %s: %d feature names for %d values per example", name, len(d.FeatureNames), d.ExampleSize())
	}
	if d.Labels != nil {
		if d.NumClasses <= 0 {
			return fmt.Errorf("dataset %s: classification dataset with NumClasses %d", name, d.NumClasses)
		}
		for i, l := range d.Labels {
			if l < 0 || int(l) >= d.NumClasses {
				return fmt.Errorf("dataset %s: label %d of example %d is outside [0, %d)", name, l, i, d.NumClasses)
			}
		}
		if d.ClassNames != nil && len(d.ClassNames) != d.NumClasses {
			return fmt.Errorf("dataset %s: %d class names for %d classes", name, len(d.ClassNames), d.NumClasses)
		}
	} else if d.NumClasses != 0 {
		return fmt.Errorf("dataset %s: regression dataset with NumClasses %d (want 0)", name, d.NumClasses)
	}
	return nil
}

// Subset returns a new dataset with the examples at the given indices, in that order (an index may
// repeat). The data are copied, so the subset does not share memory with d. An index outside
// [0, Len()) panics, like a slice index (partitions produce valid indices by construction); use
// Select to get an error instead.
func (d *Dataset) Subset(indices []int) *Dataset {
	out, err := d.Select(indices)
	if err != nil {
		panic(err.Error())
	}
	return out
}

// Select is Subset with an error, instead of a panic, for an index outside [0, Len()).
func (d *Dataset) Select(indices []int) (*Dataset, error) {
	size := d.ExampleSize()
	n := d.Len()
	for i, idx := range indices {
		if idx < 0 || idx >= n {
			return nil, fmt.Errorf("data: subset of %s: index %d at position %d is outside [0, %d)", d.Name, idx, i, n)
		}
	}
	out := &Dataset{
		Name:         d.Name,
		X:            make([]float32, len(indices)*size),
		Shape:        slices.Clone(d.Shape),
		NumClasses:   d.NumClasses,
		ClassNames:   slices.Clone(d.ClassNames),
		FeatureNames: slices.Clone(d.FeatureNames),
	}
	if d.Labels != nil {
		out.Labels = make([]int32, len(indices))
	}
	if d.Targets != nil {
		out.Targets = make([]float32, len(indices))
	}
	for i, idx := range indices {
		copy(out.X[i*size:(i+1)*size], d.X[idx*size:(idx+1)*size])
		if d.Labels != nil {
			out.Labels[i] = d.Labels[idx]
		}
		if d.Targets != nil {
			out.Targets[i] = d.Targets[idx]
		}
	}
	return out, nil
}

// ClassCounts returns how many examples each class has (nil for regression).
func (d *Dataset) ClassCounts() []int {
	if d.Labels == nil {
		return nil
	}
	counts := make([]int, d.NumClasses)
	for _, l := range d.Labels {
		if l >= 0 && int(l) < d.NumClasses {
			counts[l]++
		}
	}
	return counts
}

// DirEnv is the environment variable that overrides the data directory.
const DirEnv = "FEDBAYES_DATA"

// Dir is where datasets are installed and looked up: $FEDBAYES_DATA if set, else
// os.UserCacheDir()/fedbayes/data (for example ~/.cache/fedbayes/data), else a folder under the
// temporary directory when no cache directory is known.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	if cache, err := os.UserCacheDir(); err == nil && cache != "" {
		return filepath.Join(cache, "fedbayes", "data")
	}
	return filepath.Join(os.TempDir(), "fedbayes", "data")
}
