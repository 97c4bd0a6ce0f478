package presets

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"

	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// HasanMethods are the variant labels of Hasan (2023)'s classification presets, in the order of the
// thesis's Table 3.1 (its FedProx and AdaptFL are not implemented). They are the thesis's method names
// and name the run folders (NAME-LABEL-H-seedS); each variant runs the strategy Method(label):
// "oneshot" runs oneshotfl and "fedbe" runs fedbe-gaussian (MethodAliases), the others their own.
var HasanMethods = []string{"fedavg", "fedpa", "ep-mcmc", "fedbe", "oneshot", "fedkt", strategy.Mixture,
	strategy.BCM, strategy.DBCM, strategy.BetaPredBayes, strategy.DBetaPredBayes}

// HasanRegressionMethods are the variant labels of Hasan (2023)'s regression presets (Table 3.2):
// FedKT votes on labels and the students distil class probabilities, so they are for classification.
var HasanRegressionMethods = []string{"fedavg", "fedpa", "ep-mcmc", strategy.Mixture, strategy.BCM, strategy.BetaPredBayes}

// hasanOptions are the server options of Hasan (2023)'s one-round presets, beside the engine spec's
// own fields: the clients' sampler of the sampling methods, the distillation of OneshotFL, D-BCM and
// D-beta-PredBayes, and the options of FedBE, FedPA and FedKT (zero fields take their defaults).
type hasanOptions struct {
	sampler predictive.SamplerConfig
	distill predictive.DistillConfig
	fedbe   predictive.FedBEConfig
	fedpa   predictive.FedPAConfig
	fedkt   predictive.FedKTConfig
}

