package engine

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fedbayes.dev/fedbayes/predictive"
	"fedbayes.dev/fedbayes/report"
	"fedbayes.dev/fedbayes/results"
	"fedbayes.dev/fedbayes/strategy"
)

// lenetStrategiesSpec is the spec of issue 18's acceptance check, at a test's budget: a Bayesian LeNet
// on Fashion-MNIST with a Dirichlet split, a server set, and GAA, FedBE, the BCM and beta-PredBayes on
// the same clients, plus a deterministic FedAvg variant.
func lenetStrategiesSpec() *Spec {
	raw := func(v string) json.RawMessage { return json.RawMessage(v) }
	return &Spec{
		Name:      "lenet-strategies",
		Dataset:   DatasetSpec{Name: "fashion-mnist", Subsample: 500, TestSubsample: 200, ServerFraction: 0.2},
		Partition: PartitionSpec{Method: "dirichlet", Clients: 3, Alpha: 0.5, MinSize: 20},
		// The former default start, log sigma^2 = -10, stated since issue 33 made -6 the default: at this
		// budget (500 images, 2 rounds) FedBE's student distilled from the noisier -6 nets stays at 0.185,
		// under the 0.2 this test asks; the test checks that the strategies run side by side.
		Model:       ModelSpec{Arch: "lenet", Kind: "bayesian", InitLogVar: -10},
		Aggregation: AggregationSpec{Rule: "GAA", Options: optionsJSON(strategy.FedBEOptions{Samples: 2})},
		Training:    TrainingSpec{Rounds: 2, LocalEpochs: 1, BatchSize: 32, LearningRate: 0.05, Momentum: 0.9},
		Evaluation:  EvaluationSpec{Samples: 2, FairnessExamples: 20},
		Seeds:       []int64{1},
		Variants: []Variant{
			{Label: "GAA", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"GAA"`), "aggregation.options": raw(`null`)}},
			{Label: "FedBE", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"fedbe-gaussian"`), "model.bayesian_layers": raw(`3`),
				"aggregation.options.distill": raw(`{"epochs": 2, "batch_size": 32, "swa_cycles": 2}`)}},
			{Label: "BCM", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"bcm"`), "aggregation.options": raw(`null`)}},
			{Label: "beta", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"beta-predbayes"`), "aggregation.options": raw(`null`)}},
			{Label: "FedAvg", Set: map[string]json.RawMessage{"aggregation.rule": raw(`"FedAvg"`), "model": raw(`{"arch": "lenet", "kind": "deterministic"}`), "aggregation.options": raw(`null`)}},
		},
	}
}

// TestStrategiesOnLeNet runs FedBE, the BCM and beta-PredBayes on a Bayesian LeNet with a Dirichlet
// split beside GAA and FedAvg on the same clients, and checks that one table holds them all.
func TestStrategiesOnLeNet(t *testing.T) {
	requireFashionMNIST(t)
	dir := t.TempDir()
	sum := runQuiet(t, lenetStrategiesSpec(), dir, false)
	if len(sum.Runs) != 5 {
		t.Fatalf("%d runs, want 5", len(sum.Runs))
	}
	for _, r := range sum.Runs {
		if r.State != results.Completed {
			t.Fatalf("%s: %s (%s)", r.Setting, r.State, r.Reason)
		}
		acc := r.Metrics[results.Accuracy]
		if !(acc > 0.2) {
			t.Errorf("%s: accuracy %v, not above chance (0.1)", r.Setting, acc)
		}
		_, hasSpread := r.Metrics[results.Spread]
		predictiveSpace := strings.HasSuffix(r.Setting, "BCM") || strings.HasSuffix(r.Setting, "beta")
		if hasSpread == predictiveSpace && !strings.HasSuffix(r.Setting, "FedAvg") {
			t.Errorf("%s: spread recorded %v; want it for one Gaussian global model only", r.Setting, hasSpread)
		}
		if strings.HasSuffix(r.Setting, "beta") {
			if b, ok := r.Metrics[strategy.MetricBeta]; !ok || b < 0 || b > 1 || math.IsNaN(b) {
				t.Errorf("beta-PredBayes recorded beta %v (present %v)", b, ok)
			}
		}
	}
	runs, _, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := report.NewTable(runs, report.TableSpec{Rows: []string{"rule"}, Metrics: []report.Column{
		{Metric: results.Accuracy, Direction: results.HigherIsBetter}, {Metric: results.NLL, Direction: results.LowerIsBetter}}})
	if err != nil {
		t.Fatal(err)
	}
	md := tab.Markdown()
	t.Logf("one table for every strategy:\n%s", md)
	for _, rule := range []string{"GAA", "fedbe-gaussian", "bcm", "beta-predbayes", "FedAvg"} {
		if !strings.Contains(md, rule) {
			t.Errorf("the table has no row %s:\n%s", rule, md)
		}
	}
}

