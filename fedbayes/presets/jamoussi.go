package presets

import (
	"fmt"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
)

// BABFLSuffix ends the name of a Jamoussi et al. (BA-BFL) preset run in BA-BFL mode (model.compat
// "ba-bfl").
const BABFLSuffix = "-babfl"

// jamoussi is the setting of Jamoussi et al. (BA-BFL), Sec. 5: 10 clients, all active, Dirichlet label
// skew, train-size weights, N(0, I) prior, a network of two convolutions and three dense layers
// (LeNet) of which the last n = 0..3 are Bayesian; FedAvg (n = 0) against AALV, EAA, GAA, RKLB and WB;
// fairness as the size-weighted and worst-10% client accuracies of the global model on test data with
// each client's label distribution. Rounds, epochs, optimizer, Dirichlet concentration and seeds are
// not stated; Ozer et al. (2022)'s 10-client budget (T = 50, E = 10, SGD 0.01 with momentum 0.9, 5
// seeds) and NIID-Bench's Dirichlet(0.5) are used.
func jamoussi(dataset string) *engine.Spec {
	s := ozer(dataset, 10, "dirichlet")
	s.Evaluation.Fairness = "test-share"
	s.Variants = []engine.Variant{variant("n0-FedAvg", "model", map[string]any{"arch": "lenet", "kind": "deterministic"},
		"aggregation", map[string]string{"rule": "FedAvg", "weighting": "size"}, "evaluation.samples", 1)}
	for n := 1; n <= 3; n++ {
		for _, rule := range []string{"AALV", "EAA", "GAA", "RKLB", "WB"} {
			s.Variants = append(s.Variants, variant(fmt.Sprintf("n%d-%s", n, rule), "model.bayesian_layers", n,
				"aggregation", map[string]string{"rule": rule, "weighting": "size"}))
		}
	}
	return s
}

func init() {
	for _, d := range ozerDatasets {
		name := "jamoussi-" + d.short
		addPaperPreset(name, "Jamoussi et al. (BA-BFL) Table 1, "+d.name+": FedAvg and AALV, EAA, GAA, RKLB, WB with the last n = 1..3 layers Bayesian, Dirichlet clients, fairness",
			func() *engine.Spec {
				s := jamoussi(d.name)
				s.Budget = "full (rounds, epochs and seeds are not stated by the paper: Ozer et al.'s 10-client budget)"
				return s
			},
			func(s *engine.Spec) *engine.Spec { return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0) })
		// BA-BFL's code: BFL-P's layers, its own aggregation (models.CompatBABFL), and the budget of its
		// scripts (BFL/scripts/hbdl_*_commands.sh with arg_parser.py's defaults): E = 50 local epochs, T = 50,
		// seeds 0-2.
		addPaperPreset(name+BABFLSuffix, name+" in BA-BFL mode (the authors' code: model.compat \"ba-bfl\", E = 50, seeds 0-2 as their scripts; BFL-P's layers, whose variances stay frozen below the clamp on purpose)",
			func() *engine.Spec {
				s := withCompat(jamoussi(d.name), models.CompatBABFL)
				s.Training.LocalEpochs, s.Seeds = 50, []int64{0, 1, 2}
				s.Budget = "full (the paper states no budget; BA-BFL's scripts: T = 50, E = 50, seeds 0-2)"
				return s
			},
			func(s *engine.Spec) *engine.Spec { return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0) })
	}
}