// hasan completes s, one of Hasan (2023)'s one-round comparisons (Tables 3.1, 3.2 and 4.2; Sec. 3.3),
// from what the preset gives (dataset, its subsets, the partition's sort feature, hidden widths,
// the local training of the optimising methods, seeds, budget) and the server options o: 5 clients with
// heterogeneity h swept over 0, 0.3, 0.6 and 0.9 (1 for regression, the clients sorted by
// partition.sort_feature), 20% of the training set kept for the server, a table without a test split
// split by each seed, a deterministic MLP (100 hidden units unless given; a learned noise variance
// starting at 0.5 for regression), one round, and one variant per method (HasanMethods or
// HasanRegressionMethods):
//
//   - fedavg, oneshot (oneshotfl), fedbe (fedbe-gaussian) and fedkt train the clients with the local
//     optimiser (training.*; the defaults of predictive.LocalConfig);
//   - fedpa, ep-mcmc, bcm, mixture, beta-predbayes, d-bcm and d-beta-predbayes sample them
//     (training.sampler);
//   - ep-mcmc draws 10 networks (evaluation.samples); the students of d-bcm and d-beta-predbayes start
//     from a fresh initialisation (aggregation.options.student_start "previous"), as the thesis's;
//     FedKT trains its own teachers with the spec's local training and distillation unless o.fedkt
//     sets them.
func hasan(s *engine.Spec, o hasanOptions) *engine.Spec {
	regression := data.RegressionSet(s.Dataset.Name)
	s.Dataset.SplitPerSeed, s.Dataset.ServerFraction = true, 0.2
	s.Partition.Method, s.Partition.Clients = "heterogeneity", 5
	s.Model.Arch, s.Model.Kind = models.ArchMLP, models.Deterministic
	if s.Model.Hidden == nil {
		s.Model.Hidden = []int{100}
	}
	methods, hs := HasanMethods, raws(0.0, 0.3, 0.6, 0.9)
	if regression {
		s.Model.NoiseVar = 0.5
		methods, hs = HasanRegressionMethods, raws(1.0)
	}
	s.Sweep = map[string][]json.RawMessage{"partition.h": hs}
	s.Aggregation = engine.AggregationSpec{Rule: "FedAvg", Weighting: "size"}
	local := predictive.LocalConfig{Optimizer: s.Training.Optimizer, LearningRate: s.Training.LearningRate,
		Momentum: s.Training.Momentum, Epochs: s.Training.LocalEpochs, BatchSize: s.Training.BatchSize}.WithDefaults()
	s.Training = engine.TrainingSpec{Rounds: 1, LocalEpochs: local.Epochs, BatchSize: local.BatchSize, Optimizer: local.Optimizer,
		LearningRate: local.LearningRate, Momentum: local.Momentum}
	s.Evaluation = engine.EvaluationSpec{Fairness: "off"}
	sampler := o.sampler.WithDefaults()
	distill := o.distill.WithDefaults()
	fedbe := o.fedbe.WithDefaults()
	fedpa := o.fedpa.WithDefaults()
	fedkt := o.fedkt
	if fedkt.Local == (predictive.LocalConfig{}) {
		fedkt.Local = local
	}
	if fedkt.Distill == (predictive.DistillConfig{}) {
		fedkt.Distill = distill
	}
	fedkt = fedkt.WithDefaults()
	fedkt.Local = fedkt.Local.WithDefaults()
	for _, m := range methods {
		var v engine.Variant
		switch m {
		case "fedavg":
			v = variant(m, "aggregation.rule", "FedAvg")
		case "fedbe":
			v = variant(m, "aggregation.rule", strategy.FedBEGaussian, "aggregation.options", strategy.FedBEOptions{Samples: fedbe.Samples, Alpha: fedbe.Alpha, Distill: fedbe.Distill})
		case "oneshot":
			v = variant(m, "aggregation.rule", strategy.OneshotFLName, "aggregation.options", strategy.OneshotFLOptions{Distill: distill})
		case "fedkt":
			// FedKT trains its own teachers (aggregation.options.local): the engine's one local
			// epoch is not used.
			v = variant(m, "aggregation.rule", "fedkt", "training.local_epochs", 1, "aggregation.options", fedkt)
		case "fedpa":
			v = variant(m, "aggregation.rule", "fedpa", "training.sampler", sampler,
				"aggregation.options", strategy.FedPAOptions{Rho: fedpa.Rho, ServerLR: fedpa.ServerLR})
		case "ep-mcmc":
			v = variant(m, "aggregation.rule", "ep-mcmc", "training.sampler", sampler, "evaluation.samples", 10)
		case strategy.BCM, strategy.Mixture:
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler)
		case strategy.BetaPredBayes:
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler, "aggregation.options", strategy.BetaOptions{})
		case strategy.DBCM, strategy.DBetaPredBayes:
			// The student starts from a fresh initialisation, as Hasan (2023), Algs. 1-2.
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler,
				"aggregation.options", strategy.DistilledOptions{Distill: distill, StudentStart: strategy.StudentFromPrevious})
		}
		s.Variants = append(s.Variants, v)
	}
	return s
}

