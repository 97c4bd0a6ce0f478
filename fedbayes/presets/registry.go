package presets

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/engine"
	"fedbayes.dev/fedbayes/models"
)

// preset is a named spec at the paper's budget, what it reproduces, and how it is cut to the reduced
// budget (at most 30 minutes on 2 CPU cores) registered as NAME-reduced.
type preset struct {
	about   string
	full    func() *engine.Spec
	reduced func(*engine.Spec) *engine.Spec // nil: no reduced form
}

// ReducedSuffix ends the name of a preset's reduced-budget form.
const ReducedSuffix = "-reduced"

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

// variant builds a Variant from alternating JSON paths and values (engine.NewVariant); the presets
// give constants, so an error is a bug in this package.
func variant(label string, pathValues ...any) engine.Variant {
	v, err := engine.NewVariant(label, pathValues...)
	if err != nil {
		panic(err) // constants only
	}
	return v
}

// reduce cuts a spec to a reduced budget: train/test examples kept, rounds, local epochs and seeds;
// evaluation every `every` rounds (after the last round only when every <= 0). The Budget sentence
// states the cut and the paper's budget.
func reduce(s *engine.Spec, train, test, rounds, epochs int, seeds []int64, every int) *engine.Spec {
	return cutBudget(s, "reduced", ReducedSuffix, train, test, rounds, epochs, seeds, every, func(n int) string { return fmt.Sprint(n) })
}

// cutBudget is reduce and medium: it names the cut spec NAME+suffix, keeps train/test examples (0:
// all; count formats the number), rounds, local epochs, seeds (copied) and evaluation every `every`
// rounds (after the last round only when every <= 0 or beyond the last), halves a schedule's silent
// period if it is longer than half the rounds, and states the cut beside the paper's budget.
func cutBudget(s *engine.Spec, label, suffix string, train, test, rounds, epochs int, seeds []int64, every int, count func(int) string) *engine.Spec {
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

// varianceOptimizer is the optimizer of the variance parameters in the paper presets' text mode
// (training.variance_optimizer): Adam, under which the variances of the papers' nets move within the
// medium budget, while SGD at the papers' rates leaves them at their initial value (docs/models.md).
const varianceOptimizer = string(models.Adam)

// presets maps preset names to presets; init fills in the paper presets.
var presets = map[string]preset{
	"quick-digits": {
		about: "a check of the install (1-2 s on 2 cores): scikit-learn digits, 5 clients, Bayesian MLP, GAA, 3 rounds",
		full: func() *engine.Spec {
			return &engine.Spec{
				Name:        "quick-digits",
				Dataset:     engine.DatasetSpec{Name: "digits"},
				Partition:   engine.PartitionSpec{Method: "iid", Clients: 5},
				Model:       engine.ModelSpec{Arch: models.ArchMLP, Kind: models.Bayesian, Hidden: []int{32}},
				Aggregation: engine.AggregationSpec{Rule: "GAA", Weighting: "size"},
				Training:    engine.TrainingSpec{Rounds: 3, LocalEpochs: 2, BatchSize: 32, Optimizer: "sgd", LearningRate: 0.05, Momentum: 0.9},
				Evaluation:  engine.EvaluationSpec{Samples: 5},
				Seeds:       []int64{0},
			}
		},
	},
}

// addPaperPreset registers a paper preset: full builds the spec at the paper's budget, named name and
// with the budget "full" unless full states its own.
func addPaperPreset(name, about string, full func() *engine.Spec, reduced func(*engine.Spec) *engine.Spec) {
	presets[name] = preset{about: about, reduced: reduced, full: func() *engine.Spec {
		s := full()
		s.Name = name
		if s.Budget == "" {
			s.Budget = "full"
		}
		return s
	}}
}

// Preset returns a copy of the named preset spec: a paper preset at the paper's budget, or with the
// suffix "-reduced" at the reduced budget (under 30 minutes on 2 CPU cores, stated in Spec.Budget).
// PresetNames lists the names.
func Preset(name string) (*engine.Spec, error) {
	if p, ok := presets[name]; ok {
		return p.full(), nil
	}
	if base, ok := strings.CutSuffix(name, ReducedSuffix); ok {
		if p, ok := presets[base]; ok && p.reduced != nil {
			return p.reduced(p.full()), nil
		}
	}
	return nil, fmt.Errorf("presets: unknown preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
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
func Fast(s *engine.Spec) *engine.Spec {
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
