package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"fedbayes.dev/fedbayes/aggregate"
	"fedbayes.dev/fedbayes/data"
	"fedbayes.dev/fedbayes/models"
	"fedbayes.dev/fedbayes/partition"
	"fedbayes.dev/fedbayes/strategy"
)

// SpecError is an invalid field of a Spec: its JSON path (e.g. "training.optimizer"), and what is wrong,
// with the allowed values where there is a list.
type SpecError struct {
	// Path is the JSON path of the field.
	Path string
	// Problem says what is wrong and what is allowed.
	Problem string
	// Setting names the swept setting the field belongs to (empty for a spec without a sweep).
	Setting string
}

// Error implements error.
// Long problems (quoting a 10 MB swept value) are cut; Expand cuts long setting names.
func (e *SpecError) Error() string {
	if e.Setting != "" {
		return fmt.Sprintf("spec: setting %q: %s: %s", e.Setting, e.Path, shortName(e.Problem))
	}
	return fmt.Sprintf("spec: %s: %s", e.Path, shortName(e.Problem))
}

func specErr(path, format string, args ...any) error {
	return &SpecError{Path: path, Problem: fmt.Sprintf(format, args...)}
}

// oneOf checks that v is one of allowed.
func oneOf(path, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return specErr(path, "%q is not one of %s", shortName(v), strings.Join(allowed, ", "))
}

// Allowed values of the spec's enumerations.
var (
	partitionMethods = []string{"iid", "dirichlet", "shards", "classes", "heterogeneity"}
	archs            = []string{string(models.ArchMLP), string(models.ArchLeNet), string(models.ArchCNN3), string(models.ArchResNet20)}
	kinds            = []string{string(models.Bayesian), string(models.Deterministic), string(models.MCDropout)}
	estimators       = []string{string(models.LocalReparam), string(models.Reparam), string(models.Flipout)}
	varParams        = []string{string(models.LogVarParam), string(models.SoftplusParam)}
	optimizerKinds   = []string{string(models.SGD), string(models.Adam)}
	scheduleKinds    = []string{"constant", "exponential"}
	priorModes       = []string{"fixed", "previous-global"}
	trainModes       = []string{"vectorized", "sequential"}
	fairnessModes    = []string{"local", "test-share", "off", "held-out"}
)

// WithDefaults returns a copy of s with every zero-valued field set to its documented default.
func (s *Spec) WithDefaults() *Spec {
	c := s.Clone()
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	defInt := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	defF := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Name, "run")
	def(&c.Partition.Method, "iid")
	defInt(&c.Partition.Clients, 10)
	defF(&c.Partition.Participation, 1)
	if c.Partition.Method == "dirichlet" {
		defF(&c.Partition.Alpha, 0.5)
		defInt(&c.Partition.MinSize, 10)
	}
	if c.Partition.Method == "shards" {
		defInt(&c.Partition.ShardsPerClient, 2)
	}
	if c.Partition.Method == "classes" {
		defInt(&c.Partition.ClassesPerClient, 2)
	}
	if z := c.Partition.Sampling; z != nil {
		def(&z.Method, string(partition.SampleUniform))
	}
	if z := c.Partition.Sizes; z != nil {
		switch partition.SizeKind(z.Kind) {
		case partition.SizeZipf:
			defF(&z.Exponent, 1)
		case partition.SizeLogNormal:
			defF(&z.Sigma, 1)
		case partition.SizeDirichlet:
			defF(&z.Beta, 0.5)
		}
	}
	if c.Model.Arch == "" {
		c.Model.Arch = models.ArchMLP
	}
	if c.Model.Kind == "" {
		c.Model.Kind = models.Bayesian
	}
	if c.Aggregation.Rule == "" {
		if c.Model.Kind == models.Bayesian {
			c.Aggregation.Rule = string(aggregate.GAA)
		} else {
			c.Aggregation.Rule = string(aggregate.FedAvg)
		}
	}
	def(&c.Aggregation.Weighting, "equal")
	def(&c.Aggregation.DWCPolicy, "keep-previous")
	if p := c.Aggregation.Pretrain; p != nil {
		defInt(&p.Epochs, 100)
		defInt(&p.Patience, 10)
		defF(&p.ValidationFraction, 0.1)
	}
	defInt(&c.Training.Rounds, 10)
	defInt(&c.Training.LocalEpochs, 1)
	defInt(&c.Training.BatchSize, 64)
	def(&c.Training.Optimizer, string(models.SGD))
	defF(&c.Training.LearningRate, 0.01)
	def(&c.Training.Prior, "fixed")
	def(&c.Training.Mode, "vectorized")
	if c.Training.Schedule != nil {
		def(&c.Training.Schedule.Kind, "constant")
	}
	defInt(&c.Evaluation.Every, 1)
	if c.Evaluation.Samples == 0 {
		c.Evaluation.Samples = 10
		if c.Model.Kind == models.Deterministic && c.Training.Sampler == nil {
			c.Evaluation.Samples = 1 // sampling clients: the networks EP-MCMC draws (default 10)
		}
	}
	defInt(&c.Evaluation.Bins, 15)
	if data.RegressionSet(c.Dataset.Name) {
		def(&c.Evaluation.Fairness, "off") // per-client accuracy has no regression counterpart here
		defF(&c.Model.NoiseVar, 0.5)
	}
	if c.Partition.HeldOut > 0 {
		def(&c.Evaluation.Fairness, "held-out")
	}
	def(&c.Evaluation.Fairness, "local")
	defInt(&c.Evaluation.FairnessExamples, 200)
	if len(c.Seeds) == 0 {
		c.Seeds = []int64{0}
	}
	return c
}

