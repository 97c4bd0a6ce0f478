package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/models"
)

// preset is a named spec at the paper's budget, what it reproduces, and how it is cut to the reduced
// budget (at most 30 minutes on 2 CPU cores) registered as NAME-reduced.
type preset struct {
	about   string
	full    func() *Spec
	reduced func(*Spec) *Spec // nil: no reduced form
}

// ReducedSuffix ends the name of a preset's reduced-budget form.
const ReducedSuffix = "-reduced"

// BFLPSuffix ends the name of an Ozer et al. (2022) preset run in BFL-P mode (model.compat "bfl-p").
const BFLPSuffix = "-bflp"

// BABFLSuffix ends the name of a Jamoussi et al. (BA-BFL) preset run in BA-BFL mode (model.compat
// "ba-bfl").
const BABFLSuffix = "-babfl"

// raw marshals a constant value for a sweep or variant.
func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // constants only
	}
	return b
}

// raws turns values into a sweep list.
func raws(values ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = raw(v)
	}
	return out
}

// variant builds a Variant from alternating JSON paths and values.
func variant(label string, pathValues ...any) Variant {
	v := Variant{Label: label, Set: map[string]json.RawMessage{}}
	for i := 0; i+1 < len(pathValues); i += 2 {
		v.Set[pathValues[i].(string)] = raw(pathValues[i+1])
	}
	return v
}

// reduce cuts a spec to a reduced budget: train/test examples kept, rounds, local epochs and seeds;
// evaluation every `every` rounds (after the last round only when every <= 0). The Budget sentence
// states the cut and the paper's budget.
func reduce(s *Spec, train, test, rounds, epochs int, seeds []int64, every int) *Spec {
	return cutBudget(s, "reduced", ReducedSuffix, train, test, rounds, epochs, seeds, every, func(n int) string { return fmt.Sprint(n) })
}

// cutBudget is reduce and medium: it names the cut spec NAME+suffix, keeps train/test examples (0:
// all; count formats the number), rounds, local epochs, seeds (copied) and evaluation every `every`
// rounds (after the last round only when every <= 0 or beyond the last), halves a schedule's silent
// period if it is longer than half the rounds, and states the cut beside the paper's budget.
func cutBudget(s *Spec, label, suffix string, train, test, rounds, epochs int, seeds []int64, every int, count func(int) string) *Spec {
	full := s.WithDefaults()
	c := s.Clone()
	c.Name += suffix
	c.Dataset.Subsample, c.Dataset.TestSubsample = train, test
	c.Training.Rounds, c.Training.LocalEpochs = rounds, epochs
	c.Seeds = append([]int64(nil), seeds...)
	if every <= 0 || every > rounds {
		every = rounds
	}
	c.Evaluation.Every = every
	if c.Training.Schedule != nil && c.Training.Schedule.SilentRounds > rounds/2 {
		sc := *c.Training.Schedule
		sc.SilentRounds = rounds / 2
		c.Training.Schedule = &sc
	}
	examples := func(n int) string {
		if n <= 0 {
			return "all"
		}
		return count(n)
	}
	c.Budget = fmt.Sprintf("%s: %s training / %s test examples, T=%d rounds, E=%d local epochs, %d seeds "+
		"(paper budget: all examples, T=%d, E=%d, %d seeds)", label, examples(train), examples(test), rounds, epochs, len(seeds),
		full.Training.Rounds, full.Training.LocalEpochs, len(full.Seeds))
	return c
}

// dwcCut finishes the reduced or medium cut r of a Fischer et al. (2024) Table 4 preset s: the
// Flipout MLP, the IID and 2-class partitions only, and server pre-training of at most pretrain epochs.
func dwcCut(r, s *Spec, pretrain int) *Spec {
	r = mlpFlipout(r)
	r.Sweep = map[string][]json.RawMessage{"partition": s.Sweep["partition"][:2]}
	for _, v := range r.Variants {
		if a, ok := v.Set["aggregation"]; ok && strings.Contains(string(a), "pretrain") {
			v.Set["aggregation"] = []byte(strings.Replace(string(a), `"epochs":100`, fmt.Sprintf(`"epochs":%d`, pretrain), 1))
		}
	}
	r.Budget += fmt.Sprintf("; MLP (100 hidden, Flipout) instead of ResNet-20; IID and 2-class only; pre-training at most %d epochs", pretrain)
	return r
}

