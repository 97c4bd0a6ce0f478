package predictive

import (
	"fmt"

	"fedbayes.dev/fedbayes/data"
)

// The one-round runner of Hasan (2023)'s tables (Run) has moved into the engine: engine.FromPredictive
// turns a Spec into an engine spec and engine.Run runs it. What is left here is the data loading that
// the multi-round FedBE runner (NewFederation) shares with it.

// loadData loads the dataset (a table without a test split is split by seed, data.WithSeed),
// standardises regression targets on the training set, and subsamples.
func loadData(spec Spec, dir string, seed int64) (train, test *data.Dataset, err error) {
	train, test, err = data.Load(spec.Dataset, dir, data.WithSeed(uint64(seed)))
	if err != nil {
		return nil, nil, err
	}
	if train.IsRegression() != spec.IsRegression() {
		return nil, nil, fmt.Errorf("predictive: dataset %q: regression %v, but the spec treats it as regression %v", spec.Dataset, train.IsRegression(), spec.IsRegression())
	}
	if train.IsRegression() {
		if train, test, err = StandardizeTargets(train, test); err != nil {
			return nil, nil, err
		}
	}
	if spec.Subsample > 0 && spec.Subsample < train.Len() {
		if train, _, err = data.Split(train, float64(spec.Subsample)/float64(train.Len()), uint64(seed)); err != nil {
			return nil, nil, err
		}
	}
	if spec.TestSubsample > 0 && spec.TestSubsample < test.Len() {
		if test, _, err = data.Split(test, float64(spec.TestSubsample)/float64(test.Len()), uint64(seed)+1); err != nil {
			return nil, nil, err
		}
	}
	return train, test, nil
}

// StandardizeTargets standardises both sets' regression targets with the training set's mean and
// standard deviation (data.FitStandardizer), as Hasan (2023)'s experiments do: mse and nll are on
// that scale.
func StandardizeTargets(train, test *data.Dataset) (*data.Dataset, *data.Dataset, error) {
	st, err := data.FitStandardizer(train)
	if err != nil {
		return nil, nil, err
	}
	if train, err = st.ApplyTargets(train); err != nil {
		return nil, nil, err
	}
	if test, err = st.ApplyTargets(test); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}