// Validate checks a spec without its sweep (after defaults), reporting the first invalid field by JSON
// path. It touches no data: dataset names are checked against data.Names.
func (s *Spec) Validate() error {
	if err := checkFiniteFloats(s); err != nil {
		return err
	}
	if err := checkSeedList(s); err != nil {
		return err
	}
	if err := checkOptionsJSON(s); err != nil {
		return err
	}
	c := s.WithDefaults()
	for _, check := range []func(*Spec) error{validateData, validatePartition, validateModel, validateRegression, validateAggregation, validateTraining, validateEvaluation, validateBounds} {
		if err := check(c); err != nil {
			return err
		}
	}
	seen := map[int64]bool{}
	for i, seed := range c.Seeds {
		if seen[seed] {
			return specErr(fmt.Sprintf("seeds[%d]", i), "seed %d is listed twice", seed)
		}
		seen[seed] = true
	}
	return nil
}

// checkSeedList refuses an empty list of seeds given explicitly ("seeds": []), which WithDefaults
// would turn into seed 0, a run the spec did not ask for; a spec without "seeds" runs seed 0.
// Expand calls it before its settings are copied through JSON (which drops an empty list).
func checkSeedList(s *Spec) error {
	if s.Seeds != nil && len(s.Seeds) == 0 {
		return specErr("seeds", "an empty list runs nothing: give at least one seed, or leave \"seeds\" out to run seed 0")
	}
	return nil
}

func validateData(c *Spec) error {
	d := c.Dataset
	if d.Name == "" {
		return specErr("dataset.name", "missing; one of %s", strings.Join(data.Names(), ", "))
	}
	if !slices.Contains(data.Names(), d.Name) && !strings.HasPrefix(d.Name, "csv:") {
		return specErr("dataset.name", "%q is not one of %s", d.Name, strings.Join(data.Names(), ", "))
	}
	if strings.HasPrefix(d.Name, "csv:") {
		return specErr("dataset.name", "%q is a CSV dataset; the engine runs %s", d.Name, strings.Join(data.Names(), ", "))
	}
	if d.Subsample < 0 {
		return specErr("dataset.subsample", "%d; must be >= 0 (0 keeps all)", d.Subsample)
	}
	if d.TestSubsample < 0 {
		return specErr("dataset.test_subsample", "%d; must be >= 0 (0 keeps all)", d.TestSubsample)
	}
	if !(d.ServerFraction >= 0 && d.ServerFraction < 1) {
		return specErr("dataset.server_fraction", "%v; must be in [0, 1)", d.ServerFraction)
	}
	return nil
}

