package engine

import (
	"fmt"

	"fedbayes.dev/fedbayes/metrics"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// Metric names the engine records besides the standard ones of package results.
const (
	// MetricLearningRate is the clients' learning rate in the round.
	MetricLearningRate = "lr"
	// MetricDWCFallbacks counts the parameter elements where DWC's precision was not positive.
	MetricDWCFallbacks = strategy.MetricDWCFallbacks
	// MetricClientAccuracyMin and MetricClientAccuracyMax are the lowest and highest per-client
	// accuracies of the global model (Jamoussi et al. (BA-BFL), "Metrics").
	MetricClientAccuracyMin = "client_accuracy_min"
	MetricClientAccuracyMax = "client_accuracy_max"
)

// Per-client distribution metrics: for each of client_accuracy, client_nll and client_ece, the
// suffixes _min, _p10, _median, _p90 and _max name the order statistics (metrics.Distribution) of
// the scored clients' values of the global model on their fairness sets (evaluation.fairness),
// fifteen numbers whatever the number of clients. client_accuracy_min and _max are
// MetricClientAccuracyMin and MetricClientAccuracyMax.
var (
	clientMetrics    = []string{"client_accuracy", "client_nll", "client_ece"}
	clientStatistics = []string{"min", "p10", "median", "p90", "max"}
)

// evaluator evaluates a global posterior on the test set and on the clients' fairness sets.
type evaluator struct {
	m    *models.Model
	spec *Spec
	prob *problem
	// ids are the clients scored (evaluation.fairness_clients), fairX and fairY their fairness
	// examples and weights their training sizes, in the order of ids.
	ids     []int
	fairX   [][]float32
	fairY   [][]int32
	weights []float64
}

func newEvaluator(m *models.Model, s *Spec, p *problem, seed int64) *evaluator {
	e := &evaluator{m: m, spec: s, prob: p}
	if s.Evaluation.Fairness == "off" {
		return e
	}
	e.ids = p.fairnessClients(s.Evaluation.scoredClients(), seed)
	e.fairX, e.fairY = p.fairnessSets(s.Evaluation.Fairness, s.Evaluation.FairnessExamples, e.ids, seed)
	for _, k := range e.ids {
		e.weights = append(e.weights, float64(len(p.part.Clients[k])))
	}
	return e
}

// evaluate returns the metrics of global after round (accuracy, NLL, ECE, Brier of the M-sample
// predictive; the learned spread of Ozer et al. (2022), Table 4 for Gaussian posteriors; the
// fairness figures and the distribution of the scored clients' accuracy, NLL and ECE) and every
// client's accuracy when all clients are scored (nil when fairness is off or scores a sample of
// them: the distribution metrics then summarise it). The prediction noise is seeded by (seed,
// round).
func (e *evaluator) evaluate(g *strategy.Global, seed int64, round int) (map[string]float64, []float64, error) {
	evalSeed := deriveInt63(seed, tagEval, round)
	if e.prob.regression {
		out, err := e.evaluateRegression(g, evalSeed)
		if err != nil {
			return nil, nil, err
		}
		return out, nil, e.spread(g, out)
	}
	predict, err := e.predictor(g, evalSeed)
	if err != nil {
		return nil, nil, err
	}
	out, err := e.testMetrics(predict)
	if err != nil {
		return nil, nil, err
	}
	if err := e.spread(g, out); err != nil {
		return nil, nil, err
	}
	if e.fairX == nil {
		return out, nil, nil
	}
	acc, err := e.clientScores(predict, out)
	if err != nil {
		return nil, nil, err
	}
	return out, acc, nil
}

// predictor returns the class probabilities of the global g for inputs x: the strategy's own
// predictor (strategy.Global.Predictor), else the evaluation model's M-sample predictive, its noise
// seeded by evalSeed.
func (e *evaluator) predictor(g *strategy.Global, evalSeed int64) (func(x []float32) ([]float32, error), error) {
	if g.Predictor != nil {
		return func(x []float32) ([]float32, error) { return g.Predictor.Predict(x, evalSeed) }, nil
	}
	if err := e.m.SetPosterior(g.Posterior); err != nil {
		return nil, fmt.Errorf("evaluation: loading the global model: %w", err)
	}
	if err := e.m.SetNoiseSeeds([]int64{evalSeed}); err != nil {
		return nil, err
	}
	return func(x []float32) ([]float32, error) {
		pred, err := e.m.Predict(x, e.spec.Evaluation.Samples)
		if err != nil {
			return nil, err
		}
		return pred.ClientMean(0), nil
	}, nil
}

// testMetrics are the accuracy, NLL, ECE and Brier score of predict on the test set.
func (e *evaluator) testMetrics(predict func([]float32) ([]float32, error)) (map[string]float64, error) {
	probs, err := predict(e.prob.test.X)
	if err != nil {
		return nil, fmt.Errorf("evaluation on the test set: %w", err)
	}
	if err := checkPredictions("the test set", "predicted probability", probs); err != nil {
		return nil, err
	}
	res, err := classification(probs, e.prob.test.Labels, e.prob.numClasses, e.spec.Evaluation)
	if err != nil {
		return nil, fmt.Errorf("evaluation on the test set: %w", err)
	}
	return map[string]float64{
		results.Accuracy: res.Accuracy,
		results.NLL:      res.NLL,
		results.ECE:      res.ECE,
		results.Brier:    res.Brier,
	}, nil
}

// clientScores scores predict on the scored clients' fairness examples, adds the fairness figures
// and the distribution of the clients' accuracy, NLL and ECE to out, and returns every client's
// accuracy when all clients are scored (nil for a sample of them).
func (e *evaluator) clientScores(predict func([]float32) ([]float32, error), out map[string]float64) ([]float64, error) {
	// The scored clients' fairness examples in one prediction call (batched across clients by
	// the model's predict batch), then split per client. The M samples' noise runs over them
	// together, so a client's figures depend on which other clients are scored through the Monte
	// Carlo draws alone.
	var x []float32
	for _, xs := range e.fairX {
		x = append(x, xs...)
	}
	if len(x) == 0 {
		return nil, fmt.Errorf("evaluation: the scored clients have no fairness examples")
	}
	mean, err := predict(x)
	if err != nil {
		return nil, fmt.Errorf("evaluation on the clients' data: %w", err)
	}
	if err := checkPredictions("the clients' data", "predicted probability", mean); err != nil {
		return nil, err
	}
	per, err := e.perClient(mean)
	if err != nil {
		return nil, err
	}
	acc := per[0]
	f, err := metrics.FairnessFromAccuracies(acc, e.weights)
	if err != nil {
		return nil, fmt.Errorf("evaluation: fairness: %w", err)
	}
	out[results.WeightedAccuracy] = f.WeightedAverage
	out[results.WorstAccuracy] = f.Worst
	for i, name := range clientMetrics {
		d, err := metrics.DistributionOf(per[i])
		if err != nil {
			return nil, fmt.Errorf("evaluation: %s: %w", name, err)
		}
		for q, v := range []float64{d.Min, d.P10, d.Median, d.P90, d.Max} {
			out[name+"_"+clientStatistics[q]] = v
		}
	}
	if len(e.ids) < len(e.prob.part.Clients) {
		acc = nil // a sample of the clients: the rows keep its distribution, not a list without ids
	}
	return acc, nil
}

// perClient splits the probabilities mean predicted for the scored clients' fairness examples (in
// client order) into each client's accuracy, NLL and ECE (clientMetrics' order, then client order).
func (e *evaluator) perClient(mean []float32) ([][]float64, error) {
	c := e.prob.numClasses
	per := make([][]float64, len(clientMetrics))
	off := 0
	for j, ys := range e.fairY {
		k := e.ids[j]
		if len(ys) == 0 {
			return nil, fmt.Errorf("evaluation: client %d has no fairness examples", k)
		}
		r, err := classification(mean[off*c:(off+len(ys))*c], ys, c, e.spec.Evaluation)
		if err != nil {
			return nil, fmt.Errorf("evaluation on client %d's data: %w", k, err)
		}
		for i, v := range []float64{r.Accuracy, r.NLL, r.ECE} {
			per[i] = append(per[i], v)
		}
		off += len(ys)
	}
	return per, nil
}

// classification is metrics.EvaluateClassification with the spec's conventions (ECE bins, NLL epsilon).
func classification(probs []float32, labels []int32, classes int, ev EvaluationSpec) (metrics.ClassificationResult, error) {
	a, err := metrics.NewClassification(classes, ev.Bins)
	if err != nil {
		return metrics.ClassificationResult{}, err
	}
	if err := a.SetNLLEpsilon(ev.NLLEpsilon); err != nil {
		return metrics.ClassificationResult{}, err
	}
	if err := a.Add(probs, labels); err != nil {
		return metrics.ClassificationResult{}, err
	}
	return a.Result()
}

// spread records in out the learned spread (Ozer et al. (2022), Table 4) of a Gaussian global
// model; a predictive-space global (g.Predictor) has none.
func (e *evaluator) spread(g *strategy.Global, out map[string]float64) error {
	if g.Predictor != nil {
		return nil
	}
	var logVars [][]float32
	for _, q := range g.Posterior.Params {
		if q.LogVar == nil {
			continue
		}
		lv, err := tensors.CopyFlatData[float32](q.LogVar)
		if err != nil {
			return fmt.Errorf("evaluation: spread of %q: %w", q.Name, err)
		}
		logVars = append(logVars, lv)
	}
	if len(logVars) > 0 {
		v, err := metrics.SpreadNorm(logVars...)
		if err != nil {
			return fmt.Errorf("evaluation: spread: %w", err)
		}
		out[results.Spread] = v
	}
	return nil
}
