package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"fedbayes.dev/fedbayes/internal/strictjson"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/results"
)

// Spec is one federated experiment: the data, how it is split among clients, the model, how the server
// combines the clients, local training, evaluation and the seeds. It is the same as a Go struct and as
// JSON (field names in snake_case, see docs/engine.md); unknown JSON fields are errors. Zero values take
// the defaults documented on each field (see Spec.WithDefaults); Validate reports the first invalid
// field by its JSON path and the allowed values.
//
// A Spec with a non-empty Sweep stands for several settings: the cartesian product of the swept
// fields' values (see Expand). Each setting is run once per seed.
type Spec struct {
	// Name names the setting (results directories are NAME-seedN); default "run". Swept values are
	// appended by Expand.
	Name string `json:"name,omitempty"`
	// Dataset is the data.
	Dataset DatasetSpec `json:"dataset"`
	// Partition splits the clients' data.
	Partition PartitionSpec `json:"partition"`
	// Model is the network every client trains.
	Model ModelSpec `json:"model"`
	// Aggregation is how the server combines the clients.
	Aggregation AggregationSpec `json:"aggregation"`
	// Training is the clients' local training and the number of rounds.
	Training TrainingSpec `json:"training"`
	// Evaluation says when and how the global model is evaluated.
	Evaluation EvaluationSpec `json:"evaluation"`
	// Seeds lists the seeds; each setting runs once per seed (default [0]). A seed fixes the data
	// subsample and split, the partition, the participation draws, the initial model, every client's
	// batch order and noise, and the aggregation's sampling.
	Seeds []int64 `json:"seeds,omitempty"`
	// Sweep maps JSON paths of fields (e.g. "aggregation.rule") to lists of values; the run covers the
	// cartesian product. Paths are visited in sorted order.
	Sweep map[string][]json.RawMessage `json:"sweep,omitempty"`
	// Variants lists alternative settings, each crossed with the sweep: a variant sets several fields
	// at once (e.g. a deterministic model together with the FedAvg rule), which a cartesian sweep
	// cannot. Its label is appended to the setting name before the swept values.
	Variants []Variant `json:"variants,omitempty"`
	// Budget is the budget a preset states ("full", or how it was reduced). Run replaces it, in
	// every run.json, summary and figure title, by what the setting actually runs (Budget.String:
	// examples, clients, rounds, epochs, seeds), so an overridden spec is never recorded under its
	// preset's label.
	Budget string `json:"budget,omitempty"`
}

// Variant is one alternative setting of a Spec: a label and the fields it sets, by JSON path.
type Variant struct {
	// Label names the variant in setting names and the "variant" results label (letters, digits,
	// '.', '_' and '-').
	Label string `json:"label"`
	// Set maps JSON paths (as in Sweep) to the values the variant gives them.
	Set map[string]json.RawMessage `json:"set"`
}

// DatasetSpec names the data.
type DatasetSpec struct {
	// Name is a data.Load name: fashion-mnist, digits, iris, wine, breast-cancer, mnist, emnist-SPLIT,
	// cifar10, cifar100, svhn (classification), or diabetes, boston (regression: the targets are
	// standardised on the training set, the model predicts a Gaussian, the metrics are mse and nll).
	Name string `json:"name"`
	// Dir is the data folder; empty means data.Dir() ($FEDBAYES_DATA or the user cache).
	Dir string `json:"dir,omitempty"`
	// Subsample keeps this many training examples (a seeded, class-stratified draw) for fast runs; 0
	// keeps all.
	Subsample int `json:"subsample,omitempty"`
	// TestSubsample keeps this many test examples; 0 keeps all.
	TestSubsample int `json:"test_subsample,omitempty"`
	// SplitPerSeed splits a dataset that has no test split of its own (the tables: digits, iris,
	// wine, breast-cancer, diabetes, boston) into training and test sets by each run's seed
	// (data.WithSeed), as Hasan's one-round runner did; false keeps one split (seed 0) for every seed.
	// Datasets with a test split ignore it.
	SplitPerSeed bool `json:"split_per_seed,omitempty"`
	// ServerFraction sets aside this fraction of the training set for the server (data.SplitServer):
	// the pre-training set of Fischer et al. (2024), Sec. 3.6 (0.1). 0 means none. Required by
	// aggregation.pretrain.
	ServerFraction float64 `json:"server_fraction,omitempty"`
}