func validatePartition(c *Spec) error {
	p := c.Partition
	if err := oneOf("partition.method", p.Method, partitionMethods...); err != nil {
		return err
	}
	if p.Clients < 1 {
		return specErr("partition.clients", "%d; must be at least 1", p.Clients)
	}
	if !(p.Participation > 0 && p.Participation <= 1) {
		return specErr("partition.participation", "%v; must be in (0, 1]", p.Participation)
	}
	switch p.Method {
	case "dirichlet":
		if !(p.Alpha > 0) || math.IsInf(p.Alpha, 0) {
			return specErr("partition.alpha", "%v; must be positive and finite", p.Alpha)
		}
		if p.MinSize < 0 {
			return specErr("partition.min_size", "%d; must be >= 0", p.MinSize)
		}
	case "shards":
		if p.ShardsPerClient < 1 {
			return specErr("partition.shards_per_client", "%d; must be at least 1", p.ShardsPerClient)
		}
	case "classes":
		if p.ClassesPerClient < 1 {
			return specErr("partition.classes_per_client", "%d; must be at least 1", p.ClassesPerClient)
		}
	case "heterogeneity":
		if !(p.H >= 0 && p.H <= 1) {
			return specErr("partition.h", "%v; must be in [0, 1]", p.H)
		}
	}
	// Parameters of another method are an error rather than silently ignored.
	unused := map[string]bool{
		"partition.alpha":              p.Alpha != 0 && p.Method != "dirichlet",
		"partition.min_size":           p.MinSize != 0 && p.Method != "dirichlet",
		"partition.shards_per_client":  p.ShardsPerClient != 0 && p.Method != "shards",
		"partition.classes_per_client": p.ClassesPerClient != 0 && p.Method != "classes",
		"partition.h":                  p.H != 0 && p.Method != "heterogeneity",
	}
	for _, path := range []string{"partition.alpha", "partition.min_size", "partition.shards_per_client", "partition.classes_per_client", "partition.h"} {
		if unused[path] {
			return specErr(path, "set, but partition.method is %q, which does not use it", p.Method)
		}
	}
	if !(p.HeldOut >= 0 && p.HeldOut < 1) {
		return specErr("partition.held_out", "%v; must be in [0, 1) (0: no held-out examples)", p.HeldOut)
	}
	if err := validateSizes(c); err != nil {
		return err
	}
	return validateSampling(c)
}

// validateSampling checks partition.sampling against the clients of a round and the local training:
// power-of-choice ranks clients by their training NLL and stragglers cut optimisation steps, which
// sampling clients (training.sampler) have not.
func validateSampling(c *Spec) error {
	z := c.Partition.Sampling
	if z == nil {
		return nil
	}
	methods := make([]string, len(partition.SamplingMethods))
	for i, m := range partition.SamplingMethods {
		methods[i] = string(m)
	}
	if err := oneOf("partition.sampling.method", z.Method, methods...); err != nil {
		return err
	}
	if c.Training.Sampler != nil {
		if z.Method == string(partition.SamplePowerOfChoice) {
			return specErr("partition.sampling.method", "power-of-choice ranks clients by their training NLL; sampling clients (training.sampler) report none")
		}
		if z.StragglerRate != 0 {
			return specErr("partition.sampling.straggler_rate", "set, but the clients sample (training.sampler), all for the same number of epochs")
		}
	}
	p, err := partition.NewParticipation(c.Partition.Clients, c.Partition.Participation, 0)
	if err != nil {
		return specErr("partition.participation", "%v", err)
	}
	_, err = partition.NewSampler(p, make([]int, p.NumClients), samplingOptions(z))
	var se *partition.SamplingError
	if errors.As(err, &se) {
		return specErr("partition.sampling."+se.Field, "%s", se.Problem)
	}
	if err != nil {
		return err
	}
	if z.Trace != nil && len(z.Trace) < c.Training.Rounds {
		return specErr("partition.sampling.trace", "lists %d rounds, but training.rounds is %d; give the clients available in every round",
			len(z.Trace), c.Training.Rounds)
	}
	return nil
}

// samplingOptions are the partition.SamplingOptions of the spec's sampling (nil: the defaults).
func samplingOptions(z *SamplingSpec) partition.SamplingOptions {
	if z == nil {
		return partition.SamplingOptions{}
	}
	return partition.SamplingOptions{Method: partition.SamplingMethod(z.Method), Candidates: z.Candidates,
		Availability: z.Availability, Trace: z.Trace, DropRate: z.DropRate, StragglerRate: z.StragglerRate}
}