// TestStrategySpecErrors checks that a strategy's needs are refused with the field that lacks them.
func TestStrategySpecErrors(t *testing.T) {
	checkSpecErrors(t, digitsSpec, []specErrorCase{
		{"fedbe without server set", func(s *Spec) { s.Aggregation.Rule = "fedbe-gaussian" }, "dataset.server_fraction"},
		{"beta without server set", func(s *Spec) { s.Aggregation.Rule = "beta-predbayes" }, "dataset.server_fraction"},
		{"options on a rule", func(s *Spec) { s.Aggregation.Options = optionsJSON(strategy.FedBEOptions{Samples: 3}) }, "aggregation.options"},
		{"negative samples", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction, s.Aggregation.Options = "fedbe-dirichlet", 0.2, optionsJSON(strategy.FedBEOptions{Samples: -1})
		}, "aggregation.options.samples"},
		{"unknown option", func(s *Spec) {
			s.Aggregation.Rule, s.Dataset.ServerFraction, s.Aggregation.Options = "fedbe-gaussian", 0.2, json.RawMessage(`{"sample": 3}`)
		}, "aggregation.options.sample"},
		{"options not JSON", func(s *Spec) { s.Aggregation.Options = json.RawMessage(`{"samples": `) }, "aggregation.options"},
		{"population on bcm", func(s *Spec) { s.Aggregation.Rule, s.Aggregation.Population = "bcm", 10 }, "aggregation.population"},
		{"unknown strategy", func(s *Spec) { s.Aggregation.Rule = "krum" }, "aggregation.rule"},
	})
}

// meanOfMeans is a strategy defined outside package strategy, as a notebook would: the plain mean of
// the clients' means and log-variances.
type meanOfMeans struct{}

func (meanOfMeans) Aggregate(r *strategy.Round) (*strategy.Global, error) {
	g, err := strategy.PerElement(r, func(m, lv []float64) (float64, float64) {
		a, b := 0.0, 0.0
		for k := range m {
			a += m[k] / float64(len(m))
			b += lv[k] / float64(len(m))
		}
		return a, b
	})
	return &strategy.Global{Posterior: g}, err
}

// TestRegisteredStrategyRuns runs a strategy registered from outside through the engine; on these
// clients it must give the global model of the built-in AALV rule with equal weights (the same
// formula, Ozer et al. (2022), Eq. 6) up to float32 rounding.
func TestRegisteredStrategyRuns(t *testing.T) {
	requireDigits(t)
	if err := strategy.Register("mean-of-means", func(strategy.Settings) (strategy.Strategy, error) { return meanOfMeans{}, nil }); err != nil {
		t.Fatal(err)
	}
	got, want := digitsSpec(), digitsSpec()
	got.Aggregation.Rule, got.Aggregation.Weighting = "mean-of-means", "equal"
	want.Aggregation.Rule, want.Aggregation.Weighting = "AALV", "equal"
	got.Training.Rounds, want.Training.Rounds = 1, 1
	dg, dw := t.TempDir(), t.TempDir()
	sg, sw := runQuiet(t, got, dg, false), runQuiet(t, want, dw, false)
	g := finalGlobal(t, filepath.Join(dg, results.RunName(sg.Runs[0].Setting, 3)))
	w := finalGlobal(t, filepath.Join(dw, results.RunName(sw.Runs[0].Setting, 3)))
	if d := maxAbsDiff(t, g, w); d > 1e-5 {
		t.Errorf("the registered mean differs from AALV by %v", d)
	}
	if sg.Runs[0].Labels["rule"] != "mean-of-means" {
		t.Errorf("rule label %q", sg.Runs[0].Labels["rule"])
	}
}

