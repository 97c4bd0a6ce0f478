package engine

import (
	"fmt"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// validateRegression checks what a regression dataset needs and refuses what it cannot do, naming
// the field; on a classification dataset it refuses the regression-only fields.
func validateRegression(c *Spec) error {
	if !data.RegressionSet(c.Dataset.Name) {
		if c.Partition.SortFeature != "" {
			return specErr("partition.sort_feature", "set, but dataset %s is a classification dataset; it sorts a regression dataset", c.Dataset.Name)
		}
		if c.Model.NoiseVar != 0 {
			return specErr("model.noise_var", "set, but dataset %s is a classification dataset; it is the regression likelihood's", c.Dataset.Name)
		}
		return nil
	}
	if m := c.Partition.Method; m != "iid" && m != "heterogeneity" {
		return specErr("partition.method", "%q splits by class; a regression dataset (%s) takes iid or heterogeneity (sorted by partition.sort_feature, Hasan (2023), Sec. 4.3)", m, c.Dataset.Name)
	}
	if c.Partition.SortFeature != "" && c.Partition.Method != "heterogeneity" {
		return specErr("partition.sort_feature", "set, but partition.method is %s; it applies to heterogeneity", c.Partition.Method)
	}
	if c.Model.Arch != models.ArchMLP {
		return specErr("model.arch", "%q; a regression dataset (%s) has tabular features: use mlp", c.Model.Arch, c.Dataset.Name)
	}
	if !(c.Model.NoiseVar > 0) {
		return specErr("model.noise_var", "%v; must be positive", c.Model.NoiseVar)
	}
	if c.Model.Compat != "" {
		return specErr("model.compat", "%q reproduces a classification paper's code; unset it for regression", c.Model.Compat)
	}
	if c.Evaluation.Fairness != "off" {
		return specErr("evaluation.fairness", "%q measures per-client accuracy; a regression dataset takes off", c.Evaluation.Fairness)
	}
	if c.Aggregation.Pretrain != nil {
		return specErr("aggregation.pretrain", "stops early on validation accuracy; not available for regression")
	}
	if c.Evaluation.NLLEpsilon != 0 {
		return specErr("evaluation.nll_epsilon", "applies to class probabilities; unset it for regression")
	}
	return nil
}

// sortedPartition splits a regression dataset: heterogeneity h sorts a fraction h of it by the
// feature partition.sort_feature (default the first) and cuts it into contiguous ranges, the rest
// is shared uniformly (partition.SortedByKey, Hasan (2023), Secs. 3.3.2 and 4.3); iid is h = 0.
func sortedPartition(ps PartitionSpec, train *data.Dataset, seed uint64) (*partition.Partition, error) {
	col := 0
	if ps.SortFeature != "" {
		col = slices.Index(train.FeatureNames, ps.SortFeature)
		if col < 0 {
			return nil, specErr("partition.sort_feature", "%q is not a feature of %s (features: %s)", ps.SortFeature, datasetName(train.Name), strings.Join(train.FeatureNames, ", "))
		}
	}
	h := ps.H
	if ps.Method == "iid" {
		h = 0
	}
	F := train.ExampleSize()
	keys := make([]float32, train.Len())
	for i := range keys {
		keys[i] = train.X[i*F+col]
	}
	p, err := partition.SortedByKey(keys, ps.Clients, h, seed)
	if err != nil {
		return nil, specErr("partition", "%s sorted by feature %d, %d clients, %d examples: %v", ps.Method, col, ps.Clients, train.Len(), err)
	}
	return p, nil
}

// datasetName is the dataset's name without the suffixes of its splits ("diabetes/train/clients").
func datasetName(name string) string {
	base, _, _ := strings.Cut(name, "/")
	return base
}

// targetBuffer returns a batch's target buffer of n values for regression, nil for classification.
func (p *problem) targetBuffer(n int) []float32 {
	if !p.regression {
		return nil
	}
	return make([]float32, n)
}

// evaluateRegression returns the mse and nll of the global model's Gaussian predictive on the test
// set (metrics.EvaluateRegression): one network's predictive from evaluation.samples passes (the
// mean of the sampled outputs, their variance plus the learned noise variance), or the strategy's
// GaussianPredictor.
func (e *evaluator) evaluateRegression(g *strategy.Global, evalSeed int64) (map[string]float64, error) {
	x := e.prob.test.X
	var mean, variance []float32
	if g.Predictor != nil {
		gp, ok := g.Predictor.(strategy.GaussianPredictor)
		if !ok {
			return nil, fmt.Errorf("evaluation: the strategy's global model predicts class probabilities, but the dataset is a regression dataset")
		}
		var err error
		if mean, variance, err = gp.PredictGaussian(x, evalSeed); err != nil {
			return nil, fmt.Errorf("evaluation on the test set: %w", err)
		}
	} else {
		if err := e.m.SetPosterior(g.Posterior); err != nil {
			return nil, fmt.Errorf("evaluation: loading the global model: %w", err)
		}
		if err := e.m.SetNoiseSeeds([]int64{evalSeed}); err != nil {
			return nil, err
		}
		cp, err := predictive.PredictModel(e.m, x, e.spec.Evaluation.Samples)
		if err != nil {
			return nil, fmt.Errorf("evaluation on the test set: %w", err)
		}
		mean, variance = cp.Mean[0], cp.Var[0]
	}
	if err := checkPredictions("the test set", "predictive mean", mean, "predictive variance", variance); err != nil {
		return nil, err
	}
	r, err := metrics.EvaluateRegression(mean, variance, e.prob.test.Targets)
	if err != nil {
		return nil, fmt.Errorf("evaluation on the test set: %w", err)
	}
	return map[string]float64{results.MSE: r.MSE, results.NLL: r.NLL}, nil
}