// validateSizes checks partition.sizes: a known kind, its one parameter positive and finite, no
// parameter of another kind, and a classification dataset.
func validateSizes(c *Spec) error {
	z := c.Partition.Sizes
	if z == nil {
		return nil
	}
	kinds := make([]string, len(partition.SizeKinds))
	for i, k := range partition.SizeKinds {
		kinds[i] = string(k)
	}
	if err := oneOf("partition.sizes.kind", z.Kind, kinds...); err != nil {
		return err
	}
	if data.RegressionSet(c.Dataset.Name) {
		return specErr("partition.sizes", "set, but dataset %s is a regression dataset; sizes are dealt by class", c.Dataset.Name)
	}
	params := []struct {
		path string
		v    float64
		kind partition.SizeKind
	}{{"partition.sizes.exponent", z.Exponent, partition.SizeZipf}, {"partition.sizes.sigma", z.Sigma, partition.SizeLogNormal},
		{"partition.sizes.beta", z.Beta, partition.SizeDirichlet}}
	for _, q := range params {
		if q.kind != partition.SizeKind(z.Kind) {
			if q.v != 0 {
				return specErr(q.path, "set, but partition.sizes.kind is %q, which does not use it", z.Kind)
			}
			continue
		}
		if !(q.v > 0) || math.IsInf(q.v, 0) {
			return specErr(q.path, "%v; must be positive and finite", q.v)
		}
	}
	return nil
}

func validateModel(c *Spec) error {
	m := c.Model
	if err := oneOf("model.arch", string(m.Arch), archs...); err != nil {
		return err
	}
	if err := oneOf("model.kind", string(m.Kind), kinds...); err != nil {
		return err
	}
	if m.Estimator != "" {
		if err := oneOf("model.estimator", string(m.Estimator), estimators...); err != nil {
			return err
		}
	}
	if m.VarParam != "" {
		if err := oneOf("model.var_param", string(m.VarParam), varParams...); err != nil {
			return err
		}
	}
	for path, list := range map[string][]int{"model.hidden": m.Hidden, "model.conv_channels": m.ConvChannels, "model.dense_widths": m.DenseWidths} {
		for i, v := range list {
			if v < 1 {
				return specErr(fmt.Sprintf("%s[%d]", path, i), "%d; widths must be at least 1", v)
			}
		}
	}
	if m.BayesianLayers < 0 {
		return specErr("model.bayesian_layers", "%d; must be >= 0 (0: every weight layer)", m.BayesianLayers)
	}
	if m.Kind != models.Bayesian {
		for path, set := range map[string]bool{
			"model.bayesian_layers": m.BayesianLayers != 0, "model.estimator": m.Estimator != "",
			"model.var_param": m.VarParam != "", "model.prior_std": m.PriorStd != 0,
			"model.init_logvar": m.InitLogVar != 0, "model.kl_weight": m.KLWeight != 0,
		} {
			if set {
				return specErr(path, "set, but model.kind is %q; it applies to bayesian models", m.Kind)
			}
		}
	}
	if m.DropoutRate != 0 && m.Kind != models.MCDropout {
		return specErr("model.dropout_rate", "set, but model.kind is %q; it applies to mcdropout models", m.Kind)
	}
	if !(m.DropoutRate >= 0 && m.DropoutRate < 1) {
		return specErr("model.dropout_rate", "%v; must be in (0, 1)", m.DropoutRate)
	}
	if m.PriorStd < 0 || math.IsInf(m.PriorStd, 0) || math.IsNaN(m.PriorStd) {
		return specErr("model.prior_std", "%v; must be positive", m.PriorStd)
	}
	if m.KLWeight < 0 || math.IsNaN(m.KLWeight) {
		return specErr("model.kl_weight", "%v; must be positive", m.KLWeight)
	}
	if m.InitLogVar != 0 && !(m.InitLogVar >= models.LogVarMin && m.InitLogVar <= models.LogVarMax) {
		return specErr("model.init_logvar", "%v; must be in [%v, %v]", m.InitLogVar, models.LogVarMin, models.LogVarMax)
	}
	if compat, err := models.ParseCompat(string(m.Compat)); err != nil {
		return specErr("model.compat", "unknown mode %q; want \"bfl-p\", \"ba-bfl\" or leave it empty (the paper's text)", m.Compat)
	} else if compat != models.CompatNone && m.VarParam != "" && m.VarParam != models.LogVarParam {
		return specErr("model.compat", "%q needs model.var_param \"logvar\", got %q", m.Compat, m.VarParam)
	}
	return nil
}

