package predictive

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"fedbayes.dev/fedbayes/internal/strictjson"
)

// The methods of the one-round comparison (Hasan (2023), Tables 3.1, 3.2 and 4.2).
const (
	// MethodFedAvg is FedAvg run for one round (FedAvgModel).
	MethodFedAvg = "fedavg"
	// MethodEPMCMC is EP-MCMC with diagonal Gaussians (EPMCMC, Eq. 2.13), predicting with models
	// drawn from the global Gaussian.
	MethodEPMCMC = "ep-mcmc"
	// MethodOneshot is one-shot ensemble distillation (OneshotFL): the clients' logit average
	// distilled on the server set.
	MethodOneshot = "oneshot"
	// MethodFedBE is one round of FedBE (FedBEServer).
	MethodFedBE = "fedbe"
	// MethodBCM is the BCM / product ensemble (Eq. 3.3 or 3.4-3.5).
	MethodBCM = "bcm"
	// MethodDBCM is the BCM distilled into one model (Alg. 1).
	MethodDBCM = "d-bcm"
	// MethodMixture is the mixture ensemble (Eq. 4.5 or 4.6-4.7).
	MethodMixture = "mixture"
	// MethodBeta is beta-PredBayes with beta fitted on the server set (Eqs. 4.8-4.11).
	MethodBeta = "beta-predbayes"
	// MethodDBeta is beta-PredBayes distilled into one model (Alg. 2).
	MethodDBeta = "d-beta-predbayes"
)

// ClassificationMethods lists every method, in the order of the thesis's tables.
var ClassificationMethods = []string{MethodFedAvg, MethodEPMCMC, MethodFedBE, MethodOneshot,
	MethodMixture, MethodBCM, MethodDBCM, MethodBeta, MethodDBeta}

// RegressionMethods lists the methods available for regression (predictive Gaussians).
var RegressionMethods = []string{MethodFedAvg, MethodEPMCMC, MethodMixture, MethodBCM, MethodBeta}

// Spec is a one-round predictive-space experiment: a dataset split into an unlabeled server set and
// K clients with heterogeneity h, every method run once per h and seed. JSON field names are
// snake_case; unknown fields are errors (ParseSpec).
type Spec struct {
	// Name prefixes the settings (results directories NAME-hH-METHOD-seedS); default "predictive".
	Name string `json:"name,omitempty"`
	// Dataset is a data.Load name: fashion-mnist, digits, ... (classification) or diabetes, boston
	// (regression).
	Dataset string `json:"dataset"`
	// DataDir is the data folder; empty means data.Dir().
	DataDir string `json:"data_dir,omitempty"`
	// Subsample keeps this many training examples (seeded, class-stratified); 0 keeps all.
	Subsample int `json:"subsample,omitempty"`
	// TestSubsample keeps this many test examples; 0 keeps all.
	TestSubsample int `json:"test_subsample,omitempty"`
	// ServerFraction is the share of the training set kept as the server set (default 0.2,
	// Hasan (2023), Sec. 3.3).
	ServerFraction float64 `json:"server_fraction,omitempty"`
	// Clients is K (default 5).
	Clients int `json:"clients,omitempty"`
	// H lists the heterogeneity values (default [0, 0.3, 0.6, 0.9] for classification, [1] for
	// regression).
	H []float64 `json:"h,omitempty"`
	// SortFeature names the input feature a regression set is sorted by (default: the first).
	SortFeature string `json:"sort_feature,omitempty"`
	// Hidden are the MLP's hidden widths (default [100], Sec. 3.3.3).
	Hidden []int `json:"hidden,omitempty"`
	// NoiseVar is the initial regression noise variance of the clients (learned; default 0.5 on
	// standardised targets).
	NoiseVar float64 `json:"noise_var,omitempty"`
	// Seeds lists the seeds (default [1, 2, 3]).
	Seeds []int64 `json:"seeds,omitempty"`
	// Methods lists the methods (default: all of the task's).
	Methods []string `json:"methods,omitempty"`
	// Sampler configures the clients' cSGHMC / SGLD (Seed is set per run).
	Sampler SamplerConfig `json:"sampler"`
	// Local configures the clients' training for FedAvg, OneshotFL and FedBE.
	Local LocalConfig `json:"local"`
	// Distill configures the distillation of D-BCM, D-beta-PredBayes and OneshotFL.
	Distill DistillConfig `json:"distill"`
	// FedBE configures FedBE's server (its Local is ignored: FedBE shares Local's clients).
	FedBE FedBEConfig `json:"fedbe"`
	// EPDraws is the number of models drawn from EP-MCMC's global Gaussian (default 10).
	EPDraws int `json:"ep_draws,omitempty"`
	// Beta bounds the fitted beta (default [0, 1]).
	Beta FitOptions `json:"beta"`
	// Budget says whether the spec runs the thesis's budget ("full") or how it was reduced; it is
	// recorded with every run. Empty means unstated.
	Budget string `json:"budget,omitempty"`
}