// bflp switches an Ozer et al. (2022) spec to the behaviour of their public code, BFL-P
// (model.compat "bfl-p": models.CompatBFLP and aggregate.Options.BFLP), deterministic variants included
// (PyTorch's initialisation).
func bflp(s *Spec) *Spec { return withCompat(s, models.CompatBFLP) }

// withCompat sets model.compat on a spec and on every variant that replaces the model.
//
// The authors' code trains every parameter with SGD from its own initial log-variance (N(-9, 0.001^2)
// below its clamp at -8: the variances stay frozen, on purpose), so the text mode's initial
// log-variance and variance optimizer are dropped.
func withCompat(s *Spec, compat models.Compat) *Spec {
	s.Model.Compat = string(compat)
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

// varianceOptimizer is the optimizer of the variance parameters in the paper presets' text mode
// (training.variance_optimizer): Adam, under which the variances of the papers' nets move within the
// medium budget, while SGD at the papers' rates leaves them at their initial value (docs/models.md).
const varianceOptimizer = string(models.Adam)

// tfpInitLogVar is log sigma^2 of TensorFlow Probability's mean-field start, sigma = softplus(-3)
// (tfp.layers.default_mean_field_normal_fn), for the presets of papers that use TFP's layers.
var tfpInitLogVar = 2 * math.Log(math.Log1p(math.Exp(-3)))

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
func ozer(dataset string, clients int, part string) *Spec {
	s := &Spec{
		Dataset:   DatasetSpec{Name: dataset},
		Partition: PartitionSpec{Method: part, Clients: clients, Participation: 10 / float64(clients)},
		// The paper states no initial variance; log sigma^2 = -6 (sigma = 0.05) is TensorFlow Probability's
		// mean-field start (softplus(-3) = 0.049), models.DefaultInitLogVar. BFL-P mode uses the code's -9.
		Model: ModelSpec{Arch: "lenet", Kind: "bayesian", BayesianLayers: 3, Estimator: "local", VarParam: "logvar",
			PriorStd: 1, InitLogVar: models.DefaultInitLogVar},
		Aggregation: AggregationSpec{Rule: "GAA", Weighting: "equal"},
		// SGD as the paper; its variances with Adam at its default rate (training.variance_optimizer):
		// under SGD at lr 0.01 they move by 0.002 a round and keep their initial value (docs/models.md).
		Training: TrainingSpec{Rounds: 50, LocalEpochs: 10, BatchSize: 64, Optimizer: "sgd", LearningRate: 0.01,
			Momentum: 0.9, WeightDecay: 1e-5, Prior: "fixed", VarianceOptimizer: varianceOptimizer, VarianceLR: models.DefaultSpreadLearningRate},
		// BFL-P's scores.py, which computed Tables 1 and 3: ECE over 100 bins, NLL -log(p + 1e-8).
		Evaluation: EvaluationSpec{Every: 1, Samples: 10, Bins: 100, NLLEpsilon: 1e-8, Fairness: "off"},
		Seeds:      []int64{0, 1, 2, 3, 4},
	}
	if clients == 100 {
		s.Training.Rounds = 500
	}
	if part == "dirichlet" {
		s.Partition.Alpha, s.Partition.MinSize = 0.5, 10
	}
	det := map[string]any{"arch": "lenet", "kind": "deterministic"}
	s.Variants = []Variant{
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

// fischer returns the setting of Fischer et al. (2024), Sec. 3: 10 clients, all active, every layer
// variational with Flipout (ResNet-20; N(0, 10^2) prior), batch 32, lr 0.001 decaying by 4% a round
// after 50 silent rounds, 3 runs, local epochs E (T = 400 for E = 1, 200 for E = 5). The optimizer
// beyond "a variant of SGD" is not stated; plain SGD is used. The variants are Table 2/3's rows:
// deterministic and MC-dropout (rate 0.2) nets with NWA (FedAvg) and train-size weights, and the
// Flipout net with NWA, WS, LP and WC under train-size, maximum-discrepancy and distance weighting,
// and Conflation (unweighted). The sweep covers the four partitions: IID, 2-class shards,
// Dirichlet 0.5 and 5.0.
func fischer(dataset string, epochs int) *Spec {
	rounds := 400
	if epochs == 5 {
		rounds = 200
	}
	s := &Spec{
		Dataset:   DatasetSpec{Name: dataset},
		Partition: PartitionSpec{Clients: 10, Participation: 1},
		// TensorFlow Probability's Flipout layers, which the paper uses: sigma = softplus(rho) with rho
		// starting near -3 (tfp.layers.default_mean_field_normal_fn: N(-3, 0.1); here its mean, a constant:
		// log sigma^2 = 2 log softplus(-3) = tfpInitLogVar).
		Model:       ModelSpec{Arch: "resnet20", Kind: "bayesian", Estimator: "flipout", PriorStd: 10, VarParam: "softplus", InitLogVar: tfpInitLogVar},
		Aggregation: AggregationSpec{Rule: "WS", Weighting: "size"},
		// "A variant of SGD" (Sec. 3.3): plain SGD; the variances with Adam (training.variance_optimizer),
		// under which they move (docs/models.md).
		Training: TrainingSpec{Rounds: rounds, LocalEpochs: epochs, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.001,
			Schedule: &ScheduleSpec{Kind: "exponential", SilentRounds: 50, Rate: 0.04}, Prior: "fixed",
			VarianceOptimizer: varianceOptimizer, VarianceLR: models.DefaultSpreadLearningRate},
		Evaluation: EvaluationSpec{Every: 10, Samples: 10, Bins: 15, Fairness: "off"},
		Seeds:      []int64{0, 1, 2},
		// Raw JSON keeps the members' order, which names the settings (iid, shards-2, dirichlet-0.5, ...).
		Sweep: map[string][]json.RawMessage{"partition": {
			json.RawMessage(`{"method":"iid"}`),
			json.RawMessage(`{"method":"shards","shards_per_client":2}`),
			json.RawMessage(`{"method":"dirichlet","alpha":0.5}`),
			json.RawMessage(`{"method":"dirichlet","alpha":5}`)}},
	}
	s.Variants = fischerVariants("resnet20")
	return s
}

// fischerVariants are the rows of Fischer et al. (2024), Tables 2 and 3, for an architecture.
func fischerVariants(arch string) []Variant {
	fedavg := map[string]string{"rule": "FedAvg", "weighting": "size"}
	vs := []Variant{
		variant("DET-NWA", "model", map[string]any{"arch": arch, "kind": "deterministic"}, "aggregation", fedavg, "evaluation.samples", 1),
		variant("MCD-NWA", "model", map[string]any{"arch": arch, "kind": "mcdropout", "dropout_rate": 0.2}, "aggregation", fedavg),
	}
	for _, rule := range []string{"NWA", "WS", "LP", "WC"} {
		for _, w := range []struct{ label, weighting string }{{"TrainSize", "size"}, {"MaxDisc", "maxdisc"}, {"Distance", "fixedpoint"}} {
			vs = append(vs, variant(rule+"-"+w.label, "aggregation", map[string]string{"rule": rule, "weighting": w.weighting}))
		}
	}
	return append(vs, variant("Conflation", "aggregation", map[string]string{"rule": "Conflation", "weighting": "equal"}))
}

// fischerPrior is Fischer et al. (2024), Table 5: the clients' prior is the previous round's global
// posterior, E = 1, IID, 2 runs, the five rules with train-size weights.
func fischerPrior(dataset string) *Spec {
	s := fischer(dataset, 1)
	s.Sweep = nil
	s.Partition.Method = "iid"
	s.Training.Prior = "previous-global"
	s.Seeds = []int64{0, 1}
	s.Variants = nil
	for _, rule := range []string{"NWA", "WS", "LP", "WC"} {
		s.Variants = append(s.Variants, variant(rule+"-TrainSize", "aggregation", map[string]string{"rule": rule, "weighting": "size"}))
	}
	s.Variants = append(s.Variants, variant("Conflation", "aggregation", map[string]string{"rule": "Conflation", "weighting": "equal"}))
	return s
}

// fischerDWC is Fischer et al. (2024), Table 4: one federation round of 400 local epochs; DWC without
// and with the server's pre-training on 10% of the training set (at most 100 epochs, patience 10), and
// WS with pre-training; the four partitions; 3 runs.
func fischerDWC(dataset string) *Spec {
	s := fischer(dataset, 1)
	s.Training.Rounds, s.Training.LocalEpochs, s.Training.Schedule = 1, 400, nil
	s.Evaluation.Every = 1
	s.Dataset.ServerFraction = 0.1
	pre := &PretrainSpec{Epochs: 100, Patience: 10}
	s.Variants = []Variant{
		variant("DWC", "aggregation", map[string]any{"rule": "DWC", "weighting": "equal"}),
		variant("DWC-pretrain", "aggregation", map[string]any{"rule": "DWC", "weighting": "equal", "pretrain": pre}),
		variant("WS-pretrain", "aggregation", map[string]any{"rule": "WS", "weighting": "equal", "pretrain": pre}),
	}
	return s
}

// jamoussi is the setting of Jamoussi et al. (BA-BFL), Sec. 5: 10 clients, all active, Dirichlet label
// skew, train-size weights, N(0, I) prior, a network of two convolutions and three dense layers
// (LeNet) of which the last n = 0..3 are Bayesian; FedAvg (n = 0) against AALV, EAA, GAA, RKLB and WB;
// fairness as the size-weighted and worst-10% client accuracies of the global model on test data with
// each client's label distribution. Rounds, epochs, optimizer, Dirichlet concentration and seeds are
// not stated; Ozer et al. (2022)'s 10-client budget (T = 50, E = 10, SGD 0.01 with momentum 0.9, 5
// seeds) and NIID-Bench's Dirichlet(0.5) are used.
func jamoussi(dataset string) *Spec {
	s := ozer(dataset, 10, "dirichlet")
	s.Evaluation.Fairness = "test-share"
	s.Variants = []Variant{variant("n0-FedAvg", "model", map[string]any{"arch": "lenet", "kind": "deterministic"},
		"aggregation", map[string]string{"rule": "FedAvg", "weighting": "size"}, "evaluation.samples", 1)}
	for n := 1; n <= 3; n++ {
		for _, rule := range []string{"AALV", "EAA", "GAA", "RKLB", "WB"} {
			s.Variants = append(s.Variants, variant(fmt.Sprintf("n%d-%s", n, rule), "model.bayesian_layers", n,
				"aggregation", map[string]string{"rule": rule, "weighting": "size"}))
		}
	}
	return s
}

// presets maps preset names to presets; init fills in the paper presets.
var presets = map[string]preset{
	"quick-digits": {
		about: "a check of the install (under a second on 2 cores): scikit-learn digits, 5 clients, Bayesian MLP, GAA, 3 rounds",
		full: func() *Spec {
			return &Spec{
				Name:        "quick-digits",
				Dataset:     DatasetSpec{Name: "digits"},
				Partition:   PartitionSpec{Method: "iid", Clients: 5},
				Model:       ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{32}},
				Aggregation: AggregationSpec{Rule: "GAA", Weighting: "size"},
				Training:    TrainingSpec{Rounds: 3, LocalEpochs: 2, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9},
				Evaluation:  EvaluationSpec{Samples: 5},
				Seeds:       []int64{0},
			}
		},
	},
}

// addPaperPreset registers a paper preset: full builds the spec at the paper's budget, named name and
// with the budget "full" unless full states its own.
func addPaperPreset(name, about string, full func() *Spec, reduced func(*Spec) *Spec) {
	presets[name] = preset{about: about, reduced: reduced, full: func() *Spec {
		s := full()
		s.Name = name
		if s.Budget == "" {
			s.Budget = "full"
		}
		return s
	}}
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
					func() *Spec { return ozer(d.name, clients, part) },
					func(s *Spec) *Spec {
						if clients == 100 {
							return fvbwaRowsOnly(reduce(s, 30000, 1000, 15, 1, []int64{0, 1}, 5))
						}
						return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0)
					})
				reduced := presets[name].reduced
				addPaperPreset(name+BFLPSuffix, fmt.Sprintf("%s in BFL-P mode (the authors' code: model.compat \"bfl-p\"; its variances start at log σ² = -9, below the clamp at -8, and stay frozen there on purpose)", name),
					func() *Spec { return bflp(ozer(d.name, clients, part)) },
					func(s *Spec) *Spec { return reduced(s) })
			}
		}
	}
	for _, d := range []struct{ short, name string }{{"fmnist", "fashion-mnist"}, {"cifar10", "cifar10"}} {
		for _, e := range []int{1, 5} {
			name := fmt.Sprintf("fischer2024-%s-e%d", d.short, e)
			addPaperPreset(name, fmt.Sprintf("Fischer et al. (2024) Table %d, %s, E=%d: deterministic, MC-dropout and Flipout ResNet-20; NWA, WS, LP, WC x 3 weightings, Conflation; IID, 2-class, Dirichlet 0.5 and 5.0",
				map[int]int{1: 2, 5: 3}[e], d.name, e),
				func() *Spec { return fischer(d.name, e) }, fischerReduced(e))
		}
		prior := "fischer2024-" + d.short + "-prior"
		addPaperPreset(prior, "Fischer et al. (2024) Table 5, "+d.name+": the prior is the previous global posterior every round, E=1, IID",
			func() *Spec { return fischerPrior(d.name) }, fischerReduced(1))
		dwc := "fischer2024-" + d.short + "-dwc"
		addPaperPreset(dwc, "Fischer et al. (2024) Table 4, "+d.name+": DWC without and with server pre-training, WS with pre-training; one round of 400 local epochs",
			func() *Spec { return fischerDWC(d.name) },
			func(s *Spec) *Spec { return dwcCut(reduce(s, 6000, 1000, 1, 20, []int64{0, 1}, 0), s, 20) })
	}
	for _, d := range ozerDatasets {
		name := "jamoussi-" + d.short
		addPaperPreset(name, "Jamoussi et al. (BA-BFL) Table 1, "+d.name+": FedAvg and AALV, EAA, GAA, RKLB, WB with the last n = 1..3 layers Bayesian, Dirichlet clients, fairness",
			func() *Spec {
				s := jamoussi(d.name)
				s.Budget = "full (rounds, epochs and seeds are not stated by the paper: Ozer et al.'s 10-client budget)"
				return s
			},
			func(s *Spec) *Spec { return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0) })
		// BA-BFL's code: BFL-P's layers, its own aggregation (models.CompatBABFL), and the budget of its
		// scripts (BFL/scripts/hbdl_*_commands.sh with arg_parser.py's defaults): E = 50 local epochs, T = 50,
		// seeds 0-2.
		addPaperPreset(name+BABFLSuffix, name+" in BA-BFL mode (the authors' code: model.compat \"ba-bfl\", E = 50, seeds 0-2 as their scripts; BFL-P's layers, whose variances stay frozen below the clamp on purpose)",
			func() *Spec {
				s := withCompat(jamoussi(d.name), models.CompatBABFL)
				s.Training.LocalEpochs, s.Seeds = 50, []int64{0, 1, 2}
				s.Budget = "full (the paper states no budget; BA-BFL's scripts: T = 50, E = 50, seeds 0-2)"
				return s
			},
			func(s *Spec) *Spec { return reduce(s, 4000, 1000, 5, 1, []int64{0, 1}, 0) })
	}
}