func validateAggregation(c *Spec) error {
	a := c.Aggregation
	rule, err := aggregate.ParseRule(a.Rule)
	if err != nil {
		if !strategy.Known(a.Rule) {
			rules := make([]string, 0, len(aggregate.Rules()))
			for _, r := range aggregate.Rules() {
				rules = append(rules, string(r))
			}
			var others []string
			for _, n := range strategy.Names() {
				if _, err := aggregate.ParseRule(n); err != nil {
					others = append(others, n)
				}
			}
			return specErr("aggregation.rule", "%q is not a server strategy: the rules are %s (aliases NWA, WS, WC, LLP); the other strategies %s",
				a.Rule, strings.Join(rules, ", "), strings.Join(others, ", "))
		}
		if err := strategy.CheckNotRule(a.Rule, strategySettings(c)); err != nil {
			return fieldSpecErr(err)
		}
		return validateStrategy(c)
	}
	// The rule's own options (weighting, population, DWC policy, FedAvg's model kind, and that it
	// has no aggregation.options) are checked by the strategy package, once; its refusal names the
	// field.
	if err := strategy.CheckRule(rule, strategySettings(c)); err != nil {
		return fieldSpecErr(err)
	}
	if p := a.Pretrain; p != nil {
		if c.Dataset.ServerFraction == 0 {
			return specErr("aggregation.pretrain", "needs a server set: set dataset.server_fraction (Fischer et al. (2024) use 0.1)")
		}
		if p.Epochs < 1 {
			return specErr("aggregation.pretrain.epochs", "%d; must be at least 1", p.Epochs)
		}
		if p.Patience < 1 {
			return specErr("aggregation.pretrain.patience", "%d; must be at least 1", p.Patience)
		}
		if !(p.ValidationFraction > 0 && p.ValidationFraction < 1) {
			return specErr("aggregation.pretrain.validation_fraction", "%v; must be in (0, 1)", p.ValidationFraction)
		}
	}
	return nil
}

// checkOptionsJSON refuses aggregation.options that are not one JSON value (set from Go), before
// the spec is copied through JSON.
func checkOptionsJSON(s *Spec) error {
	if o := s.Aggregation.Options; len(o) > 0 && !json.Valid(o) {
		return specErr("aggregation.options", "not valid JSON")
	}
	return nil
}

// fieldSpecErr is a strategy's refusal of a field (*strategy.FieldError) as a *SpecError with the
// same path and problem.
func fieldSpecErr(err error) error {
	var fe *strategy.FieldError
	if errors.As(err, &fe) {
		return &SpecError{Path: fe.Field, Problem: fe.Problem}
	}
	return err
}