// TestSweepValues checks the sweep helper the notebooks use: values become JSON, and the sweep expands
// to one setting per value.
func TestSweepValues(t *testing.T) {
	s := digitsSpec()
	if err := SweepValues(s, "aggregation.rule", []string{"GAA", "AALV"}); err != nil {
		t.Fatal(err)
	}
	if err := SweepValues(s, "training.lr", []float64{0.1, 0.01}); err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if len(settings) != 4 || settings[0].Spec.Aggregation.Rule != "AALV" && settings[0].Spec.Aggregation.Rule != "GAA" {
		t.Fatalf("%d settings, first rule %q", len(settings), settings[0].Spec.Aggregation.Rule)
	}
	if err := SweepValues(s, "aggregation.rule", []string{}); err == nil {
		t.Error("an empty sweep was accepted")
	}
	if err := SweepValues(s, "aggregation.nope", []int{1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Expand(); err == nil {
		t.Error("a sweep of an unknown field expanded")
	}
}

// TestSamplingClients runs SG-MCMC local training (cSGHMC, Hasan (2023), Sec. 3.3.4) with the
// strategies that use the samples (EP-MCMC, BCM, mixture) and a rule that sees the sample means
// (FedAvg), and checks the refusals of a sampler on the wrong model or a sampling strategy without one.
func TestSamplingClients(t *testing.T) {
	requireDigits(t)
	s := digitsSpec()
	s.Model.Kind, s.Model.Hidden = "deterministic", []int{32}
	s.Training.Rounds = 2
	s.Training.Sampler = &predictive.SamplerConfig{Epochs: 6, Cycles: 2, SamplesPerCycle: 2, LearningRate: 0.1, BatchSize: 32}
	if err := SweepValues(s, "aggregation.rule", []string{"ep-mcmc", "fedpa", "bcm", "mixture", "FedAvg"}); err != nil {
		t.Fatal(err)
	}
	s.Aggregation.Weighting = "size"
	dir := t.TempDir()
	sum := runQuiet(t, s, dir, false)
	requireLearned(t, sum, 0.3)
	for _, r := range sum.Runs {
		if _, ok := r.Metrics["loss"]; ok {
			t.Errorf("%s: a loss recorded for sampling clients", r.Setting)
		}
	}
	// Same seed, same result: the sampler's noise is seeded by (seed, round).
	requireRepeats(t, s, sum)
	for _, tc := range []struct {
		name   string
		modify func(s *Spec)
		path   string
	}{
		{"sampler on a Bayesian net", func(s *Spec) { s.Training.Sampler = &predictive.SamplerConfig{} }, "training.sampler"},
		{"ep-mcmc without a sampler", func(s *Spec) { s.Model.Kind, s.Aggregation.Rule = "deterministic", "ep-mcmc" }, "training.sampler"},
		{"bad sampler field", func(s *Spec) {
			s.Model.Kind, s.Aggregation.Rule = "deterministic", "FedAvg"
			s.Training.Sampler = &predictive.SamplerConfig{Friction: 2}
		}, "training.sampler"},
	} {
		c := digitsSpec()
		tc.modify(c)
		if se, ok := c.Validate().(*SpecError); !ok || se.Path != tc.path {
			t.Errorf("%s: %v, want a SpecError at %s", tc.name, c.Validate(), tc.path)
		}
	}
}

// optionsJSON marshals a strategy's options struct into a spec's aggregation.options.
func optionsJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// scaledMean is a strategy defined outside package strategy with an option of its own, as a
// notebook cell would define it (docs/strategies.md): the clients' mean times options.scale.
type scaledMean struct{ scale float64 }

func (m scaledMean) Aggregate(r *strategy.Round) (*strategy.Global, error) {
	g, err := strategy.PerElement(r, func(means, lv []float64) (float64, float64) {
		a := 0.0
		for _, x := range means {
			a += x / float64(len(means))
		}
		return m.scale * a, lv[0]
	})
	return &strategy.Global{Posterior: g}, err
}

// registerScaledMean registers scaledMean: its factory decodes {"scale": x} (default 1) and
// refuses a scale that is not positive.
func registerScaledMean(t *testing.T) {
	t.Helper()
	err := strategy.Register("scaled-mean", func(s strategy.Settings) (strategy.Strategy, error) {
		opts := struct {
			Scale float64 `json:"scale"`
		}{Scale: 1}
		if err := strategy.DecodeOptions(s, &opts); err != nil {
			return nil, err
		}
		if !(opts.Scale > 0) {
			return nil, &strategy.FieldError{Field: "aggregation.options.scale", Problem: "must be positive"}
		}
		return scaledMean{opts.Scale}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOptionsSweep checks that aggregation.options.NAME is swept and set by variants like any other
// field, merged into the options the spec gives, and reaches the strategy's factory: a registered
// strategy's own option and a built-in's nested one.
func TestOptionsSweep(t *testing.T) {
	registerScaledMean(t)
	s := digitsSpec()
	s.Aggregation.Rule = "scaled-mean"
	if err := SweepValues(s, "aggregation.options.scale", []float64{0.5, 2}); err != nil {
		t.Fatal(err)
	}
	settings, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var scales []float64
	for _, st := range settings {
		built, err := newStrategy(st.Spec)
		if err != nil {
			t.Fatal(err)
		}
		scales = append(scales, built.(scaledMean).scale)
		if st.Labels["scale"] == "" {
			t.Errorf("%s: no scale label: %v", st.Name, st.Labels)
		}
	}
	if !slices.Equal(scales, []float64{0.5, 2}) {
		t.Fatalf("the strategies got scales %v, want [0.5 2]", scales)
	}
	s.Sweep["aggregation.options.scale"] = []json.RawMessage{raw(-1)}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "aggregation.options.scale") {
		t.Fatalf("a negative swept scale: %v; want a refusal naming aggregation.options.scale", err)
	}
	s.Sweep = map[string][]json.RawMessage{"aggregation.options.scal": {raw(1)}}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "aggregation.options.scal: unknown option") {
		t.Fatalf("a misspelt option: %v; want an unknown option aggregation.options.scal", err)
	}

	// A built-in's nested option, swept over the spec's options and set by a variant.
	f := digitsSpec()
	f.Dataset.ServerFraction = 0.2
	f.Aggregation.Rule = "fedbe-gaussian"
	f.Aggregation.Options = json.RawMessage(`{"samples": 3, "distill": {"batch_size": 16, "swa_cycles": 1}}`)
	f.Sweep = map[string][]json.RawMessage{"aggregation.options.distill.epochs": {raw(1), raw(2)}}
	f.Variants = []Variant{
		{Label: "a", Set: map[string]json.RawMessage{"aggregation.options.alpha": raw(1)}},
		{Label: "b", Set: map[string]json.RawMessage{"aggregation.options.samples": raw(5)}},
	}
	settings, err = f.Expand()
	if err != nil {
		t.Fatal(err)
	}
	var got []strategy.FedBEOptions
	for _, st := range settings {
		var o strategy.FedBEOptions
		if err := json.Unmarshal(st.Spec.Aggregation.Options, &o); err != nil {
			t.Fatal(err)
		}
		got = append(got, o)
	}
	d := func(epochs int) predictive.DistillConfig {
		return predictive.DistillConfig{BatchSize: 16, SWACycles: 1, Epochs: epochs}
	}
	want := []strategy.FedBEOptions{{Samples: 3, Alpha: 1, Distill: d(1)}, {Samples: 3, Alpha: 1, Distill: d(2)}, {Samples: 5, Distill: d(1)}, {Samples: 5, Distill: d(2)}}
	if !slices.Equal(got, want) {
		t.Fatalf("options %+v\nwant %+v", got, want)
	}

	// Options that are not an object are refused, not replaced, when a path goes below them.
	for _, tc := range []struct {
		name string
		set  func(*Spec)
		path string
	}{
		{"sweep", func(s *Spec) {
			s.Sweep = map[string][]json.RawMessage{"aggregation.options.samples": {raw(3)}}
		}, "sweep.aggregation.options.samples"},
		{"variant", func(s *Spec) {
			s.Variants = []Variant{{Label: "a", Set: map[string]json.RawMessage{"aggregation.options.samples": raw(3)}}}
		}, "variants[0].set.aggregation.options.samples"},
	} {
		t.Run("non-object options under a "+tc.name, func(t *testing.T) {
			n := digitsSpec()
			n.Dataset.ServerFraction = 0.2
			n.Aggregation.Rule = "fedbe-gaussian"
			n.Aggregation.Options = json.RawMessage(`5`)
			tc.set(n)
			_, err := n.Expand()
			var se *SpecError
			if !errors.As(err, &se) || se.Path != tc.path || !strings.Contains(err.Error(), "aggregation.options holds a number, not an object") {
				t.Fatalf("error %v; want a *SpecError at %s saying the options are a number", err, tc.path)
			}
		})
	}
}
