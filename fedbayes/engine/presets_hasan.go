package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/strategy"
)

// FromPredictive turns a one-round predictive-space spec (predictive.Spec: Hasan (2023)'s runner of
// Tables 3.1, 3.2 and 4.2, whose presets are the 003 presets) into the engine spec that runs the
// same experiment: one round, K clients with heterogeneity h swept over the spec's values
// (partition.h; for regression sorted by sort_feature), the same data (a table without a test split
// split by each seed, dataset.split_per_seed), server fraction, MLP, seeds and budget, and one
// variant per method, labelled by the method's name:
//
//   - fedavg, oneshot (as oneshotfl), fedbe and fedkt train the clients with the local optimiser
//     (training.*: local's optimizer, learning rate, momentum, epochs and batch size);
//   - fedpa, ep-mcmc, bcm, mixture, beta-predbayes, d-bcm and d-beta-predbayes sample them
//     (training.sampler: the spec's sampler);
//   - the server options come from the spec's fedpa, fedbe, distill, fedkt and beta fields; ep-mcmc
//     draws ep_draws networks (evaluation.samples); the students of d-bcm and d-beta-predbayes start
//     from a fresh initialisation (aggregation.server.student_start "previous"), as the thesis's.
//
// The engine derives its seeds per (seed, round, client) where the runner derived them per method,
// so the numbers differ seed by seed; over seeds the means agree within their standard errors
// (docs/strategies.md, "Hasan's presets on the engine"). Spec fields the engine has no counterpart for
// are refused: beta.grid_points and beta.tol (the engine fits beta with the default grid and
// tolerance, which no engine field sets).
func FromPredictive(ps predictive.Spec) (*Spec, error) {
	ps = ps.WithDefaults()
	if err := ps.Validate(); err != nil {
		return nil, err
	}
	if ps.Beta.GridPoints != 0 || ps.Beta.Tol != 0 {
		return nil, fmt.Errorf("engine: predictive spec %s: beta.grid_points and beta.tol have no engine counterpart; remove them", ps.Name)
	}
	lc := ps.Local
	s := &Spec{
		Name:        ps.Name,
		Dataset:     DatasetSpec{Name: ps.Dataset, Dir: ps.DataDir, Subsample: ps.Subsample, TestSubsample: ps.TestSubsample, ServerFraction: ps.ServerFraction, SplitPerSeed: true},
		Partition:   PartitionSpec{Method: "heterogeneity", Clients: ps.Clients, SortFeature: ps.SortFeature},
		Model:       ModelSpec{Arch: "mlp", Kind: "deterministic", Hidden: append([]int(nil), ps.Hidden...)},
		Aggregation: AggregationSpec{Rule: "FedAvg", Weighting: "size"},
		Training: TrainingSpec{Rounds: 1, LocalEpochs: lc.Epochs, BatchSize: lc.BatchSize, Optimizer: lc.Optimizer,
			LearningRate: lc.LearningRate, Momentum: lc.Momentum},
		Evaluation: EvaluationSpec{Fairness: "off"},
		Seeds:      append([]int64(nil), ps.Seeds...),
		Budget:     ps.Budget,
	}
	if ps.IsRegression() {
		s.Model.NoiseVar = ps.NoiseVar
	}
	var hs []any
	for _, h := range ps.H {
		hs = append(hs, h)
	}
	s.Sweep = map[string][]json.RawMessage{"partition.h": raws(hs...)}
	sampler := ps.Sampler
	beta := func(sv *ServerSpec) *ServerSpec {
		sv.BetaMin, sv.BetaMax = ps.Beta.Min, ps.Beta.Max
		return sv
	}
	distill := ps.Distill
	for _, m := range ps.Methods {
		var v Variant
		switch m {
		case predictive.MethodFedAvg:
			v = variant(m, "aggregation.rule", "FedAvg")
		case predictive.MethodFedBE:
			rule := "fedbe-gaussian"
			if ps.FedBE.Distribution == "dirichlet" {
				rule = "fedbe-dirichlet"
			}
			fd := ps.FedBE.Distill
			v = variant(m, "aggregation.rule", rule, "aggregation.server", ServerSpec{Samples: ps.FedBE.Samples, Alpha: ps.FedBE.Alpha, Distill: &fd})
		case predictive.MethodOneshot:
			v = variant(m, "aggregation.rule", "oneshotfl", "aggregation.server", ServerSpec{Distill: &distill})
		case predictive.MethodFedKT:
			kc := ps.FedKT
			kc.Local = kc.Local.WithDefaults()
			// FedKT trains its own teachers (kc.Local): the engine's one local epoch is not used.
			v = variant(m, "aggregation.rule", "fedkt", "training.local_epochs", 1, "aggregation.server", ServerSpec{Distill: &distill, FedKT: &kc})
		case predictive.MethodFedPA:
			v = variant(m, "aggregation.rule", "fedpa", "training.sampler", sampler,
				"aggregation.server", ServerSpec{FedPARho: ps.FedPA.Rho, ServerLR: ps.FedPA.ServerLR})
		case predictive.MethodEPMCMC:
			v = variant(m, "aggregation.rule", "ep-mcmc", "training.sampler", sampler, "evaluation.samples", ps.EPDraws)
		case predictive.MethodBCM, predictive.MethodMixture:
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler)
		case predictive.MethodBeta:
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler, "aggregation.server", beta(&ServerSpec{}))
		case predictive.MethodDBCM, predictive.MethodDBeta:
			// The student starts from a fresh initialisation, as Hasan (2023), Algs. 1-2.
			v = variant(m, "aggregation.rule", m, "training.sampler", sampler,
				"aggregation.server", beta(&ServerSpec{Distill: &distill, StudentStart: strategy.StudentFromPrevious}))
		default:
			return nil, fmt.Errorf("engine: predictive spec %s: method %q has no engine strategy", ps.Name, m)
		}
		s.Variants = append(s.Variants, v)
	}
	if _, err := s.Expand(); err != nil {
		return nil, fmt.Errorf("engine: predictive spec %s as an engine spec: %w", ps.Name, err)
	}
	return s, nil
}

func init() {
	for _, name := range predictive.PresetNames() {
		ps, err := predictive.Preset(name)
		if err != nil {
			panic(err)
		}
		task := "Tables 3.1 and 4.2, classification"
		if ps.IsRegression() {
			task = "Tables 3.2 and 4.3, regression"
		}
		addPaperPreset(name, fmt.Sprintf("Hasan (2023) %s: %s, %d clients, h = %s, one round: %s",
			task, ps.Dataset, ps.WithDefaults().Clients, floatsText(ps.WithDefaults().H), strings.Join(ps.WithDefaults().Methods, ", ")),
			func() *Spec {
				s, err := FromPredictive(ps)
				if err != nil {
					panic(fmt.Sprintf("engine: preset %s: %v", name, err)) // a test converts every preset
				}
				return s
			}, nil)
	}
}

// floatsText joins values as "0, 0.3, 0.6".
func floatsText(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}