// ParseSpec reads a JSON spec; unknown fields are errors.
func ParseSpec(b []byte) (Spec, error) { return decodeStrict[Spec](b, "spec") }

// LoadSpec reads a JSON spec file.
func LoadSpec(path string) (Spec, error) { return loadStrict[Spec](path, "spec") }

// decodeStrict decodes JSON into a T, refusing unknown fields; what names the document in errors.
func decodeStrict[T any](b []byte, what string) (T, error) {
	var v T
	// Duplicate keys, NaN/Infinity/1e999 and type errors are refused with path, line and column; a
	// byte-order mark is skipped (the engine's specs share this decoder).
	if err := strictjson.Decode(b, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("predictive: %s: %w", what, err)
	}
	return v, nil
}

// loadStrict reads a JSON file with decodeStrict; errors name the file.
func loadStrict[T any](path, what string) (T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := decodeStrict[T](b, what)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// regressionSets are the data.Load names of regression datasets.
var regressionSets = map[string]bool{"diabetes": true, "boston": true}

// IsRegression reports whether the spec's dataset is a regression set (diabetes, boston or csv:).
func (s Spec) IsRegression() bool {
	return regressionSets[s.Dataset] || strings.HasPrefix(s.Dataset, "csv:")
}

// WithDefaults fills zero fields with their defaults.
func (s Spec) WithDefaults() Spec {
	if s.Name == "" {
		s.Name = "predictive"
	}
	if s.ServerFraction == 0 {
		s.ServerFraction = 0.2
	}
	if s.Clients == 0 {
		s.Clients = 5
	}
	if s.H == nil {
		if s.IsRegression() {
			s.H = []float64{1}
		} else {
			s.H = []float64{0, 0.3, 0.6, 0.9}
		}
	}
	if s.Hidden == nil {
		s.Hidden = []int{100}
	}
	if s.NoiseVar == 0 {
		s.NoiseVar = 0.5
	}
	if s.Seeds == nil {
		s.Seeds = []int64{1, 2, 3}
	}
	if s.Methods == nil {
		if s.IsRegression() {
			s.Methods = append([]string(nil), RegressionMethods...)
		} else {
			s.Methods = append([]string(nil), ClassificationMethods...)
		}
	}
	if s.EPDraws == 0 {
		s.EPDraws = 10
	}
	s.Sampler = s.Sampler.WithDefaults()
	s.Local = s.Local.WithDefaults()
	s.Distill = s.Distill.WithDefaults()
	s.FedBE = s.FedBE.WithDefaults()
	return s
}

// Validate reports the first invalid field by its JSON name.
func (s Spec) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("predictive: spec field %s = %v: %s", field, v, want)
	}
	if s.Dataset == "" {
		return bad("dataset", `""`, "name a dataset (fashion-mnist, digits, diabetes, boston, ...)")
	}
	if !(s.ServerFraction > 0 && s.ServerFraction < 1) {
		return bad("server_fraction", s.ServerFraction, "want in (0, 1)")
	}
	if s.Clients < 2 {
		return bad("clients", s.Clients, "want at least 2")
	}
	if len(s.H) == 0 {
		return bad("h", s.H, "want at least one value")
	}
	for _, h := range s.H {
		if !(h >= 0 && h <= 1) {
			return bad("h", h, "want values in [0, 1]")
		}
	}
	if len(s.Seeds) == 0 {
		return bad("seeds", s.Seeds, "want at least one seed")
	}
	if s.Subsample < 0 || s.TestSubsample < 0 {
		return bad("subsample", s.Subsample, "want non-negative sizes")
	}
	if !(s.NoiseVar > 0) || math.IsInf(s.NoiseVar, 0) {
		return bad("noise_var", s.NoiseVar, "want positive")
	}
	if s.EPDraws < 1 {
		return bad("ep_draws", s.EPDraws, "want at least 1")
	}
	allowed := ClassificationMethods
	if s.IsRegression() {
		allowed = RegressionMethods
	}
	if len(s.Methods) == 0 {
		return bad("methods", s.Methods, "want at least one method")
	}
	seen := map[string]bool{}
	for _, m := range s.Methods {
		if !contains(allowed, m) {
			return bad("methods", m, "want one of "+strings.Join(allowed, ", "))
		}
		if seen[m] {
			return bad("methods", m, "listed twice")
		}
		seen[m] = true
	}
	if err := s.validateSizes(); err != nil {
		return err
	}
	if err := s.Sampler.Validate(); err != nil {
		return fmt.Errorf("sampler: %w", err)
	}
	if _, err := s.Beta.withDefaults(); err != nil {
		return fmt.Errorf("beta: %w", err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Presets are named specs: NAME-fast finishes in minutes on two cores (small subsets, short
// training), NAME-full follows Hasan (2023), Sec. 3.3 and Tables B.2-B.4 (hours on the pure-Go
// backend).
var Presets = map[string]Spec{
	"fmnist-fast": {Name: "fmnist-fast", Budget: "reduced: 3,000 training / 2,000 test examples, 3 seeds, 10 sampler epochs x 3 cycles x 2 samples, 10 local and distillation epochs (thesis: all examples, 5-10 seeds, 25 epochs x 5 cycles x 2 samples, 100 distillation epochs)", Dataset: "fashion-mnist", Subsample: 3000, TestSubsample: 2000, Seeds: []int64{1, 2, 3},
		Sampler: SamplerConfig{Epochs: 10, Cycles: 3, SamplesPerCycle: 2, BatchSize: 32},
		Local:   LocalConfig{Epochs: 10, BatchSize: 32, LearningRate: 0.05},
		Distill: DistillConfig{Epochs: 10, BatchSize: 50, LearningRate: 3e-3},
		FedBE:   FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 10, BatchSize: 50, SWACycles: 2}}},
	"fmnist-medium": {Name: "fmnist-medium", Budget: "medium: 12,000 training / all 10,000 test examples, 3 seeds, 15 sampler epochs x 4 cycles x 2 samples, 15 local and 20 distillation epochs (thesis: all examples, 5-10 seeds, 25 epochs x 5 cycles x 2 samples, 100 distillation epochs)", Dataset: "fashion-mnist", Subsample: 12000, Seeds: []int64{1, 2, 3},
		Sampler: SamplerConfig{Epochs: 15, Cycles: 4, SamplesPerCycle: 2, BatchSize: 32},
		Local:   LocalConfig{Epochs: 15, BatchSize: 32, LearningRate: 0.05},
		Distill: DistillConfig{Epochs: 20, BatchSize: 50, LearningRate: 3e-3},
		FedBE:   FedBEConfig{Samples: 10, Distill: DistillConfig{Epochs: 20, BatchSize: 50, SWACycles: 2}}},
	"fmnist-full": {Name: "fmnist-full", Budget: "full (Hasan (2023), Sec. 3.3 and Tables B.2-B.4)", Dataset: "fashion-mnist", Seeds: []int64{1, 2, 3, 4, 5},
		Sampler: SamplerConfig{Epochs: 25, Cycles: 5, SamplesPerCycle: 2},
		Local:   LocalConfig{Epochs: 25},
		Distill: DistillConfig{Epochs: 50},
		FedBE:   FedBEConfig{Distill: DistillConfig{Epochs: 50}}},
	"digits-fast": {Name: "digits-fast", Budget: "reduced: scikit-learn digits, 2 seeds, 32 hidden units, 20 epochs", Dataset: "digits", Seeds: []int64{1, 2}, Hidden: []int{32},
		Sampler: SamplerConfig{Epochs: 20, Cycles: 4, SamplesPerCycle: 1, BatchSize: 32, LearningRate: 0.2},
		Local:   LocalConfig{Epochs: 20, BatchSize: 32, LearningRate: 0.05},
		Distill: DistillConfig{Epochs: 20, BatchSize: 32, LearningRate: 5e-3},
		FedBE:   FedBEConfig{Samples: 5, Distill: DistillConfig{Epochs: 20, BatchSize: 32, SWACycles: 2}}},
	"diabetes-fast": {Name: "diabetes-fast", Budget: "reduced: 3 seeds, 32 hidden units, 40 epochs", Dataset: "diabetes", Seeds: []int64{1, 2, 3}, Hidden: []int{32},
		Sampler: SamplerConfig{Epochs: 40, Cycles: 4, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02},
		Local:   LocalConfig{Epochs: 40, BatchSize: 16}},
	"diabetes-full": {Name: "diabetes-full", Budget: "full (Hasan (2023), Sec. 4.4)", Dataset: "diabetes", Seeds: []int64{1, 2, 3, 4, 5},
		Sampler: SamplerConfig{Epochs: 100, Cycles: 5, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02},
		Local:   LocalConfig{Epochs: 100, BatchSize: 16}},
	"boston-fast": {Name: "boston-fast", Budget: "reduced: 3 seeds, 32 hidden units, 40 epochs", Dataset: "boston", Seeds: []int64{1, 2, 3}, Hidden: []int{32}, SortFeature: "LSTAT",
		Sampler: SamplerConfig{Epochs: 40, Cycles: 4, SamplesPerCycle: 1, BatchSize: 16, LearningRate: 0.02},
		Local:   LocalConfig{Epochs: 40, BatchSize: 16}},
}

// PresetNames lists the presets, sorted.
func PresetNames() []string {
	var out []string
	for n := range Presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Preset returns a copy of the named preset.
func Preset(name string) (Spec, error) {
	s, ok := Presets[name]
	if !ok {
		return Spec{}, fmt.Errorf("predictive: unknown preset %q; presets: %s", name, strings.Join(PresetNames(), ", "))
	}
	return s, nil
}

// Bounds on the spec's size fields: far above the thesis's settings (Hasan (2023), Tables B.2-B.4),
// far below what overflows an int or exhausts memory in one allocation.
const (
	maxSizeClients  = 10_000
	maxSizeWidth    = 1 << 20
	maxSizeLayers   = 1_000
	maxSizeCount    = 1_000_000 // epochs, cycles, samples, draws, rounds
	maxSizeBatch    = 1 << 20
	maxSizeExamples = 1 << 31
	maxSizeSeeds    = 10_000
)

// validateSizes checks every size field against its bound, naming the field.
func (s Spec) validateSizes() error {
	for _, b := range []struct {
		field  string
		v, max int
	}{
		{"clients", s.Clients, maxSizeClients},
		{"subsample", s.Subsample, maxSizeExamples},
		{"test_subsample", s.TestSubsample, maxSizeExamples},
		{"ep_draws", s.EPDraws, maxSizeCount},
		{"seeds", len(s.Seeds), maxSizeSeeds},
		{"hidden (layers)", len(s.Hidden), maxSizeLayers},
		{"sampler.epochs", s.Sampler.Epochs, maxSizeCount},
		{"sampler.cycles", s.Sampler.Cycles, maxSizeCount},
		{"sampler.samples_per_cycle", s.Sampler.SamplesPerCycle, maxSizeCount},
		{"sampler.max_samples", s.Sampler.MaxSamples, maxSizeCount},
		{"sampler.batch_size", s.Sampler.BatchSize, maxSizeBatch},
		{"local.epochs", s.Local.Epochs, maxSizeCount},
		{"local.batch_size", s.Local.BatchSize, maxSizeBatch},
		{"distill.epochs", s.Distill.Epochs, maxSizeCount},
		{"distill.batch_size", s.Distill.BatchSize, maxSizeBatch},
		{"distill.swa_cycles", s.Distill.SWACycles, maxSizeCount},
		{"fedbe.samples", s.FedBE.Samples, maxSizeCount},
		{"fedbe.rounds", s.FedBE.Rounds, maxSizeCount},
		{"fedbe.distill.epochs", s.FedBE.Distill.Epochs, maxSizeCount},
		{"fedbe.distill.batch_size", s.FedBE.Distill.BatchSize, maxSizeBatch},
	} {
		if b.v > b.max {
			return fmt.Errorf("predictive: spec field %s = %d: too large; at most %d", b.field, b.v, b.max)
		}
	}
	for i, w := range s.Hidden {
		if w < 1 || w > maxSizeWidth {
			return fmt.Errorf("predictive: spec field hidden[%d] = %d: want a width in [1, %d]", i, w, maxSizeWidth)
		}
	}
	return nil
}