// hasanPresets are Hasan (2023)'s one-round presets: NAME-fast finishes in minutes on two cores (small
// subsets, short training), NAME-full follows Hasan (2023), Sec. 3.3 and Tables B.2-B.4 (hours on the
// pure-Go backend).
var hasanPresets = map[string]func() *engine.Spec{
	"fmnist-fast": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "reduced: 3,000 training / 2,000 test examples, 3 seeds, 10 sampler epochs x 3 cycles x 2 samples, 10 local and distillation epochs, FedKT 2 students x 3 teachers per client (thesis: all examples, 5-10 seeds, 25 epochs x 5 cycles x 2 samples, 100 distillation epochs; Li et al.: 2 x 5)",
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist", Subsample: 3000, TestSubsample: 2000},
			Training: engine.TrainingSpec{LocalEpochs: 10, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2, 3}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 10, Cycles: 3, SamplesPerCycle: 2, BatchSize: 32, Friction: predictive.ZhangFriction},
				distill: predictive.DistillConfig{Epochs: 10, BatchSize: 50, LearningRate: 3e-3},
				fedbe:   predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 10, BatchSize: 50, SWACycles: 2}},
				fedpa:   predictive.FedPAConfig{ServerLR: 0.5},
				fedkt:   predictive.FedKTConfig{Students: 2, Teachers: 3}})
	},
	"fmnist-medium": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "medium: 12,000 training / all 10,000 test examples, 10 seeds (the thesis's accuracy tables), 15 sampler epochs x 4 cycles x 2 samples, 15 local and 20 distillation epochs, FedKT 2 students x 3 teachers per client (thesis: all examples, 5-10 seeds, 25 epochs x 5 cycles x 2 samples, 100 distillation epochs; Li et al.: 2 x 5)",
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist", Subsample: 12000},
			Training: engine.TrainingSpec{LocalEpochs: 15, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 15, Cycles: 4, SamplesPerCycle: 2, BatchSize: 32, Friction: predictive.ZhangFriction},
				distill: predictive.DistillConfig{Epochs: 20, BatchSize: 50, LearningRate: 3e-3},
				fedbe:   predictive.FedBEConfig{Samples: 10, Distill: predictive.DistillConfig{Epochs: 20, BatchSize: 50, SWACycles: 2}},
				fedpa:   predictive.FedPAConfig{ServerLR: 0.5},
				fedkt:   predictive.FedKTConfig{Students: 2, Teachers: 3}})
	},
	"fmnist-full": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "full (Hasan (2023), Sec. 3.3 and Tables B.2-B.4; FedKT 2 students x 5 teachers, Li et al.'s script)",
			Dataset:  engine.DatasetSpec{Name: "fashion-mnist"},
			Training: engine.TrainingSpec{LocalEpochs: 25},
			Seeds:    []int64{1, 2, 3, 4, 5}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 25, Cycles: 5, SamplesPerCycle: 2, Friction: predictive.ZhangFriction},
				distill: predictive.DistillConfig{Epochs: 50},
				fedbe:   predictive.FedBEConfig{Distill: predictive.DistillConfig{Epochs: 50}},
				fedpa:   predictive.FedPAConfig{ServerLR: 0.5},
				fedkt:   predictive.FedKTConfig{Students: 2, Teachers: 5}})
	},
	"digits-fast": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "reduced: scikit-learn digits, 2 seeds, 32 hidden units, 20 epochs, FedKT 2 students x 3 teachers per client",
			Dataset:  engine.DatasetSpec{Name: "digits"},
			Model:    engine.ModelSpec{Hidden: []int{32}},
			Training: engine.TrainingSpec{LocalEpochs: 20, BatchSize: 32, LearningRate: 0.05},
			Seeds:    []int64{1, 2}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 20, Cycles: 4, SamplesPerCycle: 1, BatchSize: 32, LearningRate: 0.2},
				distill: predictive.DistillConfig{Epochs: 20, BatchSize: 32, LearningRate: 5e-3},
				fedbe:   predictive.FedBEConfig{Samples: 5, Distill: predictive.DistillConfig{Epochs: 20, BatchSize: 32, SWACycles: 2}},
				fedkt:   predictive.FedKTConfig{Students: 2, Teachers: 3}})
	},
	"diabetes-fast": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "reduced: 3 seeds, 32 hidden units, 40 epochs",
			Dataset:  engine.DatasetSpec{Name: "diabetes"},
			Model:    engine.ModelSpec{Hidden: []int{32}},
			Training: engine.TrainingSpec{LocalEpochs: 40, BatchSize: 16},
			Seeds:    []int64{1, 2, 3}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 40, Cycles: 4, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02}})
	},
	"diabetes-full": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "full (Hasan (2023), Sec. 4.4)",
			Dataset:  engine.DatasetSpec{Name: "diabetes"},
			Training: engine.TrainingSpec{LocalEpochs: 100, BatchSize: 16},
			Seeds:    []int64{1, 2, 3, 4, 5}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 100, Cycles: 5, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02}})
	},
	"boston-fast": func() *engine.Spec {
		return hasan(&engine.Spec{Budget: "reduced: 3 seeds, 32 hidden units, 40 epochs",
			Dataset:   engine.DatasetSpec{Name: "boston"},
			Partition: engine.PartitionSpec{SortFeature: "LSTAT"},
			Model:     engine.ModelSpec{Hidden: []int{32}},
			Training:  engine.TrainingSpec{LocalEpochs: 40, BatchSize: 16},
			Seeds:     []int64{1, 2, 3}},
			hasanOptions{sampler: predictive.SamplerConfig{Epochs: 40, Cycles: 4, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02}})
	},
}