// PartitionSpec splits the clients' training data (fedbayes/partition).
type PartitionSpec struct {
	// Method is iid (default), dirichlet, shards, classes (k classes per client) or heterogeneity.
	Method string `json:"method,omitempty"`
	// Clients is C, the number of clients (default 10).
	Clients int `json:"clients,omitempty"`
	// Participation is gamma, the fraction of clients active per round, in (0, 1] (default 1): max(1,
	// round(gamma C)) clients are drawn each round (Ozer et al. (2022), Sec. 2).
	Participation float64 `json:"participation,omitempty"`
	// Alpha is the Dirichlet concentration (dirichlet; default 0.5).
	Alpha float64 `json:"alpha,omitempty"`
	// MinSize is the smallest client the Dirichlet split accepts (dirichlet; default 10).
	MinSize int `json:"min_size,omitempty"`
	// ShardsPerClient is the number of shards per client (shards; default 2).
	ShardsPerClient int `json:"shards_per_client,omitempty"`
	// ClassesPerClient is k of "#C=k" (classes; default 2).
	ClassesPerClient int `json:"classes_per_client,omitempty"`
	// H is the heterogeneity in [0, 1] (heterogeneity).
	H float64 `json:"h,omitempty"`
	// SortFeature names the input feature a regression dataset is sorted by for heterogeneity
	// (partition.SortedByKey, Hasan (2023), Secs. 3.3.2 and 4.3); default: the first feature.
	// Regression only.
	SortFeature string `json:"sort_feature,omitempty"`
	// Sizes, when set, gives the clients sizes from a distribution (quantity skew) while Method
	// decides their classes (partition.ClientSizes, partition.WithSizes; docs/partitions.md).
	// Classification only; nil keeps the sizes Method gives.
	Sizes *SizesSpec `json:"sizes,omitempty"`
	// HeldOut, in (0, 1), sets aside this share of each client's examples (ceil(share n_k), drawn
	// from the seed; partition.HoldOut) as the client's own test data: the client never trains on
	// them, and evaluation.fairness held-out (the default then) scores the global model on them.
	// It is a partition field because it changes what the clients train on. 0: none.
	HeldOut float64 `json:"held_out,omitempty"`
	// Sampling, when set, draws each round's clients otherwise than uniformly among all, and lets
	// sampled clients drop out or straggle (partition.Sampler; docs/partitions.md). nil: the uniform
	// draw of Participation, every client returning with all its local steps.
	Sampling *SamplingSpec `json:"sampling,omitempty"`
}

// SamplingSpec is how a round's clients are drawn and which of them return (partition.SamplingOptions).
// The rows record the clients that returned (results.Row.Clients) and, when some did not, those
// sampled (results.Row.Sampled); the server strategy sees only the clients that returned.
type SamplingSpec struct {
	// Method is uniform (default), size (probability proportional to the client's size) or
	// power-of-choice (Cho et al.: candidates drawn by size, the round's clients those of highest
	// training negative log-likelihood in the last round they returned).
	Method string `json:"method,omitempty"`
	// Candidates is power-of-choice's d, between the clients of a round and partition.clients
	// (default min(C, 2 m), m the clients of a round).
	Candidates int `json:"candidates,omitempty"`
	// Availability holds each client's probability of being available in a round (one value: every
	// client's); the round's clients are drawn among the available ones, and a round with fewer
	// than m available is drawn again. Empty: every client is always available.
	Availability []float64 `json:"availability,omitempty"`
	// Trace gives the availability as a trace instead: Trace[r-1] lists the ids of the clients
	// available in round r (r = 1 .. training.rounds at least; in each round at least the m clients
	// of a round, each in [0, partition.clients), none twice); the round's clients are drawn among
	// them by Method. Not with Availability.
	Trace [][]int `json:"trace,omitempty"`
	// DropRate is the share of the sampled clients that fail to return, in [0, 1): floor((1 -
	// rate) m) of them return (at least one), as PFLlib's client_drop_rate.
	DropRate float64 `json:"drop_rate,omitempty"`
	// StragglerRate is the share of the clients that are slow, in [0, 1] (PFLlib's
	// train_slow_rate): in each round a straggler runs, in every local epoch, only a random 1 to
	// half of its steps.
	StragglerRate float64 `json:"straggler_rate,omitempty"`
}

