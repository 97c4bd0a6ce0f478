package presets

import (
	"encoding/json"
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
)

// BFLPSuffix ends the name of an Ozer et al. (2022) preset run in BFL-P mode (model.compat "bfl-p").
const BFLPSuffix = "-bflp"

// bflp switches an Ozer et al. (2022) spec to the behaviour of their public code, BFL-P
// (model.compat "bfl-p": models.CompatBFLP and aggregate.Options.BFLP), deterministic variants included
// (PyTorch's initialisation).
func bflp(s *engine.Spec) *engine.Spec { return withCompat(s, models.CompatBFLP) }

// withCompat sets model.compat on a spec and on every variant that replaces the model.
//
// The authors' code trains every parameter with SGD from its own initial log-variance (N(-9, 0.001^2)
// below its clamp at -8: the variances stay frozen, on purpose), so the text mode's initial
// log-variance and variance optimizer are dropped.
func withCompat(s *engine.Spec, compat models.Compat) *engine.Spec {
	s.Model.Compat = compat
	s.Model.InitLogVar, s.Training.VarianceOptimizer, s.Training.VarianceLR = 0, "", 0
	for i, v := range s.Variants {
		if m, ok := v.Set["model"]; ok {
			var mm map[string]any
			if err := json.Unmarshal(m, &mm); err != nil {
				panic(err) // constants only
			}
			mm["compat"] = string(compat)
			s.Variants[i].Set["model"] = raw(mm)
		}
	}
	return s
}

// ozerDatasets are the datasets of Ozer et al. (2022), Table 2, by preset name.
var ozerDatasets = []struct{ short, name string }{{"fmnist", "fashion-mnist"}, {"cifar10", "cifar10"}, {"svhn", "svhn"}}

// ozer returns the setting of Ozer et al. (2022), Sec. 6.1, Tables 1 and 3: C clients of which 10 are
// active per round (all 10 when C = 10), LeNet (NIID-Bench: two 5x5 convolutions with max-pooling, then
// dense layers 120 and 84) whose three dense layers are variational (local reparameterisation,
// log-variance parameterisation, N(0, 1) prior), SGD with lr 0.01, momentum 0.9 and weight decay 1e-5,
// E = 10, T = 50 for 10 clients and 500 for 100, seeds 0 to 4, IID or Dirichlet(0.5) non-IID
// (NIID-Bench, Li et al. 2022, whose default batch size 64 is used: the paper does not state one).
// The variants are the table's rows: FED and FEDAVG (deterministic LeNet, equal and size weights) and
// FVBA / FVBWA (equal / size weights) with EAA, GAA, AALV, PPA and CF.
func ozer(dataset string, clients int, part string) *engine.Spec {
	s := &engine.Spec{
		Dataset:   engine.DatasetSpec{Name: dataset},
		Partition: engine.PartitionSpec{Method: part, Clients: clients, Participation: 10 / float64(clients)},
		// The paper states no initial variance; log sigma^2 = -6 (sigma = 0.05) is TensorFlow Probability's
		// mean-field start (softplus(-3) = 0.049), models.DefaultInitLogVar. BFL-P mode uses the code's -9.
		Model: engine.ModelSpec{Arch: models.ArchLeNet, Kind: models.Bayesian, BayesianLayers: 3, Estimator: models.LocalReparam, VarParam: models.LogVarParam,
			PriorStd: 1, InitLogVar: models.DefaultInitLogVar},
		Aggregation: engine.AggregationSpec{Rule: "GAA", Weighting: "equal"},
		// SGD as the paper; its variances with Adam at its default rate (training.variance_optimizer):
		// under SGD at lr 0.01 they move by 0.002 a round and keep their initial value (docs/models.md).
		Training: engine.TrainingSpec{Rounds: 50, LocalEpochs: 10, BatchSize: 64, Optimizer: "sgd", LearningRate: 0.01,
			Momentum: 0.9, WeightDecay: 1e-5, Prior: "fixed", VarianceOptimizer: varianceOptimizer, VarianceLR: models.DefaultSpreadLearningRate},
		// BFL-P's scores.py, which computed Tables 1 and 3: ECE over 100 bins, NLL -log(p + 1e-8).
		Evaluation: engine.EvaluationSpec{Every: 1, Samples: 10, Bins: 100, NLLEpsilon: 1e-8, Fairness: "off"},
		Seeds:      []int64{0, 1, 2, 3, 4},
	}
	if clients == 100 {
		s.Training.Rounds = 500
	}
	if part == "dirichlet" {
		s.Partition.Alpha, s.Partition.MinSize = 0.5, 10
	}
	det := map[string]any{"arch": "lenet", "kind": "deterministic"}
	s.Variants = []engine.Variant{
		variant("FED", "model", det, "aggregation", map[string]string{"rule": "FedAvg", "weighting": "equal"}, "evaluation.samples", 1),
		variant("FEDAVG", "model", det, "aggregation", map[string]string{"rule": "FedAvg", "weighting": "size"}, "evaluation.samples", 1),
	}
	for _, w := range []struct{ label, weighting string }{{"FVBA", "equal"}, {"FVBWA", "size"}} {
		for _, rule := range []string{"EAA", "GAA", "AALV", "PPA", "CF"} {
			s.Variants = append(s.Variants, variant(w.label+"-"+rule,
				"aggregation", map[string]string{"rule": rule, "weighting": w.weighting}))
		}
	}
	return s
}

func init() {
	for _, d := range ozerDatasets {
		for _, clients := range []int{10, 100} {
			for _, part := range []string{"iid", "dirichlet"} {
				name := fmt.Sprintf("ozer2022-%s-c%d-%s", d.short, clients, part)
				table := map[int]string{10: "Table 1", 100: "Tables 3 and 4"}[clients]
				active := "all active"
				if clients == 100 {
					active = "10 active per round"
				}
				addPaperPreset(name, fmt.Sprintf("Ozer et al. (2022) %s, %s, %d clients (%s), %s: FED, FEDAVG, FVBA/FVBWA x EAA, GAA, AALV, PPA, CF",
					table, d.name, clients, active, part),
					func() *engine.Spec { return ozer(d.name, clients, part) },
					func(s *engine.Spec) *engine.Spec {
						if clients == 100 {
							return fvbwaRowsOnly(reduce(s, 30000, 1000, 15, 1, []int64{0, 1}, 5))
						}
						return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0)
					})
				reduced := presets[name].reduced
				addPaperPreset(name+BFLPSuffix, fmt.Sprintf("%s in BFL-P mode (the authors' code: model.compat \"bfl-p\"; its variances start at log σ² = -9, below the clamp at -8, and stay frozen there on purpose)", name),
					func() *engine.Spec { return bflp(ozer(d.name, clients, part)) },
					func(s *engine.Spec) *engine.Spec { return reduced(s) })
			}
		}
	}
}

// fvbwaRowsOnly keeps FED, FEDAVG and the FVBWA rows of an Ozer et al. (2022) spec (Table 4's size
// weighting): the 100-client budgets run those only.
func fvbwaRowsOnly(s *engine.Spec) *engine.Spec {
	var keep []engine.Variant
	for _, v := range s.Variants {
		if !strings.HasPrefix(v.Label, "FVBA-") {
			keep = append(keep, v)
		}
	}
	s.Variants = keep
	s.Budget += "; FED, FEDAVG and the FVBWA rows only (Table 4's weighting)"
	return s
}
