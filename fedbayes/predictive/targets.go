package predictive

import "fedbayes.dev/fedbayes/data"

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