// SizesSpec is a distribution of client sizes (partition.SizeOptions): every client gets at least
// one example and the sizes sum to the examples the label partition assigns.
type SizesSpec struct {
	// Kind is linear, square or exponential (Flower Datasets' size partitioners: client k gets a
	// share proportional to k+1, (k+1)^2 or e^(k+1)), zipf (proportional to (k+1)^-exponent),
	// lognormal (exp(sigma z), z standard normal) or dirichlet (shares ~ Dir(beta), NIID-Bench).
	Kind string `json:"kind"`
	// Exponent is zipf's s (default 1).
	Exponent float64 `json:"exponent,omitempty"`
	// Sigma is lognormal's spread (default 1).
	Sigma float64 `json:"sigma,omitempty"`
	// Beta is dirichlet's concentration (default 0.5).
	Beta float64 `json:"beta,omitempty"`
}

// ModelSpec is the spec's "model" object: models.Options, the model options declared once in package
// models (the input shape and classes come from the data, the number of clients and seeds from the
// engine). Its defaults here (WithDefaults): arch mlp, kind bayesian, and for a regression dataset
// noise_var 0.5, the start of a noise variance learned per client (as Hasan's runner); compat also
// takes "paper" or "none" for the default.
type ModelSpec = models.Options

// AggregationSpec is how the server combines the clients (fedbayes/aggregate).
type AggregationSpec struct {
	// Rule is the server strategy (package strategy): a parameter-space aggregate.Rule (EAA, GAA,
	// AALV, PPA, LP, Conflation, CF, RKLB, WB, DWC, FedAvg; aliases NWA, WS, WC, LLP), FedBE
	// (fedbe-gaussian, fedbe-dirichlet, fedbe-gaussian-no-swa), a predictive-space combination (bcm,
	// mixture, beta-predbayes) or a name registered with strategy.Register. Default GAA for Bayesian
	// models, FedAvg otherwise.
	Rule string `json:"rule,omitempty"`
	// Weighting is equal (default), size, maxdisc or fixedpoint (Fischer et al. (2024), Eqs. 18-21).
	Weighting string `json:"weighting,omitempty"`
	// Population is PPA's sample size N (default 1000).
	Population int `json:"population,omitempty"`
	// DWCPolicy is keep-previous (default), conflation or error: what DWC does where its precision
	// is not positive.
	DWCPolicy string `json:"dwc_policy,omitempty"`
	// Options are the strategy's own options, a JSON object the strategy decodes and validates
	// itself (strategy.DecodeOptions; each strategy's options struct: strategy.FedBEOptions,
	// FedPAOptions, BetaOptions, DistilledOptions, OneshotFLOptions, FedKTOptions; see
	// docs/strategies.md). A sweep or variant sets one as "aggregation.options.NAME". A
	// parameter-space rule takes none (Weighting, Population and DWCPolicy are its options). Empty
	// takes the strategy's defaults. The former aggregation.server is read as options
	// (results.SpecAliases).
	Options json.RawMessage `json:"options,omitempty"`
	// Pretrain trains the initial global model on the server set before round 1 (Fischer et al.
	// (2024), Sec. 3.6); nil means no pre-training.
	Pretrain *PretrainSpec `json:"pretrain,omitempty"`
}

// PretrainSpec is the server's pre-training of the global model on its own set (Fischer et al. (2024),
// Sec. 3.6: at most 100 epochs, early stopping on validation accuracy with patience 10).
type PretrainSpec struct {
	// Epochs is the maximum number of epochs (default 100).
	Epochs int `json:"epochs,omitempty"`
	// Patience stops after this many epochs without a better validation accuracy (default 10).
	Patience int `json:"patience,omitempty"`
	// ValidationFraction of the server set is held out for early stopping (default 0.1).
	ValidationFraction float64 `json:"validation_fraction,omitempty"`
}

