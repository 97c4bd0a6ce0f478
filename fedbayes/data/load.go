package data

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Option adjusts Load.
type Option func(*loadConfig)

type loadConfig struct {
	testFraction   float64
	seed           uint64
	target         string
	features       []string
	classification bool
	raw            bool
}

// DefaultTestFraction is the share of a table without a test split that Load holds out for testing.
const DefaultTestFraction = 0.2

// WithTestFraction sets the held-out test share of datasets that have no test split (tables, CSV).
func WithTestFraction(f float64) Option { return func(c *loadConfig) { c.testFraction = f } }

// WithSeed sets the seed of the train/test split of datasets that have no test split (default 0).
func WithSeed(seed uint64) Option { return func(c *loadConfig) { c.seed = seed } }

// WithTarget names the target column of a "csv:" dataset (required for those).
func WithTarget(column string) Option { return func(c *loadConfig) { c.target = column } }

// WithFeatures names the feature columns of a "csv:" dataset (default: every other column).
func WithFeatures(columns ...string) Option { return func(c *loadConfig) { c.features = columns } }

// WithClassification reads a "csv:" dataset's target as class names instead of a number.
func WithClassification() Option { return func(c *loadConfig) { c.classification = true } }

// WithoutStandardization keeps table features as stored, instead of standardising them.
func WithoutStandardization() Option { return func(c *loadConfig) { c.raw = true } }

// Names lists the dataset names Load accepts, besides "csv:PATH".
func Names() []string {
	names := []string{"fashion-mnist", "mnist"}
	for _, s := range []string{"balanced", "byclass", "bymerge", "digits", "letters", "mnist"} {
		names = append(names, "emnist-"+s)
	}
	names = append(names, "cifar10", "cifar100", "cifar100-coarse", "svhn")
	return append(names, SklearnNames()...)
}

// Load loads a dataset by name from the data directory dir (usually Dir()) and returns its training
// and test splits. Files that `fedbayes data install` put there are first checked against the
// SHA-256 digests of its manifest (VerifyDataset).
//
// Images ("fashion-mnist", "mnist", "emnist-SPLIT", "cifar10", "cifar100", "cifar100-coarse",
// "svhn", and scikit-learn's "digits") come with pixels scaled to [0, 1] (the papers do not state
// their normalisation; this is the ToTensor convention of the pipeline of Li et al. (2022) that
// Ozer et al. (2022) follow); use FitStandardizer on the training split for per-channel
// standardisation. "digits" has no test split: it is split like
// the tables.
//
// Tables ("iris", "wine", "breast-cancer", "boston", "diabetes", and "csv:PATH" with WithTarget)
// are split into train and test with a seeded, class-stratified draw (WithTestFraction, default
// 0.2; WithSeed, default 0), then every feature is standardised with the training split's mean and
// standard deviation. Regression targets stay in their units (see Standardizer.ApplyTargets).
func Load(name, dir string, opts ...Option) (train, test *Dataset, err error) {
	cfg := loadConfig{testFraction: DefaultTestFraction}
	for _, o := range opts {
		o(&cfg)
	}
	// Files installed by `fedbayes data install` are checked against their recorded SHA-256.
	if err := VerifyDataset(name, dir); err != nil {
		return nil, nil, err
	}
	switch {
	case name == "fashion-mnist":
		return LoadFashionMNIST(dir)
	case name == "mnist":
		return LoadMNIST(dir)
	case strings.HasPrefix(name, "emnist-"):
		return LoadEMNIST(dir, strings.TrimPrefix(name, "emnist-"))
	case name == "cifar10":
		return LoadCIFAR10(dir)
	case name == "cifar100" || name == "cifar100-coarse":
		return LoadCIFAR100(dir, name == "cifar100-coarse")
	case name == "svhn":
		return LoadSVHN(dir)
	case strings.HasPrefix(name, "csv:"):
		path := strings.TrimPrefix(name, "csv:")
		if cfg.target == "" {
			return nil, nil, fmt.Errorf("%s: a CSV dataset needs its target column: Load(name, dir, data.WithTarget(\"COLUMN\"))", name)
		}
		ds, err := LoadCSV(path, CSVOptions{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
			Target: cfg.target, Features: cfg.features, Classification: cfg.classification})
		if err != nil {
			return nil, nil, err
		}
		return splitTable(ds, cfg)
	}
	if _, ok := sklearnTables[name]; ok {
		ds, err := LoadSklearn(name, dir)
		if err != nil {
			return nil, nil, err
		}
		return splitTable(ds, cfg)
	}
	return nil, nil, fmt.Errorf("unknown dataset %q; known: %s, or csv:PATH", name, strings.Join(Names(), ", "))
}

// SplitBySeed reports whether Load draws the train/test split of dataset name with WithSeed's seed:
// the tables, digits and CSV files. The image datasets with a test split of their own ignore it.
func SplitBySeed(name string) bool {
	_, table := sklearnTables[name]
	return table || strings.HasPrefix(name, "csv:")
}

// RegressionSet reports whether Load gives dataset name regression targets (Dataset.IsRegression)
// rather than class labels, without loading it: scikit-learn's "boston" and "diabetes", and a
// "csv:PATH" table read without WithClassification. Specs that must know the task before any data is
// loaded (the engine's, the predictive runners') ask it, so the list of regression sets is kept here
// once, beside the loaders.
func RegressionSet(name string) bool {
	return sklearnTables[name].regression || strings.HasPrefix(name, "csv:")
}

// splitTable holds out the test split and standardises table features with training statistics.
func splitTable(ds *Dataset, cfg loadConfig) (train, test *Dataset, err error) {
	train, test, err = TrainTestSplit(ds, cfg.testFraction, cfg.seed)
	if err != nil {
		return nil, nil, err
	}
	if cfg.raw || len(ds.Shape) != 1 { // images (digits) keep their [0, 1] pixels
		return train, test, nil
	}
	s, err := FitStandardizer(train)
	if err != nil {
		return nil, nil, err
	}
	if train, err = s.Apply(train); err != nil {
		return nil, nil, err
	}
	if test, err = s.Apply(test); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