// fvbwaRowsOnly keeps FED, FEDAVG and the FVBWA rows of an Ozer et al. (2022) spec (Table 4's size
// weighting): the 100-client budgets run those only.
func fvbwaRowsOnly(s *Spec) *Spec {
	var keep []Variant
	for _, v := range s.Variants {
		if !strings.HasPrefix(v.Label, "FVBA-") {
			keep = append(keep, v)
		}
	}
	s.Variants = keep
	s.Budget += "; FED, FEDAVG and the FVBWA rows only (Table 4's weighting)"
	return s
}

// mlpFlipout swaps ResNet-20 for a Flipout MLP with one hidden layer of 100 units (and the variants'
// models with it) for reduced budgets on 2 cores.
func mlpFlipout(s *Spec) *Spec {
	s.Model = ModelSpec{Arch: "mlp", Kind: "bayesian", Hidden: []int{100}, Estimator: "flipout", PriorStd: s.Model.PriorStd,
		VarParam: s.Model.VarParam, InitLogVar: s.Model.InitLogVar}
	for i, v := range s.Variants {
		if m, ok := v.Set["model"]; ok {
			s.Variants[i].Set["model"] = []byte(strings.Replace(string(m), `"arch":"resnet20"`, `"arch":"mlp"`, 1))
		}
	}
	return s
}