// TrainingSpec is the rounds and the clients' local training.
type TrainingSpec struct {
	// Rounds is T, the number of communication rounds (default 10).
	Rounds int `json:"rounds,omitempty"`
	// LocalEpochs is E, each client's epochs per round (default 1).
	LocalEpochs int `json:"local_epochs,omitempty"`
	// BatchSize is B (default 64). A client runs ceil(n_k / B) steps per epoch, the last one partial.
	BatchSize int `json:"batch_size,omitempty"`
	// Optimizer is sgd (default) or adam.
	Optimizer string `json:"optimizer,omitempty"`
	// LearningRate is the initial learning rate (default 0.01).
	LearningRate float64 `json:"lr,omitempty"`
	// VarianceOptimizer, when "adam", trains the variance parameters of a Bayesian model (log sigma^2
	// or rho) with Adam at VarianceLR while the other parameters keep the sgd optimizer
	// (models.OptimizerConfig.SpreadOptimizer): under SGD at the papers' rates the variances keep their
	// initial value (docs/models.md). Empty: every parameter uses Optimizer. A model without variances
	// (deterministic, MC dropout: the FED rows of a paper preset) trains as with Optimizer alone.
	VarianceOptimizer string `json:"variance_optimizer,omitempty"`
	// VarianceLR is VarianceOptimizer's learning rate (0: models.DefaultSpreadLearningRate, 1e-3); a
	// schedule scales it like LearningRate.
	VarianceLR float64 `json:"variance_lr,omitempty"`
	// Momentum is SGD's momentum in [0, 1).
	Momentum float64 `json:"momentum,omitempty"`
	// WeightDecay is the weight decay (>= 0).
	WeightDecay float64 `json:"weight_decay,omitempty"`
	// Schedule is the learning-rate schedule over rounds; nil means constant.
	Schedule *ScheduleSpec `json:"lr_schedule,omitempty"`
	// Prior is fixed (default: N(0, prior_std^2)) or previous-global (the prior of every client is
	// the previous round's global posterior, Fischer et al. (2024), Sec. 3.7; Bayesian models only).
	Prior string `json:"prior,omitempty"`
	// ProxMu adds FedProx's proximal term mu/2 ||w - w_global||^2 to every client's loss (Li et al.
	// 2020; a baseline of Hasan (2023)); 0 means none.
	ProxMu float64 `json:"prox_mu,omitempty"`
	// Mode is vectorized (default: the active clients train together in one computation) or
	// sequential (one client at a time, the reference path).
	Mode string `json:"mode,omitempty"`
	// Sampler, when set, makes local training SG-MCMC sampling (cSGHMC or SGLD, Hasan (2023), Sec.
	// 3.3.4) instead of optimisation: each active client draws posterior samples of its
	// deterministic network, starting from the global model (predictive.SamplerConfig; epochs and
	// batch_size default to training.local_epochs and training.batch_size, the seed is derived per
	// round). The strategies EP-MCMC, FedPA and the predictive-space combinations use the samples;
	// the parameter-space rules see each client's sample mean.
	Sampler *predictive.SamplerConfig `json:"sampler,omitempty"`
}

// ScheduleSpec is a learning-rate schedule over rounds.
type ScheduleSpec struct {
	// Kind is constant or exponential: lr_r = lr * (1 - rate)^(r - silent) for rounds r > silent
	// (Fischer et al. (2024), Sec. 3.3: rate 0.04 after a silent period of 50 rounds).
	Kind string `json:"kind"`
	// SilentRounds is the number of rounds at the initial rate.
	SilentRounds int `json:"silent_rounds,omitempty"`
	// Rate is the fraction by which the rate shrinks each round after the silent period, in [0, 1).
	Rate float64 `json:"rate,omitempty"`
}