func init() {
	for name, build := range hasanPresets {
		s := build()
		task, methods := "Tables 3.1 and 4.2, classification", HasanMethods
		if data.RegressionSet(s.Dataset.Name) {
			task, methods = "Tables 3.2 and 4.3, regression", HasanRegressionMethods
		}
		var hs []string
		for _, h := range s.Sweep["partition.h"] {
			hs = append(hs, string(h))
		}
		addPaperPreset(name, fmt.Sprintf("Hasan (2023) %s: %s, %d clients, h = %s, one round: %s",
			task, s.Dataset.Name, s.Partition.Clients, strings.Join(hs, ", "), strings.Join(methods, ", ")), build, nil)
	}
}

// HasanPresetNames lists Hasan (2023)'s one-round presets (what `fedbayes predictive` runs), sorted.
func HasanPresetNames() []string { return slices.Sorted(maps.Keys(hasanPresets)) }

// hasanLeNet is Hasan (2023)'s one-round comparison (Tables 3.1-3.2 and 4.2: K=5 clients with
// heterogeneity h, 20% of the training set on the server, one round) on the engine, with a LeNet on
// Fashion-MNIST for the thesis's MLP: FedAvg and FedBE train their clients by optimisation; EP-MCMC,
// the BCM, the mixture, beta-PredBayes and their distilled forms combine cSGHMC samples (Sec. 3.3.4:
// 5 cycles, 2 samples per cycle, step size 0.1, prior N(0, 5e4^2)), and FedPA steps from them (server
// step size 0.5, Tables B.2-B.3). FedKT and OneshotFL run in Hasan's engine presets (fmnist-fast). The
// sampler's friction is that of Zhang et al.'s public cSGHMC code (predictive.ZhangFriction; the thesis
// does not state it): at the package default 0.1 the clients' samples end too far apart for EP-MCMC
// and FedPA to combine them (docs/predictive.md).
func hasanLeNet() *engine.Spec {
	sampler := predictive.SamplerConfig{Method: predictive.CSGHMC, LearningRate: 0.1, Cycles: 5, SamplesPerCycle: 2, Friction: predictive.ZhangFriction}
	sampling := func(label, rule string) engine.Variant {
		return variant(label, "aggregation.rule", rule, "training.sampler", sampler)
	}
	return &engine.Spec{
		Dataset:     engine.DatasetSpec{Name: "fashion-mnist", ServerFraction: 0.2},
		Partition:   engine.PartitionSpec{Method: "heterogeneity", Clients: 5},
		Model:       engine.ModelSpec{Arch: models.ArchLeNet, Kind: models.Deterministic},
		Aggregation: engine.AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training:    engine.TrainingSpec{Rounds: 1, LocalEpochs: 25, BatchSize: 100, Optimizer: "sgd", LearningRate: 0.01, Momentum: 0.9},
		Evaluation:  engine.EvaluationSpec{Samples: 10},
		Seeds:       []int64{1, 2, 3, 4, 5},
		Sweep:       map[string][]json.RawMessage{"partition.h": raws(0, 0.3, 0.6, 0.9)},
		Variants: []engine.Variant{
			variant("FedAvg", "aggregation.rule", "FedAvg"),
			variant("FedBE", "aggregation.rule", "fedbe-gaussian", "aggregation.options", strategy.FedBEOptions{Samples: 10}),
			sampling("EP-MCMC", "ep-mcmc"),
			variant("FedPA", "aggregation.rule", "fedpa", "training.sampler", sampler, "aggregation.options", strategy.FedPAOptions{ServerLR: 0.5}),
			sampling("BCM", "bcm"),
			sampling("Mixture", "mixture"),
			sampling("beta-PredBayes", "beta-predbayes"),
			sampling("D-BCM", "d-bcm"),
			sampling("D-beta-PredBayes", "d-beta-predbayes"),
		},
	}
}