// fischerReduced is the reduced budget of the Fischer et al. (2024) presets: a Flipout MLP on 3,000
// training and 1,000 test examples, IID and 2-class partitions, T=10 (E=1) or T=4 (E=5), 2 seeds.
func fischerReduced(epochs int) func(*Spec) *Spec {
	return func(s *Spec) *Spec {
		rounds := 10
		if epochs == 5 {
			rounds = 4
		}
		return fischerCut(reduce(s, 3000, 1000, rounds, epochs, []int64{0, 1}, 0), s, 0.01)
	}
}

// fischerCut finishes the reduced or medium cut r of a Fischer et al. (2024) Table 2-3 preset s: the
// Flipout MLP at learning rate lr, the IID and 2-class partitions only.
func fischerCut(r, s *Spec, lr float64) *Spec {
	r = mlpFlipout(r)
	if p, ok := s.Sweep["partition"]; ok {
		r.Sweep = map[string][]json.RawMessage{"partition": p[:2]}
		r.Budget += "; IID and 2-class only"
	}
	paper := ""
	if lr == s.Training.LearningRate {
		paper = " (the paper's)"
	}
	r.Budget += fmt.Sprintf("; MLP (100 hidden, Flipout) instead of ResNet-20; lr %g%s decaying after round T/2", lr, paper)
	r.Training.LearningRate = lr
	return r
}