// EvaluationSpec says when and how the global model is evaluated.
type EvaluationSpec struct {
	// Every evaluates after every n-th round and after the last (default 1).
	Every int `json:"every,omitempty"`
	// Samples is M, the Monte Carlo samples of the predictive (default 10 for Bayesian and MC-dropout
	// models; deterministic models use 1).
	Samples int `json:"samples,omitempty"`
	// Bins is the number of ECE bins (default 15; BFL-P's scores.py uses 100).
	Bins int `json:"bins,omitempty"`
	// NLLEpsilon, when positive, makes the NLL -log(p + NLLEpsilon) (BFL-P's scores.py: 1e-8) instead of
	// -log(max(p, 1e-12)) (metrics.Classification.SetNLLEpsilon).
	NLLEpsilon float64 `json:"nll_epsilon,omitempty"`
	// Fairness is where each scored client's accuracy, NLL and ECE are measured (Jamoussi et al.
	// (BA-BFL), "Metrics"): local (default: on its own training data), held-out (on its held-out
	// examples, partition.held_out; the default when that is set), test-share (on a share of the test
	// set with the client's class proportions) or off.
	Fairness string `json:"fairness,omitempty"`
	// FairnessExamples caps the examples per client used for fairness (default 200).
	FairnessExamples int `json:"fairness_examples,omitempty"`
	// FairnessClients caps the clients scored: all of them when partition.clients is at most this,
	// else this many drawn from the seed, the same in every round. An evaluation then predicts the
	// test set and at most FairnessClients x FairnessExamples examples, M times each, whatever the
	// number of clients. 0 (left out) is DefaultFairnessClients; WithDefaults leaves it 0, so that
	// the recorded spec of a run that scores every client reads as before the field existed.
	FairnessClients int `json:"fairness_clients,omitempty"`
}

// DefaultFairnessClients is evaluation.fairness_clients when it is left out: every client of a
// federation of up to 100 (the papers' largest) is scored.
const DefaultFairnessClients = 100

// scoredClients is the cap on the clients scored (FairnessClients, or its default).
func (e EvaluationSpec) scoredClients() int {
	if e.FairnessClients == 0 {
		return DefaultFairnessClients
	}
	return e.FairnessClients
}

// ParseSpec reads a Spec from JSON. Unknown fields are errors naming their JSON path; the spec is
// validated (including every setting of its sweep).
func ParseSpec(raw []byte) (*Spec, error) {
	// Duplicate keys, NaN, Infinity, 1e999 and syntax errors, with path, line and column; a
	// byte-order mark is skipped.
	if err := strictjson.Check(raw); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	raw = strictjson.StripBOM(raw)
	// A spec of a former layout (aggregation.server) reads as the current one; the positions of
	// later errors are then those of the upgraded document.
	upgraded, former := results.UpgradeSpecJSON(raw)
	raw = upgraded
	if err := checkUnknownFields(raw); err != nil {
		return nil, err
	}
	if err := checkExplicitZerosJSON(raw); err != nil {
		return nil, err
	}
	s, err := decodeSpec(raw, !former)
	if se := (*SpecError)(nil); errors.As(err, &se) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if _, err := s.Expand(); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeSpec decodes raw strictly into a Spec (after checkUnknownFields): an error at a field is a
// *SpecError naming its path, with the line and column in raw when positions is true (raw is the
// user's text, not JSON the engine wrote).
func decodeSpec(raw []byte, positions bool) (*Spec, error) {
	var s Spec
	if err := strictjson.Decode(raw, &s); err != nil {
		var je *strictjson.Error
		if errors.As(err, &je) && je.Path != "" {
			problem := je.Problem
			if positions {
				problem = fmt.Sprintf("%s (line %d, column %d)", je.Problem, je.Line, je.Column)
			}
			return nil, &SpecError{Path: je.Path, Problem: problem}
		}
		return nil, err
	}
	return &s, nil
}

// ReadSpec reads and validates a Spec from a JSON file.
func ReadSpec(path string) (*Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	s, err := ParseSpec(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// upgradeFormer returns s with the sweep's and the variants' paths of the former layout
// (aggregation.server and its fields, results.SpecAliases) replaced by the current ones, their
// values converted; s itself when it has none (a spec written for the former layout).
func upgradeFormer(s *Spec) (*Spec, error) {
	former := false
	for p := range s.Sweep {
		former = former || results.UpgradeSpecPath(p) != p
	}
	for _, v := range s.Variants {
		for p := range v.Set {
			former = former || results.UpgradeSpecPath(p) != p
		}
	}
	if !former {
		return s, nil
	}
	m, err := toMap(s)
	if err != nil {
		return nil, err
	}
	results.UpgradeSpec(m)
	return fromMap(m)
}

// Clone returns a deep copy of s.
func (s *Spec) Clone() *Spec {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("engine: a Spec cannot be marshalled: %v", err)) // every field is plain data
	}
	var c Spec
	if err := json.Unmarshal(raw, &c); err != nil {
		panic(fmt.Sprintf("engine: a Spec does not read back: %v", err))
	}
	return &c
}