func init() {
	addPaperPreset("hasan-lenet-h",
		"Hasan (2023) Tables 3.1-4.2 on one engine: LeNet on fashion-mnist, 5 clients, h = 0-0.9, 20% server set, one round: "+
			"FedAvg, FedBE, and EP-MCMC, FedPA, BCM, mixture, beta-PredBayes, D-BCM, D-beta-PredBayes on cSGHMC samples",
		hasanLeNet,
		func(s *engine.Spec) *engine.Spec { return reduce(s, 3000, 2000, 1, 10, []int64{1, 2, 3}, 1) })
}

// HasanFedAvgTuned is the claim preset of Hasan (2023)'s one-round FedAvg at the thesis's tuned local
// training (issue 48): the medium preset fmnist-medium trains every optimising client alike (plain
// SGD with momentum at 0.05, batch 32, 15 epochs, 12,000 examples) where the thesis tunes each method
// by grid search (Table B.1). Its two rows are FedAvg at Table B.2's setting for h = 0 (SGD with
// momentum 0.9 at 1e-1) and at Table B.3's for h > 0 (the same at 1e-2), both at every h, with the
// thesis's batch 100 (App. B.2) and 25 local epochs (Sec. 3.3.5), on the medium preset's 12,000 training
// examples (so that its rows pair with that preset's by seed) and all test examples, 5 seeds (the
// thesis's calibration figures; its accuracy tables have 10).
const HasanFedAvgTuned = "fmnist-fedavg-tuned"

// HasanTunedRows are the labels of HasanFedAvgTuned's two rows with their learning rates: Table
// B.2's (h = 0) and Table B.3's (h > 0), Fashion-MNIST, both SGD with momentum 0.9.
var HasanTunedRows = []struct {
	Label string
	LR    float64
}{{"fedavg-b2", 1e-1}, {"fedavg-b3", 1e-2}}

// hasanFedAvgTuned builds HasanFedAvgTuned from Hasan's one-round setting (hasan).
func hasanFedAvgTuned() *engine.Spec {
	s := hasan(&engine.Spec{Budget: "claim preset: one-round FedAvg at the thesis's tuned local training (Tables B.2 and B.3: " +
		"SGD with momentum 0.9 at 1e-1 for h = 0 and 1e-2 for h > 0, batch 100, 25 epochs), both rows at every h, the medium preset's " +
		"12,000 training / all 10,000 test examples (thesis: all), 5 seeds (thesis: 10); the medium preset trains at 0.05, batch 32, 15 epochs",
		Dataset:  engine.DatasetSpec{Name: "fashion-mnist", Subsample: 12000},
		Training: engine.TrainingSpec{LocalEpochs: 25, BatchSize: 100, Optimizer: "sgd", Momentum: predictive.DefaultMomentum, LearningRate: HasanTunedRows[1].LR},
		Seeds:    []int64{1, 2, 3, 4, 5}}, hasanOptions{})
	s.Variants = nil
	for _, r := range HasanTunedRows {
		s.Variants = append(s.Variants, variant(r.Label, "aggregation.rule", "FedAvg", "training.lr", r.LR))
	}
	return s
}

func init() {
	addPaperPreset(HasanFedAvgTuned, "Hasan (2023), one-round FedAvg at Tables B.2 and B.3's tuned local training: fashion-mnist, 5 clients, "+
		"h = 0, 0.3, 0.6, 0.9, rows fedavg-b2 (lr 1e-1) and fedavg-b3 (lr 1e-2)", hasanFedAvgTuned, nil)
}