func validateTraining(c *Spec) error {
	if err := validateSampler(c); err != nil {
		return err
	}
	t := c.Training
	if t.Rounds < 1 {
		return specErr("training.rounds", "%d; must be at least 1", t.Rounds)
	}
	if t.LocalEpochs < 1 {
		return specErr("training.local_epochs", "%d; must be at least 1", t.LocalEpochs)
	}
	if t.BatchSize < 1 {
		return specErr("training.batch_size", "%d; must be at least 1", t.BatchSize)
	}
	if err := oneOf("training.optimizer", t.Optimizer, optimizerKinds...); err != nil {
		return err
	}
	if !(t.LearningRate > 0) || math.IsInf(t.LearningRate, 0) {
		return specErr("training.lr", "%v; must be positive and finite", t.LearningRate)
	}
	if !(t.Momentum >= 0 && t.Momentum < 1) {
		return specErr("training.momentum", "%v; must be in [0, 1)", t.Momentum)
	}
	if t.Momentum != 0 && t.Optimizer != string(models.SGD) {
		return specErr("training.momentum", "set, but training.optimizer is %q; momentum applies to sgd", t.Optimizer)
	}
	if !(t.WeightDecay >= 0) || math.IsInf(t.WeightDecay, 0) {
		return specErr("training.weight_decay", "%v; must be >= 0 and finite", t.WeightDecay)
	}
	if s := t.Schedule; s != nil {
		if err := oneOf("training.lr_schedule.kind", s.Kind, scheduleKinds...); err != nil {
			return err
		}
		if s.SilentRounds < 0 {
			return specErr("training.lr_schedule.silent_rounds", "%d; must be >= 0", s.SilentRounds)
		}
		if !(s.Rate >= 0 && s.Rate < 1) {
			return specErr("training.lr_schedule.rate", "%v; must be in [0, 1)", s.Rate)
		}
		if s.Kind == "constant" && (s.Rate != 0 || s.SilentRounds != 0) {
			return specErr("training.lr_schedule", "rate and silent_rounds apply to kind exponential")
		}
	}
	if err := oneOf("training.prior", t.Prior, priorModes...); err != nil {
		return err
	}
	if t.VarianceOptimizer != "" {
		if err := oneOf("training.variance_optimizer", t.VarianceOptimizer, string(models.Adam)); err != nil {
			return err
		}
		if t.Optimizer != string(models.SGD) {
			return specErr("training.variance_optimizer", "set, but training.optimizer is %q; a separate optimizer of the variances needs sgd", t.Optimizer)
		}
		if t.Sampler != nil {
			return specErr("training.variance_optimizer", "set, but the clients sample (training.sampler)")
		}
	}
	if !(t.VarianceLR >= 0) || math.IsInf(t.VarianceLR, 0) {
		return specErr("training.variance_lr", "%v; must be >= 0 and finite", t.VarianceLR)
	}
	if t.VarianceLR != 0 && t.VarianceOptimizer == "" {
		return specErr("training.variance_lr", "set without training.variance_optimizer")
	}
	if t.Prior == "previous-global" && c.Model.Kind != models.Bayesian {
		return specErr("training.prior", "previous-global needs a bayesian model, but model.kind is %q", c.Model.Kind)
	}
	if !(t.ProxMu >= 0) || math.IsInf(t.ProxMu, 0) {
		return specErr("training.prox_mu", "%v; must be >= 0 and finite", t.ProxMu)
	}
	return oneOf("training.mode", t.Mode, trainModes...)
}

func validateEvaluation(c *Spec) error {
	e := c.Evaluation
	if e.Every < 1 {
		return specErr("evaluation.every", "%d; must be at least 1", e.Every)
	}
	if e.Samples < 1 {
		return specErr("evaluation.samples", "%d; must be at least 1", e.Samples)
	}
	if !(e.NLLEpsilon >= 0 && e.NLLEpsilon < 1) {
		return specErr("evaluation.nll_epsilon", "%v; must be in [0, 1) (0: floor probabilities at 1e-12 instead)", e.NLLEpsilon)
	}
	if e.Bins < 1 {
		return specErr("evaluation.bins", "%d; must be at least 1", e.Bins)
	}
	if err := oneOf("evaluation.fairness", e.Fairness, fairnessModes...); err != nil {
		return err
	}
	if e.FairnessExamples < 1 {
		return specErr("evaluation.fairness_examples", "%d; must be at least 1", e.FairnessExamples)
	}
	if e.FairnessClients < 0 {
		return specErr("evaluation.fairness_clients", "%d; must be at least 1 (or left out: %d)", e.FairnessClients, DefaultFairnessClients)
	}
	heldOut := c.Partition.HeldOut > 0
	if e.Fairness == "held-out" && !heldOut {
		return specErr("evaluation.fairness", "held-out scores each client on its held-out examples; set partition.held_out, the share of each client's examples to hold out (e.g. 0.2)")
	}
	if heldOut && e.Fairness != "held-out" {
		return specErr("partition.held_out", "set, but evaluation.fairness is %q; only held-out evaluates the held-out examples (leave evaluation.fairness out for it)", e.Fairness)
	}
	return nil
}