// Preset returns a copy of the named preset spec: a paper preset at the paper's budget, or with the
// suffix "-reduced" at the reduced budget (under 30 minutes on 2 CPU cores, stated in Spec.Budget).
// PresetNames lists the names.
func Preset(name string) (*Spec, error) {
	if p, ok := presets[name]; ok {
		return p.full(), nil
	}
	if base, ok := strings.CutSuffix(name, ReducedSuffix); ok {
		if p, ok := presets[base]; ok && p.reduced != nil {
			return p.reduced(p.full()), nil
		}
	}
	return nil, fmt.Errorf("engine: unknown preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
}

// PresetNames lists the preset names, sorted: each paper preset and its "-reduced" form.
func PresetNames() []string {
	names := make([]string, 0, 2*len(presets))
	for n, p := range presets {
		names = append(names, n)
		if p.reduced != nil {
			names = append(names, n+ReducedSuffix)
		}
	}
	sort.Strings(names)
	return names
}

// PresetAbout says what a preset reproduces, and for a reduced preset how it was reduced ("" for
// an unknown name).
func PresetAbout(name string) string {
	if p, ok := presets[name]; ok {
		return p.about
	}
	if base, ok := strings.CutSuffix(name, ReducedSuffix); ok {
		if p, ok := presets[base]; ok && p.reduced != nil {
			return p.about + " (" + p.reduced(p.full()).Budget + ")"
		}
	}
	return ""
}

// Fast returns a copy of s reduced for a quick look (fedbayes run --fast): at most 3 rounds of one local
// epoch, at most 3,000 training and 1,000 test examples, the first seed only, fairness on at most 50
// examples per client, and pre-training of at most 5 epochs. The name gets a "-fast" suffix and the
// budget says so.
func Fast(s *Spec) *Spec {
	c := s.Clone()
	c.Name = strings.TrimSuffix(c.WithDefaults().Name, "-fast") + "-fast"
	if c.Training.Rounds == 0 || c.Training.Rounds > 3 {
		c.Training.Rounds = 3
	}
	c.Training.LocalEpochs = 1
	if c.Dataset.Subsample == 0 || c.Dataset.Subsample > 3000 {
		c.Dataset.Subsample = 3000
	}
	if c.Dataset.TestSubsample == 0 || c.Dataset.TestSubsample > 1000 {
		c.Dataset.TestSubsample = 1000
	}
	if len(c.Seeds) > 1 {
		c.Seeds = c.Seeds[:1]
	}
	if c.Evaluation.FairnessExamples == 0 || c.Evaluation.FairnessExamples > 50 {
		c.Evaluation.FairnessExamples = 50
	}
	if c.Evaluation.Every > c.Training.Rounds {
		c.Evaluation.Every = c.Training.Rounds
	}
	if p := c.Aggregation.Pretrain; p != nil && (p.Epochs == 0 || p.Epochs > 5) {
		p.Epochs = 5
	}
	c.Budget = fmt.Sprintf("fast: at most 3 rounds of 1 epoch, 3,000 training / 1,000 test examples, 1 seed (was: %s)", s.Budget)
	return c
}
